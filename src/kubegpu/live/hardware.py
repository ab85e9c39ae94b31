"""The hardware of a snapshot's node as far as the API shows it, for the kubelet model (`NodeState`).

NUMA nodes, their CPUs, memory and GPUs come from the node's NodeResourceTopology (topology.node.k8s.io/v1alpha2
zones, as NFD's topology-updater publishes them: `nrt_topology`, which `audit --why` and `defrag` both read);
without one, the node is one NUMA node of its capacity. The API shows no SMT siblings, cache groups or PCI
addresses: two threads per core are assumed where NFD labels the node multithreaded, one otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass

from kubegpu.live.fit import GPU_PRODUCT_LABEL
from kubegpu.live.model import ClusterSnapshot, NodeInfo, NodeResourceTopology
from kubegpu.manifests.accelerators import DEFAULT_REGISTRY, AcceleratorRegistry
from kubegpu.topology.model import CPUInfo, GPUDevice, NodeTopology, NUMANode

NFD_SMT_LABEL = "feature.node.kubernetes.io/cpu-hardware_multithreading"
MAX_CPUS = 4096  # a zone claiming more CPUs is not a machine the kubelet model builds
MAX_GPUS = 64
MAX_NUMA_ID = 63  # NUMA ids the model takes (the Topology Manager refuses more than 8 NUMA nodes by default)


@dataclass(frozen=True)
class Hardware:
    """A node's modelled hardware and what had to be assumed (empty when the NRT told everything it can)."""

    topology: NodeTopology
    assumed: tuple[str, ...]


def nrt_topology(
    node: NodeInfo, nrt: NodeResourceTopology, registry: AcceleratorRegistry = DEFAULT_REGISTRY
) -> NodeTopology | None:
    """The node's hardware as its NUMA zones describe it (None when no zone names a NUMA node or a count is out of
    bounds)."""
    zones = sorted((z for z in nrt.zones if z.numa_id is not None), key=lambda z: z.numa_id or 0)
    numa_ids = [z.numa_id or 0 for z in zones]
    if not zones or max(numa_ids) > MAX_NUMA_ID or len(set(numa_ids)) != len(numa_ids):
        return None
    threads = 2 if node.labels.get(NFD_SMT_LABEL) == "true" else 1
    cpus: list[CPUInfo] = []
    numa_nodes: list[NUMANode] = []
    gpus: list[GPUDevice] = []
    ids = {z.name: z.numa_id for z in zones}
    for zone in zones:
        numa = zone.numa_id or 0
        cpu = zone.resources.get("cpu")
        count = (cpu.capacity // 1000) if cpu is not None else 0
        if count < 0 or len(cpus) + count > MAX_CPUS:
            return None
        first = len(cpus)
        for k in range(count - count % threads):
            cpus.append(CPUInfo(id=first + k, core=first + k - k % threads, socket=numa, numa=numa))
        memory = zone.resources.get("memory")
        distances = {ids[name]: cost for name, cost in zone.costs.items() if ids.get(name) is not None}
        numa_nodes.append(
            NUMANode(
                id=numa,
                memory_bytes=memory.capacity if memory is not None else 0,
                distances={k: v for k, v in distances.items() if k is not None},
            )
        )
        for resource, amount in sorted(zone.resources.items()):
            if not registry.is_accelerator(resource):
                continue
            if amount.capacity < 0 or len(gpus) + amount.capacity > MAX_GPUS:
                return None
            for _ in range(amount.capacity):
                gpus.append(
                    GPUDevice(
                        index=len(gpus),
                        pci_bus_id=f"{zone.name}-{len(gpus)}",
                        numa_node=numa,
                        model=node.labels.get(GPU_PRODUCT_LABEL, ""),
                        resource_name=resource,
                    )
                )
    if not cpus:
        return None
    return NodeTopology(
        name=node.name,
        cpus=tuple(cpus),
        numa_nodes=tuple(numa_nodes),
        gpus=tuple(gpus),
        description=f"node {node.name} from its NodeResourceTopology",
        estimates=(f"{threads} thread(s) per core ({NFD_SMT_LABEL})", "one socket per NUMA zone"),
    )


def node_hardware(
    snapshot: ClusterSnapshot, node: NodeInfo, registry: AcceleratorRegistry = DEFAULT_REGISTRY
) -> Hardware | None:
    """The node's NUMA layout, CPUs and GPUs; None when its capacity is beyond the model (no CPUs, or more
    CPUs or GPUs than any server has)."""
    nrt = snapshot.nrt(node.name)
    if nrt is not None:  # its NUMA zones; None when they are beyond the model
        topology = nrt_topology(node, nrt, registry)
        return None if topology is None else Hardware(topology, topology.estimates)
    # no NodeResourceTopology: one NUMA node of the node's capacity
    resources = node.accelerator_resources(registry)
    resource = resources[0] if resources else "nvidia.com/gpu"
    capacity = node.capacity or node.allocatable
    cpu_count = capacity.get("cpu", 0) // 1000
    gpu_count = capacity.get(resource, 0)
    if cpu_count <= 0 or cpu_count > MAX_CPUS or gpu_count > MAX_GPUS:
        return None
    model = node.labels.get(GPU_PRODUCT_LABEL, "")
    topology = NodeTopology(
        name=node.name,
        cpus=tuple(CPUInfo(id=i, core=i, socket=0, numa=0) for i in range(cpu_count)),
        numa_nodes=(NUMANode(id=0, memory_bytes=capacity.get("memory", 0), distances={0: 10}),),
        gpus=tuple(
            GPUDevice(index=i, pci_bus_id=f"0000:{i:02x}:00.0", numa_node=0, model=model, resource_name=resource)
            for i in range(gpu_count)
        ),
        description=f"node {node.name} as its API objects show it",
        labels=dict(node.labels),
    )
    assumed = (
        "each CPU is its own core (the API shows no SMT siblings)",
        "one NUMA node (no NodeResourceTopology for this node)",
    )
    return Hardware(topology, assumed)
