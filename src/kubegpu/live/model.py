"""The cluster snapshot the live audit reads: nodes, pods, NRT zones, Kueue objects, kubelet config.

Fields follow the Kubernetes v1.35 core API, topology.node.k8s.io/v1alpha2 and Kueue v1beta2.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from kubegpu.manifests.accelerators import DEFAULT_REGISTRY, AcceleratorRegistry
from kubegpu.manifests.pod import Pod as PodModel
from kubegpu.scheduler.constraints import NodeAffinity as NodeAffinity
from kubegpu.scheduler.constraints import SelectorRequirement as SelectorRequirement
from kubegpu.scheduler.constraints import Taint as Taint
from kubegpu.scheduler.constraints import Toleration as Toleration
from kubegpu.scheduler.constraints import affinity_matches as affinity_matches

# Node labels naming a node's topology block and rack when no Kueue Topology says otherwise.
DEFAULT_BLOCK_LABEL = "cloud.provider.com/topology-block"
DEFAULT_RACK_LABEL = "cloud.provider.com/topology-rack"

# Resources counted in canonical integer units: cpu in millicores, everything else rounded up
# (memory and storage in bytes, extended resources in units).
ResourceList = Mapping[str, int]


@dataclass(frozen=True)
class NodeInfo:
    """A node as the scheduler sees it: allocatable, capacity, labels, taints and readiness."""

    name: str
    allocatable: ResourceList
    capacity: ResourceList
    labels: Mapping[str, str] = field(default_factory=dict)
    taints: tuple[Taint, ...] = ()
    unschedulable: bool = False
    ready: bool = True

    @property
    def schedulable(self) -> bool:
        """Ready and not cordoned: new pods can land here."""
        return self.ready and not self.unschedulable

    def accelerator_resources(self, registry: AcceleratorRegistry = DEFAULT_REGISTRY) -> tuple[str, ...]:
        """The accelerator resources this node offers (allocatable > 0), sorted."""
        return tuple(sorted(r for r, v in self.allocatable.items() if registry.is_accelerator(r) and v > 0))


@dataclass(frozen=True)
class ContainerInfo:
    """One container's requests and limits (after requests default to limits)."""

    name: str
    requests: ResourceList
    limits: ResourceList
    init: bool = False
    restartable: bool = False


@dataclass(frozen=True)
class PodInfo:
    """A pod: where it runs, its phase, effective requests and placement constraints."""

    namespace: str
    name: str
    phase: str
    node_name: str | None
    requests: ResourceList
    containers: tuple[ContainerInfo, ...] = ()
    qos_class: str = ""
    node_selector: Mapping[str, str] = field(default_factory=dict)
    tolerations: tuple[Toleration, ...] = ()
    node_affinity: NodeAffinity = ()
    labels: Mapping[str, str] = field(default_factory=dict)
    annotations: Mapping[str, str] = field(default_factory=dict)
    scheduling_gated: bool = False
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)
    spec: PodModel | None = field(default=None, compare=False, repr=False)  # the pod model of its spec

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def terminal(self) -> bool:
        """Succeeded or Failed pods hold no resources on their node."""
        return self.phase in ("Succeeded", "Failed")

    @property
    def pending(self) -> bool:
        """Not bound to a node and not finished: demand the cluster has not met."""
        return self.node_name is None and not self.terminal

    def accelerators(self, registry: AcceleratorRegistry = DEFAULT_REGISTRY) -> dict[str, int]:
        """Accelerator resources this pod requests, by name (only those > 0)."""
        return {r: v for r, v in self.requests.items() if registry.is_accelerator(r) and v > 0}


@dataclass(frozen=True)
class ZoneResource:
    """One resource of an NRT zone: capacity, allocatable and currently available."""

    capacity: int
    allocatable: int
    available: int

    @property
    def used(self) -> int:
        return max(0, self.allocatable - self.available)


@dataclass(frozen=True)
class NRTZone:
    """A NodeResourceTopology zone (NFD's topology-updater publishes one per NUMA node)."""

    name: str
    type: str
    resources: Mapping[str, ZoneResource] = field(default_factory=dict)
    parent: str = ""
    costs: Mapping[str, int] = field(default_factory=dict)

    @property
    def numa_id(self) -> int | None:
        """The NUMA id of a `node-N` zone (NFD naming), else None."""
        prefix = "node-"
        if self.name.startswith(prefix) and self.name[len(prefix) :].isdigit():
            return int(self.name[len(prefix) :])
        return None


@dataclass(frozen=True)
class NodeResourceTopology:
    """topology.node.k8s.io/v1alpha2 NodeResourceTopology: per-zone resources of one node."""

    name: str
    zones: tuple[NRTZone, ...]
    attributes: Mapping[str, str] = field(default_factory=dict)
    topology_policies: tuple[str, ...] = ()


@dataclass(frozen=True)
class PodShape:
    """A pod's resource shape for fit checks: accelerators per pod, CPU, memory, constraints."""

    gpu_resource: str
    gpus: int
    cpu_millis: int = 0
    memory_bytes: int = 0
    node_selector: tuple[tuple[str, str], ...] = ()
    tolerations: tuple[Toleration, ...] = ()
    node_affinity: NodeAffinity = ()

    def gpu_models(self, label: str) -> tuple[str, ...]:
        """GPU models the pod accepts: its nodeSelector value for `label`, else the union of the
        `In` values for `label` when every affinity term has one; () means any model."""
        for key, value in self.node_selector:
            if key == label:
                return (value,)
        models: set[str] = set()
        for term in self.node_affinity:
            values = [r.values for r in term if r.key == label and r.operator == "In" and not r.field]
            if not values:
                return ()
            models.update(set.intersection(*(set(v) for v in values)))
        return tuple(sorted(models))

    def describe(self) -> str:
        cpu = f"{self.cpu_millis / 1000:g}" if self.cpu_millis else "0"
        mem = f"{self.memory_bytes / 2**30:g}Gi" if self.memory_bytes else "0"
        return f"{self.gpus}×{self.gpu_resource} cpu={cpu} mem={mem}"


@dataclass(frozen=True)
class KueuePodSet:
    """One PodSet of a Kueue Workload: how many pods of which shape."""

    name: str
    count: int
    shape: PodShape | None
    required_topology: str = ""  # spec.podSets[].topologyRequest.required: the level the pod set must fit in
    template_spec: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)  # its pods' spec


@dataclass(frozen=True)
class KueueWorkload:
    """A Kueue Workload; one that is not admitted and not finished is pending demand."""

    namespace: str
    name: str
    queue_name: str
    admitted: bool
    finished: bool
    pod_sets: tuple[KueuePodSet, ...] = ()
    waiting_message: str = ""  # the message of its QuotaReserved condition while that is False: Kueue's own why

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def pending(self) -> bool:
        return not self.admitted and not self.finished


@dataclass(frozen=True)
class KueueTopology:
    """A Kueue Topology: node label keys from the top level (e.g. block) to the bottom."""

    name: str
    levels: tuple[str, ...]


@dataclass(frozen=True)
class KueueFlavorQuota:
    """One resource of one flavor of a ClusterQueue: spec.resourceGroups[].flavors[].resources[] (nominalQuota,
    borrowingLimit), what status.flavorsReservation says is reserved of it (what Kueue checks a new workload
    against) and what status.flavorsUsage says admitted workloads use."""

    flavor: str
    resource: str
    nominal: int
    reserved: int = 0
    borrowing_limit: int | None = None
    used: int = 0

    @property
    def unreserved(self) -> int:
        return self.nominal - self.reserved


@dataclass(frozen=True)
class KueueClusterQueue:
    """A Kueue ClusterQueue's accelerator quota (nominal, summed over flavors) and reservations."""

    name: str
    cohort: str = ""
    nominal: Mapping[str, int] = field(default_factory=dict)
    reserved: Mapping[str, int] = field(default_factory=dict)
    pending_workloads: int = 0
    admitted_workloads: int = 0
    flavors: tuple[KueueFlavorQuota, ...] = ()  # every resource of every flavor, in spec order


@dataclass(frozen=True)
class KueueLocalQueue:
    """A Kueue LocalQueue: the namespaced queue a workload names, and the ClusterQueue (spec.clusterQueue) it feeds."""

    namespace: str
    name: str
    cluster_queue: str


@dataclass(frozen=True)
class ClusterSnapshot:
    """Everything the audit reads from one cluster at one moment, plus what could not be read."""

    nodes: tuple[NodeInfo, ...] = ()
    pods: tuple[PodInfo, ...] = ()
    node_topologies: tuple[NodeResourceTopology, ...] = ()
    kueue_topologies: tuple[KueueTopology, ...] = ()
    kueue_workloads: tuple[KueueWorkload, ...] = ()
    kueue_cluster_queues: tuple[KueueClusterQueue, ...] = ()
    kueue_local_queues: tuple[KueueLocalQueue, ...] = ()
    kubelet_configs: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    source: str = ""

    def node(self, name: str) -> NodeInfo | None:
        for node in self.nodes:
            if node.name == name:
                return node
        return None

    @cached_property
    def _pods_by_node(self) -> dict[str, tuple[PodInfo, ...]]:
        by_node: dict[str, list[PodInfo]] = {}
        for pod in self.pods:
            if pod.node_name is not None and not pod.terminal:
                by_node.setdefault(pod.node_name, []).append(pod)
        return {name: tuple(pods) for name, pods in by_node.items()}

    def pods_on(self, node_name: str) -> tuple[PodInfo, ...]:
        """Pods bound to `node_name` that still hold resources (not Succeeded/Failed)."""
        return self._pods_by_node.get(node_name, ())

    def nrt(self, node_name: str) -> NodeResourceTopology | None:
        for nrt in self.node_topologies:
            if nrt.name == node_name:
                return nrt
        return None
