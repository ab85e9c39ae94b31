"""The cluster snapshot the live audit reads: nodes, pods, NRT zones, Kueue objects, kubelet config, and what
`defrag` reads besides (PodDisruptionBudgets, PriorityClasses, PersistentVolumeClaims and PersistentVolumes).

Fields follow the Kubernetes v1.35 core, policy/v1 and scheduling.k8s.io/v1 APIs,
topology.node.k8s.io/v1alpha2 and Kueue v1beta2.
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
class OwnerRef:
    """One metadata.ownerReferences entry; `controller` marks the managing controller (GetControllerOf)."""

    api_version: str
    kind: str
    name: str
    controller: bool = False


@dataclass(frozen=True)
class PodVolume:
    """One spec.volumes entry, as far as where its data lives matters: its source kind (`hostPath`, `emptyDir`,
    `persistentVolumeClaim`, ...), an emptyDir's medium, a claim's name."""

    name: str
    source: str
    medium: str = ""
    claim: str = ""


MIRROR_ANNOTATION = "kubernetes.io/config.mirror"  # a static pod's mirror: the kubelet runs it on its node


@dataclass(frozen=True)
class PodInfo:
    """A pod: where it runs, its phase, effective requests and placement constraints; its owners, priority,
    readiness and volumes (what decides whether it may be evicted)."""

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
    owners: tuple[OwnerRef, ...] = ()
    priority: int | None = None  # spec.priority, which the Priority admission plugin fills in
    priority_class: str = ""
    ready: bool = False  # condition Ready is True (IsPodReady)
    deleting: bool = False  # metadata.deletionTimestamp is set
    volumes: tuple[PodVolume, ...] = ()
    uid: str = ""
    resource_version: str = ""
    # required scheduling rules that depend on other pods: "pod affinity", "pod anti-affinity",
    # "topology spread", "host ports" (the fit checks here do not model them)
    pod_rules: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def controller(self) -> OwnerRef | None:
        """The owner reference with controller: true (metav1.GetControllerOf), if any."""
        return next((o for o in self.owners if o.controller), None)

    @property
    def daemonset(self) -> bool:
        """Owned by a DaemonSet (its controller would put it back on the same node)."""
        return any(o.kind == "DaemonSet" for o in self.owners)

    @property
    def mirror(self) -> bool:
        """A static pod's mirror: the kubelet runs it from a file on its node; the API cannot move it."""
        return MIRROR_ANNOTATION in self.annotations

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
    priority: int | None = None  # spec.priority, from its WorkloadPriorityClass or PriorityClass
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
class LabelSelector:
    """A metav1.LabelSelector: matchLabels and matchExpressions (In, NotIn, Exists, DoesNotExist), ANDed.
    The empty selector matches every pod (policy/v1); a missing one is None and matches none."""

    match_labels: tuple[tuple[str, str], ...] = ()
    match_expressions: tuple[SelectorRequirement, ...] = ()
    valid: bool = True  # an operator LabelSelectorAsSelector refuses: the selector matches nothing

    def matches(self, labels: Mapping[str, str]) -> bool:
        if not self.valid:
            return False
        if any(labels.get(k) != v for k, v in self.match_labels):
            return False
        return all(r.matches(labels, "") for r in self.match_expressions)


# An IntOrString: a whole number or a percentage such as "50%".
IntOrPercent = int | str


@dataclass(frozen=True)
class BudgetStatus:
    """What the disruption controller last wrote into a PodDisruptionBudget's status."""

    observed_generation: int
    disruptions_allowed: int
    current_healthy: int
    desired_healthy: int
    expected_pods: int


@dataclass(frozen=True)
class DisruptionBudget:
    """A policy/v1 PodDisruptionBudget: which pods of its namespace it covers and how many may be down."""

    namespace: str
    name: str
    selector: LabelSelector | None
    min_available: IntOrPercent | None = None
    max_unavailable: IntOrPercent | None = None
    unhealthy_pod_eviction_policy: str = "IfHealthyBudget"
    generation: int = 0
    status: BudgetStatus | None = None

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    def covers(self, pod: PodInfo) -> bool:
        """The eviction API's match: same namespace, and the selector matches the pod's labels."""
        return pod.namespace == self.namespace and self.selector is not None and self.selector.matches(pod.labels)


@dataclass(frozen=True)
class PriorityClassInfo:
    """A scheduling.k8s.io/v1 PriorityClass."""

    name: str
    value: int
    global_default: bool = False
    preemption_policy: str = "PreemptLowerPriority"


@dataclass(frozen=True)
class VolumeClaim:
    """A PersistentVolumeClaim and the volume it is bound to (`volume_name`, empty while unbound)."""

    namespace: str
    name: str
    volume_name: str = ""


@dataclass(frozen=True)
class PersistentVolumeInfo:
    """A PersistentVolume: whether it is a local or hostPath volume (its data lives on one node) and the nodes
    it can be reached from (spec.nodeAffinity.required)."""

    name: str
    local: bool = False
    node_affinity: NodeAffinity = ()


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
    disruption_budgets: tuple[DisruptionBudget, ...] = ()
    priority_classes: tuple[PriorityClassInfo, ...] = ()
    volume_claims: tuple[VolumeClaim, ...] = ()
    persistent_volumes: tuple[PersistentVolumeInfo, ...] = ()
    kinds: frozenset[str] = frozenset()  # the kinds the snapshot holds objects or (possibly empty) lists of

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
