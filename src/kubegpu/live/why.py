"""`kubegpu audit --why`: every pending GPU pod, pod group and Kueue workload of a snapshot, explained.

The cluster is the scheduler model's (kubegpu.scheduler.gpu: every node, cordoned and tainted ones included, as
kube-scheduler counts them), the explanation the shared one (kubegpu.scheduler.gpu.why); what only a snapshot
knows is added here: scheduling gates, a Kueue ClusterQueue's quota, and each node's kubelet (kubegpu.live.kubelet).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kubegpu.errors import ModelError
from kubegpu.live.audit import HOSTNAME_LABEL, AuditOptions, domain_labels
from kubegpu.live.kubelet import kubelet_check
from kubegpu.live.model import ClusterSnapshot, KueueClusterQueue, KueueWorkload, PodInfo
from kubegpu.live.simstart import model_node, model_pod, pod_set_pod, pod_set_pod_name
from kubegpu.manifests.accelerators import AcceleratorRegistry
from kubegpu.rules.gang import COSCHEDULING_LABELS, KAI_POD_GROUP_ANNOTATION, VOLCANO_GROUP_ANNOTATIONS
from kubegpu.scheduler.gpu.state import GpuCluster, GpuPod
from kubegpu.scheduler.gpu.why import GATED, QUOTA, Cause, Explanation, TopologyNeed, explain
from kubegpu.scheduler.tas import TopologyTree

KUEUE_POD_GROUP_LABEL = "kueue.x-k8s.io/pod-group-name"
MAX_SUBJECTS = 10_000  # pending pods and workloads explained in one run (each is a few filter passes)


@dataclass(frozen=True)
class WhyReport:
    """Every waiting GPU pod, group and workload with its explanation, and what was left out."""

    source: str
    nodes: int
    explanations: tuple[Explanation, ...]
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "nodes": self.nodes,
            "waiting": [e.to_dict() for e in self.explanations],
            "notes": list(self.notes),
        }


def snapshot_cluster(snapshot: ClusterSnapshot, registry: AcceleratorRegistry) -> tuple[GpuCluster, list[str]]:
    """The scheduler model of every node of the snapshot, with the pods bound to them (a pod that would
    over-commit its node is left out and named)."""
    cluster = GpuCluster([model_node(n, registry) for n in snapshot.nodes])
    index = {name: i for i, name in enumerate(cluster.names)}
    notes: list[str] = []
    for name, i in index.items():
        next_gpu = 0
        for pod in snapshot.pods_on(name):
            model = model_pod(pod, registry)
            gpus = tuple(range(next_gpu, next_gpu + model.gpu_count)) if model.is_gpu else ()
            try:
                cluster.bind(i, model, gpus)
            except ModelError as err:
                notes.append(f"pod {pod.key} left out of node {name}: {err}")
                continue
            next_gpu += len(gpus)
    return cluster, notes


def group_of(pod: PodInfo) -> str:
    """The pod group a pod belongs to (coscheduling, Volcano, KAI and Kueue pod groups), '' for none."""
    for label in (*COSCHEDULING_LABELS, KUEUE_POD_GROUP_LABEL):
        if pod.labels.get(label):
            return pod.labels[label]
    for annotation in (*VOLCANO_GROUP_ANNOTATIONS, KAI_POD_GROUP_ANNOTATION):
        if pod.annotations.get(annotation):
            return pod.annotations[annotation]
    return ""


def _levels(snapshot: ClusterSnapshot, options: AuditOptions) -> tuple[str, ...]:
    levels = tuple(lv for lv in domain_labels(snapshot, options) if lv != HOSTNAME_LABEL)
    return (*levels, HOSTNAME_LABEL)


def quota_cause(
    workload: KueueWorkload, queues: Sequence[KueueClusterQueue], cluster_queue: str, registry: AcceleratorRegistry
) -> Cause | None:
    """A workload the ClusterQueue's unreserved quota cannot hold: per accelerator resource, the most any one flavor
    has left (Kueue gives a pod set one flavor per resource) against what the workload asks."""
    queue = next((q for q in queues if q.name == cluster_queue), None)
    if queue is None:
        return None
    wants: dict[str, int] = {}
    for pod_set in workload.pod_sets:
        if pod_set.shape is not None:
            wants[pod_set.shape.gpu_resource] = (
                wants.get(pod_set.shape.gpu_resource, 0) + pod_set.count * pod_set.shape.gpus
            )
    for resource, want in sorted(wants.items()):
        flavors = [f for f in queue.flavors if f.resource == resource]
        if not flavors:
            return Cause(
                QUOTA,
                f"ClusterQueue {queue.name} has no quota for {resource} (no flavor of its resourceGroups covers it); "
                f"the workload asks for {want}",
                {"cluster_queue": queue.name, "resource": resource, "requested": want},
            )
        best = max(flavors, key=lambda f: f.unreserved)
        if best.unreserved >= want:
            continue
        listed = ", ".join(
            f"flavor {f.flavor}: nominalQuota {f.nominal}, {f.reserved} reserved, {max(0, f.unreserved)} left"
            for f in flavors
        )
        never = max(f.nominal for f in flavors) < want
        borrow = f"; it may borrow from cohort {queue.cohort}" if queue.cohort and not never else ""
        verdict = "is smaller than" if never and not queue.cohort else "has too little left for"
        text = f"ClusterQueue {queue.name} quota for {resource} ({listed}) {verdict} the {want} the workload asks for"
        text += borrow
        figures = {
            "cluster_queue": queue.name,
            "cohort": queue.cohort,
            "resource": resource,
            "requested": want,
            "flavors": [
                {
                    "flavor": f.flavor,
                    "nominal_quota": f.nominal,
                    "reserved": f.reserved,
                    "used": f.used,
                    "borrowing_limit": f.borrowing_limit,
                }
                for f in flavors
            ],
        }
        if workload.waiting_message:
            text += f" (Kueue: {workload.waiting_message})"
        return Cause(QUOTA, text, figures)
    return None


_Subject = tuple[str, list[GpuPod], TopologyNeed | None, list[Cause]]  # who waits, its pods, topology, causes


def _outside(options: AuditOptions, namespace: str) -> bool:
    """Whether --namespace leaves out an object of this namespace."""
    return options.namespace is not None and namespace != options.namespace


def _gated(members: Sequence[PodInfo]) -> list[Cause]:
    """The scheduling-gates cause of a pod or pod group whose pods carry gates, else none."""
    gated = [p.key for p in members if p.scheduling_gated]
    if not gated:
        return []
    text = (
        f"{len(gated)} of its pods carry scheduling gates: the scheduler does not try them until the gates are removed"
    )
    return [Cause(GATED, text, {"gated_pods": gated})]


def _pod_subjects(snapshot: ClusterSnapshot, options: AuditOptions) -> list[_Subject]:
    """Every pending GPU pod of the namespace asked about, the pods of one pod group together, in the order
    the snapshot lists them."""
    registry = options.accelerators
    groups: dict[tuple[str, str], list[PodInfo]] = {}
    for pod in snapshot.pods:
        if not pod.pending or not pod.accelerators(registry) or _outside(options, pod.namespace):
            continue
        groups.setdefault((pod.namespace, group_of(pod) or f"\0{pod.name}"), []).append(pod)
    subjects: list[_Subject] = []
    for (namespace, group), members in groups.items():
        subject = members[0].key if group.startswith("\0") else f"{namespace}/{group} (pod group)"
        subjects.append((subject, [model_pod(p, registry) for p in members], None, _gated(members)))
    return subjects


def _workload_pods(
    workload: KueueWorkload,
    registry: AcceleratorRegistry,
    cluster: GpuCluster,
    levels: tuple[str, ...],
    notes: list[str],
) -> tuple[list[GpuPod], TopologyNeed | None]:
    """The pods of a workload's pod sets and the first topology level one of them requires (a level no
    Topology or flag names is noted and left out)."""
    pods: list[GpuPod] = []
    need: TopologyNeed | None = None
    for pod_set in workload.pod_sets:
        if pod_set.shape is None:
            continue
        pods += [
            pod_set_pod(pod_set_pod_name(workload, pod_set, i), pod_set.shape, registry)
            for i in range(max(0, pod_set.count))
        ]
        if pod_set.required_topology and need is None:
            if pod_set.required_topology in levels:
                need = TopologyNeed(TopologyTree(cluster, levels), pod_set.required_topology)
            else:
                notes.append(
                    f"workload {workload.key} asks for topology level {pod_set.required_topology}, which no Kueue "
                    "Topology or --block-label/--rack-label names"
                )
    return pods, need


def _quota(
    workload: KueueWorkload,
    snapshot: ClusterSnapshot,
    by_local: Mapping[tuple[str, str], str],
    registry: AcceleratorRegistry,
    notes: list[str],
) -> list[Cause]:
    """The quota cause of a workload its ClusterQueue (found through `by_local`, its LocalQueue's) cannot hold,
    else none; a LocalQueue missing from a snapshot that has ClusterQueues is noted."""
    cluster_queue = by_local.get((workload.namespace, workload.queue_name), "")
    if not cluster_queue:
        if snapshot.kueue_cluster_queues:
            notes.append(
                f"workload {workload.key}: LocalQueue {workload.namespace}/{workload.queue_name} is not in the "
                "snapshot, so its ClusterQueue's quota is not checked"
            )
        return []
    cause = quota_cause(workload, snapshot.kueue_cluster_queues, cluster_queue, registry)
    return [] if cause is None else [cause]


def _workload_subjects(
    snapshot: ClusterSnapshot, options: AuditOptions, cluster: GpuCluster, notes: list[str]
) -> list[_Subject]:
    """Every pending Kueue workload of the namespace asked about that has pods, with its topology need and
    its quota cause."""
    levels = _levels(snapshot, options)
    registry = options.accelerators
    by_local = {(q.namespace, q.name): q.cluster_queue for q in snapshot.kueue_local_queues}
    subjects: list[_Subject] = []
    for workload in snapshot.kueue_workloads:
        if not workload.pending or _outside(options, workload.namespace):
            continue
        pods, need = _workload_pods(workload, registry, cluster, levels, notes)
        if pods:
            causes = _quota(workload, snapshot, by_local, registry, notes)
            subjects.append((f"{workload.key} (Kueue workload)", pods, need, causes))
    return subjects


def explain_snapshot(
    snapshot: ClusterSnapshot, options: AuditOptions | None = None, *, kubelet: bool = True
) -> WhyReport:
    """Explain every pending GPU pod (pods of one pod group together) and pending Kueue workload."""
    options = options or AuditOptions()
    if not snapshot.nodes:
        empty = "the snapshot holds no nodes: kube-scheduler answers every pod 'no nodes available to schedule pods'"
        return WhyReport(snapshot.source, 0, (), (*snapshot.notes, empty))
    cluster, notes = snapshot_cluster(snapshot, options.accelerators)
    check = kubelet_check(snapshot, cluster, notes) if kubelet else None
    subjects = [*_pod_subjects(snapshot, options), *_workload_subjects(snapshot, options, cluster, notes)]
    if len(subjects) > MAX_SUBJECTS:
        notes.append(f"{len(subjects)} waiting pods and workloads: the first {MAX_SUBJECTS} are explained")
        subjects = subjects[:MAX_SUBJECTS]
    explanations = []
    for subject, pods, need, extra in subjects:
        explanation = explain(cluster, pods, subject, topology=need, kubelet=check)
        explanations.append(explanation.with_causes(extra) if extra else explanation)
    return WhyReport(snapshot.source, cluster.size, tuple(explanations), (*snapshot.notes, *notes))
