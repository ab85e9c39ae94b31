"""The hardware of a snapshot's node as far as the API shows it, for the kubelet model (`NodeState`).

NUMA nodes, their CPUs, memory and GPUs come from the node's NodeResourceTopology (topology.node.k8s.io/v1alpha2
zones of type Node, as NFD's topology-updater publishes them); without one, the node is one NUMA node of its
capacity. The API shows no SMT siblings, cache groups or PCI addresses: each CPU is its own core.
"""

from __future__ import annotations

from dataclasses import dataclass

from kubegpu.live.fit import GPU_PRODUCT_LABEL
from kubegpu.live.model import ClusterSnapshot, NodeInfo, NRTZone
from kubegpu.manifests.accelerators import DEFAULT_REGISTRY, AcceleratorRegistry
from kubegpu.topology.model import CPUInfo, GPUDevice, NodeTopology, NUMANode

MAX_CPUS = 4096  # a node reporting more logical CPUs than this is not modelled (the kubelet's own sanity range)
MAX_GPUS = 64


@dataclass(frozen=True)
class Hardware:
    """A node's modelled hardware and what had to be assumed (empty when the NRT told everything it can)."""

    topology: NodeTopology
    assumed: tuple[str, ...]


def _zones(snapshot: ClusterSnapshot, node: NodeInfo) -> tuple[NRTZone, ...]:
    nrt = snapshot.nrt(node.name)
    if nrt is None:
        return ()
    zones = tuple(z for z in nrt.zones if z.type == "Node" and z.numa_id is not None and "cpu" in z.resources)
    return tuple(sorted(zones, key=lambda z: z.numa_id or 0))


def node_hardware(
    snapshot: ClusterSnapshot, node: NodeInfo, registry: AcceleratorRegistry = DEFAULT_REGISTRY
) -> Hardware | None:
    """The node's NUMA layout, CPUs and GPUs; None when its capacity is beyond the model (no CPUs, or more
    CPUs or GPUs than any server has)."""
    resources = node.accelerator_resources(registry)
    resource = resources[0] if resources else "nvidia.com/gpu"
    model = node.labels.get(GPU_PRODUCT_LABEL, "")
    zones = _zones(snapshot, node)
    assumed = ["each CPU is its own core (the API shows no SMT siblings)"]
    layout: list[tuple[int, int, int, int]] = []  # (numa id, cpus, memory bytes, gpus)
    costs: dict[int, dict[int, int]] = {}  # the zones' costs: NUMA distances
    if zones:
        by_name = {z.name: z.numa_id for z in zones}
        for zone in zones:
            numa = zone.numa_id or 0
            layout.append(
                (
                    numa,
                    zone.resources["cpu"].capacity // 1000,
                    zone.resources["memory"].capacity if "memory" in zone.resources else 0,
                    zone.resources[resource].capacity if resource in zone.resources else 0,
                )
            )
            costs[numa] = {}
            for other, value in zone.costs.items():
                other_id = by_name.get(other)
                if other_id is not None:
                    costs[numa][other_id] = value
    else:
        assumed.append("one NUMA node (no NodeResourceTopology for this node)")
        capacity = node.capacity or node.allocatable
        layout.append((0, capacity.get("cpu", 0) // 1000, capacity.get("memory", 0), capacity.get(resource, 0)))
    if sum(c for _, c, _, _ in layout) <= 0 or sum(c for _, c, _, _ in layout) > MAX_CPUS:
        return None
    if sum(g for _, _, _, g in layout) > MAX_GPUS:
        return None
    cpus: list[CPUInfo] = []
    numa_nodes: list[NUMANode] = []
    gpus: list[GPUDevice] = []
    ids = [numa for numa, _, _, _ in layout]
    for numa, count, memory, gpu_count in layout:
        for _ in range(count):
            cpus.append(CPUInfo(id=len(cpus), core=len(cpus), socket=numa, numa=numa))
        distances = {other: costs.get(numa, {}).get(other, 10 if other == numa else 20) for other in ids}
        numa_nodes.append(NUMANode(id=numa, memory_bytes=memory, distances=distances))
        for _ in range(gpu_count):
            index = len(gpus)
            gpus.append(
                GPUDevice(
                    index=index,
                    pci_bus_id=f"0000:{index:02x}:00.0",
                    numa_node=numa,
                    model=model,
                    resource_name=resource,
                )
            )
    topology = NodeTopology(
        name=node.name,
        cpus=tuple(cpus),
        numa_nodes=tuple(numa_nodes),
        gpus=tuple(gpus),
        description=f"node {node.name} as its API objects show it",
        labels=dict(node.labels),
    )
    return Hardware(topology, tuple(assumed))
