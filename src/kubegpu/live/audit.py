"""Audit a cluster snapshot: free and stranded GPUs, fragmentation, gangs, NUMA misplacement.

Pure functions of a ClusterSnapshot; the rules each figure follows are in docs/commands/audit.md.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubegpu.live.bound import RepackBound, repack_bound
from kubegpu.live.fgd import Fragmentation, cluster_fragmentation
from kubegpu.live.fit import GPU_PRODUCT_LABEL, NodeFree, node_free, usable_gpus
from kubegpu.live.model import DEFAULT_BLOCK_LABEL, DEFAULT_RACK_LABEL, ClusterSnapshot, PodInfo, PodShape
from kubegpu.live.parse import pod_shape
from kubegpu.manifests.accelerators import DEFAULT_REGISTRY, AcceleratorRegistry
from kubegpu.manifests.pod import GUARANTEED, exclusive_cpus_of_millis, pod_level_resources_set, qos_class

HOSTNAME_LABEL = "kubernetes.io/hostname"
GANG_SIZES = (1, 2, 4, 8)


@dataclass(frozen=True)
class AuditOptions:
    """Which labels name topology domains, which namespace's pods to report on, which resources are
    accelerators."""

    domain_labels: tuple[str, ...] = (DEFAULT_BLOCK_LABEL, DEFAULT_RACK_LABEL)
    namespace: str | None = None
    accelerators: AcceleratorRegistry = DEFAULT_REGISTRY  # lint's accelerator-resources setting
    bound: bool = True  # the packing bound: how many pending GPUs any repacking could place


@dataclass(frozen=True)
class NodeReport:
    """GPU accounting of one node."""

    name: str
    resource: str
    product: str
    allocatable: int
    used: int
    free: int
    stranded: int
    usable: int
    schedulable: bool
    reason: str
    domains: tuple[tuple[str, str], ...]
    fragmentation_milli: float


@dataclass(frozen=True)
class GangCapacity:
    """How many pods of `gpus_per_pod` GPUs (of one product) a domain can still take at once."""

    product: str
    gpus_per_pod: int
    pods: int


@dataclass(frozen=True)
class DomainReport:
    """Free GPUs of a topology domain (a value of a block/rack label) and its largest gangs."""

    label: str
    value: str
    nodes: tuple[str, ...]
    free: int
    schedulable_free: int
    stranded: int
    gangs: tuple[GangCapacity, ...]


@dataclass(frozen=True)
class NumaFinding:
    """GPU pods whose pinned CPUs sit off their GPUs' NUMA node, as NRT zone usage proves."""

    node: str
    zone: str
    pods: tuple[str, ...]
    message: str

    @property
    def definite(self) -> bool:
        return len(self.pods) == 1


@dataclass(frozen=True)
class Issue:
    """A lint or kubelet-config finding attached to the audit (rule code, severity, where, what)."""

    rule: str
    severity: str
    target: str
    message: str


@dataclass(frozen=True)
class QueueReport:
    """A Kueue ClusterQueue's accelerator quota: nominal, reserved, and what is left."""

    name: str
    cohort: str
    resource: str
    nominal: int
    reserved: int
    pending_workloads: int

    @property
    def unreserved(self) -> int:
        return self.nominal - self.reserved


@dataclass(frozen=True)
class AuditReport:
    """Everything `kubegpu audit` prints; `to_dict` is the documented JSON form."""

    nodes: tuple[NodeReport, ...]
    domains: tuple[DomainReport, ...]
    fragmentation: Fragmentation | None
    numa: tuple[NumaFinding, ...]
    pending_pods: tuple[str, ...]
    pending_gpus: int
    shapes: tuple[PodShape, ...]
    notes: tuple[str, ...]
    source: str = ""
    queues: tuple[QueueReport, ...] = ()
    lint: tuple[Issue, ...] = ()
    kubelet: tuple[Issue, ...] = ()
    checks_skipped: tuple[str, ...] = field(default=())
    packing: RepackBound | None = None

    @property
    def free_gpus(self) -> int:
        return sum(n.free for n in self.nodes)

    @property
    def stranded_gpus(self) -> int:
        return sum(n.stranded for n in self.nodes)

    @property
    def largest_placeable(self) -> tuple[int, str | None]:
        """Most free GPUs on one schedulable node (what one new pod could get), and the node."""
        best: tuple[int, str | None] = (0, None)
        for node in self.nodes:
            if node.schedulable and node.free > best[0]:
                best = (node.free, node.name)
        return best

    def to_dict(self) -> dict[str, Any]:
        largest, where = self.largest_placeable
        frag = self.fragmentation
        return {
            "source": self.source,
            "free_gpus": self.free_gpus,
            "stranded_gpus": self.stranded_gpus,
            "largest_placeable_gpus": largest,
            "largest_placeable_node": where,
            "pending_gpu_pods": list(self.pending_pods),
            "pending_gpus": self.pending_gpus,
            "fragmentation": None
            if frag is None
            else {
                "milli_gpus": round(frag.milli, 3),
                "gpus": round(frag.milli / 1000, 3),
                "idle_gpus": frag.idle_milli // 1000,
                "ratio": round(frag.ratio, 4),
                "typical_shapes": [
                    {
                        "gpus": t.gpu_count,
                        "cpu_millis": t.cpu_milli,
                        "models": list(t.gpu_models),
                        "probability": round(t.probability, 4),
                    }
                    for t in frag.typical
                ],
            },
            "nodes": [
                {
                    "name": n.name,
                    "resource": n.resource,
                    "product": n.product,
                    "allocatable_gpus": n.allocatable,
                    "used_gpus": n.used,
                    "free_gpus": n.free,
                    "usable_gpus": n.usable,
                    "stranded_gpus": n.stranded,
                    "schedulable": n.schedulable,
                    "stranded_reason": n.reason,
                    "fragmentation_milli_gpus": round(n.fragmentation_milli, 3),
                    "domains": dict(n.domains),
                }
                for n in self.nodes
            ],
            "domains": [
                {
                    "label": d.label,
                    "value": d.value,
                    "nodes": list(d.nodes),
                    "free_gpus": d.free,
                    "schedulable_free_gpus": d.schedulable_free,
                    "stranded_gpus": d.stranded,
                    "largest_gang": [
                        {"product": g.product, "gpus_per_pod": g.gpus_per_pod, "pods": g.pods} for g in d.gangs
                    ],
                }
                for d in self.domains
            ],
            "demand_shapes": [s.describe() for s in self.shapes],
            "queues": [
                {
                    "name": q.name,
                    "cohort": q.cohort,
                    "resource": q.resource,
                    "nominal_quota": q.nominal,
                    "reserved": q.reserved,
                    "unreserved_quota": q.unreserved,
                    "pending_workloads": q.pending_workloads,
                }
                for q in self.queues
            ],
            "packing_bound": None if self.packing is None else self.packing.to_dict(),
            "numa_misplaced": [
                {"node": f.node, "zone": f.zone, "pods": list(f.pods), "definite": f.definite, "message": f.message}
                for f in self.numa
            ],
            "lint_findings": [i.__dict__ for i in self.lint],
            "kubelet_findings": [i.__dict__ for i in self.kubelet],
            "notes": list(self.notes),
        }


def demand_shapes(snapshot: ClusterSnapshot, registry: AcceleratorRegistry = DEFAULT_REGISTRY) -> list[PodShape]:
    """Task shapes, one entry per pod: GPU pods placed or pending, and pending Kueue pod sets."""
    shapes: list[PodShape] = []
    for pod in snapshot.pods:
        if pod.terminal:
            continue
        shape = pod_shape(pod, registry)
        if shape is not None:
            shapes.append(shape)
    for workload in snapshot.kueue_workloads:
        if workload.pending:
            for pod_set in workload.pod_sets:
                if pod_set.shape is not None:
                    shapes.extend([pod_set.shape] * max(0, pod_set.count))
    return shapes


def _stranded(free: NodeFree, resource: str, shapes: Sequence[PodShape]) -> tuple[int, int, str]:
    """(usable, stranded, reason): free GPUs no demand shape can use, with why."""
    gpus = max(0, free.gpus(resource))
    if gpus == 0:
        return 0, 0, ""
    if not free.node.ready:
        return 0, gpus, "node is NotReady"
    if free.node.unschedulable:
        return 0, gpus, "node is cordoned"
    usable = usable_gpus(free, resource, shapes)
    if usable == gpus:
        return usable, 0, ""
    if usable == 0:
        reason = "no demand shape fits (free CPU, memory, selectors or taints)"
    else:
        reason = f"demand shapes can use only {usable} of {gpus}"
    return usable, gpus - usable, reason


def _gangs(frees: Iterable[tuple[NodeFree, str]], sizes: Sequence[int]) -> tuple[GangCapacity, ...]:
    per_product: dict[str, list[int]] = {}
    for free, resource in frees:
        if free.node.schedulable:
            product = free.node.labels.get(GPU_PRODUCT_LABEL, resource)
            per_product.setdefault(product, []).append(max(0, free.gpus(resource)))
    return tuple(
        GangCapacity(product, size, sum(g // size for g in gpus))
        for product, gpus in sorted(per_product.items())
        for size in sizes
    )


def _guaranteed(pod: PodInfo) -> bool:
    """status.qosClass (GetPodQOS), else the QoS class the pod model computes from the spec."""
    if pod.qos_class:
        return pod.qos_class == GUARANTEED
    return pod.spec is not None and qos_class(pod.spec) == GUARANTEED


def exclusive_cpus(pod: PodInfo) -> bool:
    """The static policy pins CPUs for one of the pod's containers (the pod model's exclusive_cpus: a Guaranteed
    pod without pod-level resources, and a whole number of CPUs)."""
    qos = GUARANTEED if _guaranteed(pod) else ""
    pod_level = pod.spec is not None and pod_level_resources_set(pod.spec)
    return any(exclusive_cpus_of_millis(qos, c.requests.get("cpu", 0), pod_level) for c in pod.containers if not c.init)


def numa_misplacement(snapshot: ClusterSnapshot, registry: AcceleratorRegistry = DEFAULT_REGISTRY) -> list[NumaFinding]:
    """Zones whose NRT usage proves a GPU pod's pinned CPUs are off its GPUs' NUMA node.

    NFD's topology-updater accounts only what is exclusively allocated to Guaranteed pods (pinned
    CPUs, memory, devices), so per zone, used = allocatable - available covers those pods alone.
    With E = Guaranteed GPU pods that pin CPUs and N = Guaranteed GPU pods that do not (a
    fractional CPU request) on the node:
    (a) a zone with GPUs in use, no pinned CPU, and more GPUs in use than N could hold: an E pod
        has GPUs there and all its CPUs elsewhere;
    (b) a zone with pinned CPUs, no GPU in use, and no non-GPU pod pinning CPUs: an E pod has CPUs
        there and none of its GPUs.
    """
    findings: list[NumaFinding] = []
    for nrt in snapshot.node_topologies:
        pods = [p for p in snapshot.pods_on(nrt.name) if _guaranteed(p)]
        gpu_pods = [p for p in pods if p.accelerators(registry)]
        e_pods = [p for p in gpu_pods if exclusive_cpus(p)]
        if not e_pods:
            continue
        n_gpus = sum(sum(p.accelerators(registry).values()) for p in gpu_pods if not exclusive_cpus(p))
        others_pinned = any(exclusive_cpus(p) for p in pods if not p.accelerators(registry))
        names = tuple(p.key for p in e_pods)
        for zone in nrt.zones:
            gpu_used = sum(r.used for n, r in zone.resources.items() if registry.is_accelerator(n))
            cpu = zone.resources.get("cpu")
            if cpu is None:
                continue
            cpu_used = cpu.used
            if gpu_used > 0 and cpu_used == 0 and gpu_used > n_gpus:
                message = (
                    f"NUMA zone {zone.name} has {gpu_used} GPU(s) in use and no pinned CPU; "
                    f"{_who(names)} runs on CPUs of another NUMA node"
                )
                findings.append(NumaFinding(nrt.name, zone.name, names, message))
            elif cpu_used > 0 and gpu_used == 0 and not others_pinned:
                message = (
                    f"NUMA zone {zone.name} has {cpu_used // 1000} pinned CPU(s) and no GPU "
                    f"in use; {_who(names)} has pinned CPUs away from its GPUs"
                )
                findings.append(NumaFinding(nrt.name, zone.name, names, message))
    return findings


def _who(names: Sequence[str]) -> str:
    if len(names) == 1:
        return f"pod {names[0]}"
    return "at least one of " + ", ".join(names)


def audit(snapshot: ClusterSnapshot, options: AuditOptions | None = None) -> AuditReport:
    """Compute the audit figures of a snapshot (see docs/commands/audit.md for each rule)."""
    options = options or AuditOptions()
    labels = domain_labels(snapshot, options)
    registry = options.accelerators
    shapes = demand_shapes(snapshot, registry)
    distinct = tuple(dict.fromkeys(shapes))  # the fit search needs each shape once
    reports: list[NodeReport] = []
    frees: list[tuple[NodeFree, str]] = []
    for node in snapshot.nodes:
        free = node_free(snapshot, node)
        for resource in node.accelerator_resources(registry):
            frees.append((free, resource))
    fragmentation, frag_by_node = _fragmentation(frees, shapes)
    for free, resource in frees:
        node = free.node
        allocatable = node.allocatable.get(resource, 0)
        idle = max(0, free.gpus(resource))
        usable, stranded, reason = _stranded(free, resource, distinct)
        reports.append(
            NodeReport(
                name=node.name,
                resource=resource,
                product=node.labels.get(GPU_PRODUCT_LABEL, ""),
                allocatable=allocatable,
                used=allocatable - free.gpus(resource),
                free=idle,
                stranded=stranded,
                usable=usable,
                schedulable=node.schedulable,
                reason=reason,
                domains=tuple((lab, node.labels[lab]) for lab in labels if lab in node.labels),
                fragmentation_milli=frag_by_node.get(node.name, 0.0),
            )
        )
    domains = _domains(reports, frees, labels, distinct)
    pending, pending_gpus = _pending(snapshot, options)
    numa = [
        f
        for f in numa_misplacement(snapshot, registry)
        if options.namespace is None or any(p.startswith(f"{options.namespace}/") for p in f.pods)
    ]
    counts = Counter(shapes)
    queues = tuple(
        QueueReport(q.name, q.cohort, resource, nominal, q.reserved.get(resource, 0), q.pending_workloads)
        for q in snapshot.kueue_cluster_queues
        for resource, nominal in sorted(q.nominal.items())
    )
    return AuditReport(
        nodes=tuple(reports),
        domains=tuple(domains),
        fragmentation=fragmentation,
        numa=tuple(numa),
        pending_pods=tuple(p.key for p in pending),
        pending_gpus=pending_gpus,
        shapes=tuple(s for s, _ in counts.most_common()),
        notes=snapshot.notes,
        source=snapshot.source,
        queues=queues,
        packing=repack_bound(snapshot, registry) if options.bound else None,
    )


def _fragmentation(
    frees: Sequence[tuple[NodeFree, str]], shapes: Sequence[PodShape]
) -> tuple[Fragmentation | None, dict[str, float]]:
    """The cluster's fragmentation summed over its accelerator resources, and each node's."""
    frag_by_node: dict[str, float] = {}
    fragmentation: Fragmentation | None = None
    for resource in sorted({r for _, r in frees}):
        frag = cluster_fragmentation([f for f, r in frees if r == resource], resource, shapes)
        frag_by_node.update(frag.per_node)
        if fragmentation is None:
            fragmentation = frag
        else:
            fragmentation = Fragmentation(
                fragmentation.milli + frag.milli,
                fragmentation.idle_milli + frag.idle_milli,
                fragmentation.per_node + frag.per_node,
                fragmentation.typical + frag.typical,
            )
    return fragmentation, frag_by_node


def _pending(snapshot: ClusterSnapshot, options: AuditOptions) -> tuple[list[PodInfo], int]:
    """The pending GPU pods (of the namespace asked for), and the GPUs they and pending Kueue workloads want."""
    registry = options.accelerators
    pending = [
        p
        for p in snapshot.pods
        if p.pending and p.accelerators(registry) and (options.namespace is None or p.namespace == options.namespace)
    ]
    pending_gpus = sum(sum(p.accelerators(registry).values()) for p in pending)
    pending_gpus += sum(
        ps.count * ps.shape.gpus
        for w in snapshot.kueue_workloads
        if w.pending
        for ps in w.pod_sets
        if ps.shape is not None and (options.namespace is None or w.namespace == options.namespace)
    )
    return pending, pending_gpus


def domain_labels(snapshot: ClusterSnapshot, options: AuditOptions) -> tuple[str, ...]:
    """Domain label keys: a Kueue Topology's levels (hostname excluded) win over the options."""
    for topology in snapshot.kueue_topologies:
        levels = tuple(level for level in topology.levels if level != HOSTNAME_LABEL)
        if levels:
            return levels
    return options.domain_labels


def _domains(
    reports: Sequence[NodeReport],
    frees: Sequence[tuple[NodeFree, str]],
    labels: Sequence[str],
    shapes: Sequence[PodShape],
) -> list[DomainReport]:
    sizes = sorted(set(GANG_SIZES) | {s.gpus for s in shapes})
    out: list[DomainReport] = []
    for label in labels:
        values = sorted({dict(r.domains)[label] for r in reports if label in dict(r.domains)})
        for value in values:
            members = [r for r in reports if dict(r.domains).get(label) == value]
            names = tuple(sorted({r.name for r in members}))
            member_frees = [(f, res) for f, res in frees if f.node.name in names]
            out.append(
                DomainReport(
                    label=label,
                    value=value,
                    nodes=names,
                    free=sum(r.free for r in members),
                    schedulable_free=sum(r.free for r in members if r.schedulable),
                    stranded=sum(r.stranded for r in members),
                    gangs=_gangs(member_frees, sizes),
                )
            )
    return out
