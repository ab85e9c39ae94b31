"""`gen kueue`: ResourceFlavor, ClusterQueue with GPU quota, LocalQueue, and a TAS Topology.

Follows Kueue v1beta2 (kueue.x-k8s.io, CRDs at commit 01ed66fd): a ClusterQueue must cover every
resource its workloads request, and topology levels use the node labels each cloud really sets.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubegpu.errors import InputError
from kubegpu.generate.output import Generated, Note, OutFile, YamlDoc
from kubegpu.topology.model import NodeTopology
from kubegpu.units.quantity import parse_quantity

API_VERSION = "kueue.x-k8s.io/v1beta2"
HOSTNAME = "kubernetes.io/hostname"


@dataclass(frozen=True)
class TopologyPreset:
    """The node labels one environment sets, coarsest first, and where that is documented."""

    levels: tuple[str, ...]
    why: str


TOPOLOGIES: Mapping[str, TopologyPreset] = {
    "gke": TopologyPreset(
        (
            "cloud.google.com/gce-topology-block",
            "cloud.google.com/gce-topology-subblock",
            "cloud.google.com/gce-topology-host",
            HOSTNAME,
        ),
        "GKE sets block, sub-block and host labels on reserved GPU VMs (A3/A4 and A4X, where\n"
        "a sub-block is one NVL72 rack), as in Google's TAS-with-Kueue guide.",
    ),
    "eks": TopologyPreset(
        (
            "topology.k8s.aws/network-node-layer-1",
            "topology.k8s.aws/network-node-layer-2",
            "topology.k8s.aws/network-node-layer-3",
            HOSTNAME,
        ),
        "EKS labels GPU instances with their EC2 instance-topology network nodes, layer 1 the\n"
        "top (spine) and layer 3 the switch the instance hangs off.",
    ),
    "aks": TopologyPreset(
        ("ib/torset", HOSTNAME),
        "AKS sets no fabric labels itself: ib/torset comes from the torset labeler in\n"
        "Azure/ai-infrastructure-on-azure (nodes sharing an InfiniBand leaf switch).",
    ),
    "nvl72": TopologyPreset(
        ("nvidia.com/gpu.clique", HOSTNAME),
        "GPU Feature Discovery labels every node with its NVLink clique\n"
        "(<cluster UUID>.<clique id>): nodes with one value share one NVL72 NVLink domain.",
    ),
}

_LABEL_RE = re.compile(
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
    r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$"
)
_NAME_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


@dataclass(frozen=True)
class KueueOptions:
    """What `gen kueue` was asked for."""

    gpus_per_node: int
    nodes: int
    cpus_per_node: str
    memory_per_node: str
    topology: str | None = None
    gpu_resource: str = "nvidia.com/gpu"
    flavor: str = "gpu"
    cluster_queue: str = "gpu-cluster-queue"
    local_queue: str = "gpu-queue"
    namespace: str = "default"
    node_labels: Mapping[str, str] = field(default_factory=lambda: {"nvidia.com/gpu.present": "true"})
    gpu_taint: str | None = "nvidia.com/gpu"


def topology_levels(spec: str) -> tuple[tuple[str, ...], str]:
    """Levels for a preset name or a comma-separated label list, with the reason to show."""
    preset = TOPOLOGIES.get(spec.lower())
    if preset is not None:
        return preset.levels, preset.why
    levels = tuple(part.strip() for part in spec.split(",") if part.strip())
    if not levels:
        raise InputError("--topology needs gke, eks, aks, nvl72 or a comma-separated label list")
    for label in levels:
        if len(label) > 316 or not _LABEL_RE.match(label):
            raise InputError(f"--topology: {label!r} is not a valid node label key")
    if len(set(levels)) != len(levels):
        raise InputError("--topology: each level must be a different label")
    if len(levels) > 16:
        raise InputError("--topology: Kueue allows at most 16 levels")
    if HOSTNAME in levels[:-1]:
        raise InputError(f"--topology: {HOSTNAME} can only be the last (lowest) level")
    return levels, "Levels given on the command line, coarsest first."


def _check(options: KueueOptions) -> tuple[int, int]:
    if options.gpus_per_node < 1 or options.nodes < 1:
        raise InputError("--gpus-per-node and --nodes must be at least 1")
    for flag, value in (
        ("--flavor", options.flavor),
        ("--cluster-queue", options.cluster_queue),
        ("--local-queue", options.local_queue),
    ):
        if len(value) > 253 or not _NAME_RE.match(value):
            raise InputError(f"{flag}: {value!r} is not a valid object name")
    try:
        cpu = parse_quantity(options.cpus_per_node).millis
        memory = parse_quantity(options.memory_per_node).ceil
    except InputError as err:
        raise InputError(f"--cpus-per-node/--memory-per-node: {err}") from err
    if cpu <= 0 or memory <= 0:
        raise InputError("--cpus-per-node and --memory-per-node must be positive")
    if len(options.node_labels) > 8:
        raise InputError("a ResourceFlavor takes at most 8 node labels")
    return cpu, memory


def _cpu_text(millis: int) -> str:
    return str(millis // 1000) if millis % 1000 == 0 else f"{millis}m"


def generate(options: KueueOptions) -> Generated:
    """The four (three without --topology) Kueue objects, explained."""
    cpu_per_node, mem_per_node = _check(options)
    docs: list[YamlDoc] = []
    topology_name = None
    if options.topology:
        levels, why = topology_levels(options.topology)
        topology_name = f"{options.flavor}-topology"
        docs.append(
            YamlDoc(
                {
                    "apiVersion": API_VERSION,
                    "kind": "Topology",
                    "metadata": {"name": topology_name},
                    "spec": {"levels": [{"nodeLabel": label} for label in levels]},
                },
                header=("Topology for topology-aware scheduling (TAS): coarsest level first.",),
                notes=(
                    Note(("spec", "levels"), why),
                    *(
                        [
                            Note(
                                ("spec", "levels", len(levels) - 1),
                                "kubernetes.io/hostname last: TAS assigns pods to nodes and checks "
                                "taints and selectors.",
                            )
                        ]
                        if levels[-1] == HOSTNAME
                        else []
                    ),
                ),
            )
        )
    docs.append(_flavor(options, topology_name))
    docs.append(_cluster_queue(options, cpu_per_node, mem_per_node))
    docs.append(
        YamlDoc(
            {
                "apiVersion": API_VERSION,
                "kind": "LocalQueue",
                "metadata": {"name": options.local_queue, "namespace": options.namespace},
                "spec": {"clusterQueue": options.cluster_queue},
            },
            header=(
                f"Jobs in namespace {options.namespace} join with the label "
                f"kueue.x-k8s.io/queue-name: {options.local_queue}.",
            ),
        )
    )
    header = (
        f"Kueue objects ({API_VERSION}) for {options.nodes} nodes x {options.gpus_per_node} GPUs.",
        "Kueue admits a whole workload (every PodSet) or none of it: gang admission on quota.",
    )
    return Generated((OutFile("kueue.yaml", tuple(docs), header=header),))


def _flavor(options: KueueOptions, topology_name: str | None) -> YamlDoc:
    spec: dict[str, Any] = {"nodeLabels": dict(options.node_labels)}
    notes = [
        Note(
            ("spec", "nodeLabels"),
            "Admitted pods get these labels as a nodeSelector: quota in this flavor is only good\n"
            "on nodes that carry them (nvidia.com/gpu.present is set by GPU Feature Discovery).",
        )
    ]
    if options.gpu_taint:
        spec["tolerations"] = [{"key": options.gpu_taint, "operator": "Exists", "effect": "NoSchedule"}]
        notes.append(
            Note(
                ("spec", "tolerations"),
                f"GPU nodes are usually tainted {options.gpu_taint}:NoSchedule; Kueue adds this\n"
                "toleration to the pods it admits so they can land there.",
            )
        )
    if topology_name:
        spec["topologyName"] = topology_name
        notes.append(
            Note(
                ("spec", "topologyName"),
                "Makes this a TAS flavor. The spec becomes immutable; Kueue requires a node label.",
            )
        )
    return YamlDoc(
        {
            "apiVersion": API_VERSION,
            "kind": "ResourceFlavor",
            "metadata": {"name": options.flavor},
            "spec": spec,
        },
        notes=tuple(notes),
    )


def _cluster_queue(options: KueueOptions, cpu_per_node: int, mem_per_node: int) -> YamlDoc:
    gpus = options.gpus_per_node * options.nodes
    cpu = _cpu_text(cpu_per_node * options.nodes)
    memory = _binary(mem_per_node * options.nodes) or str(mem_per_node * options.nodes)
    covered = ["cpu", "memory", options.gpu_resource]
    obj = {
        "apiVersion": API_VERSION,
        "kind": "ClusterQueue",
        "metadata": {"name": options.cluster_queue},
        "spec": {
            "namespaceSelector": {},
            "queueingStrategy": "BestEffortFIFO",
            "resourceGroups": [
                {
                    "coveredResources": covered,
                    "flavors": [
                        {
                            "name": options.flavor,
                            "resources": [
                                {"name": "cpu", "nominalQuota": cpu},
                                {"name": "memory", "nominalQuota": memory},
                                {"name": options.gpu_resource, "nominalQuota": gpus},
                            ],
                        }
                    ],
                }
            ],
        },
    }
    group = ("spec", "resourceGroups", 0)
    notes = (
        Note(("spec", "namespaceSelector"), "{} admits LocalQueues from every namespace."),
        Note(
            ("spec", "queueingStrategy"),
            "BestEffortFIFO: a head job that does not fit does not block smaller ones behind it.",
        ),
        Note(
            (*group, "coveredResources"),
            'cpu and memory are covered too: Kueue leaves a workload pending ("resource cpu\n'
            'unavailable in ClusterQueue") when it requests anything the queue does not cover.',
        ),
        Note(
            (*group, "flavors", 0, "resources", 2, "nominalQuota"),
            f"{options.nodes} nodes x {options.gpus_per_node} GPUs = {gpus}.",
        ),
        Note(
            (*group, "flavors", 0, "resources", 0, "nominalQuota"),
            f"{options.nodes} x {_cpu_text(cpu_per_node)} CPUs per node: what the nodes give pods\n"
            "(their allocatable; DaemonSet pods take part of it outside Kueue's accounting).",
        ),
    )
    return YamlDoc(obj, notes=notes)


def _binary(value: int) -> str | None:
    for suffix, size in (("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
        if value % size == 0:
            return f"{value // size}{suffix}"
    return None


def sizes_from_node(node: NodeTopology) -> tuple[int, str, str]:
    """GPUs, CPUs and memory per node that pods can use, for a node configured by `gen kubelet`.

    The allocatable CPU and memory come from the kubelet model started with the configuration
    `gen kubelet` generates for this node (capacity minus reserved CPUs and memory reservation),
    so the queue's quota and the nodes' configuration agree.
    """
    from kubegpu.generate.kubelet import KubeletOptions, plan
    from kubegpu.kubelet import KubeletConfig, NodeState

    chosen = plan(node, KubeletOptions())
    state = NodeState(node, KubeletConfig.from_dict(chosen.config, source="gen kubelet"))
    cpu = state.allocatable["cpu"]
    memory = state.allocatable["memory"]
    return len(node.gpus), _cpu_text(cpu), _binary(memory) or str(memory)


def levels_of(docs: Sequence[YamlDoc]) -> list[str]:
    """The node labels of the Topology among `docs` (empty when there is none)."""
    for doc in docs:
        if doc.kind == "Topology":
            return [level["nodeLabel"] for level in doc.obj["spec"]["levels"]]
    return []
