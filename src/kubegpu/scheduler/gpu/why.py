"""Why a GPU pod or gang waits: kube-scheduler's own answer (the FitError line and how many nodes gave each reason),
then the cause in GPU terms: too few GPUs anywhere, free GPUs scattered over nodes (fragmentation), GPUs stranded
behind too little free CPU or memory, nodes with room kept off by taints, cordons or the pod's node selector and
affinity, no topology domain with room for the whole gang, or every kubelet with room refusing the pod.

`audit --why` and `simulate --snapshot` both read `explain`; callers add what the cluster model cannot see (a Kueue
quota) as extra causes. Reasons and their counting are kube-scheduler v1.35's (kubegpu.scheduler.status).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kubegpu.scheduler.constraints import untolerated_taint
from kubegpu.scheduler.framework import Framework
from kubegpu.scheduler.gpu.filters import ERR_AFFINITY, ERR_TAINT, ERR_UNSCHEDULABLE, NodeResourcesFit
from kubegpu.scheduler.gpu.state import MILLI, BoolArray, GpuCluster, GpuPod, IntArray
from kubegpu.scheduler.status import FitError
from kubegpu.scheduler.tas import TopologyTree, pods_that_fit

# The kinds of cause, most fundamental first: what a reader must change differs for each.
CAPACITY = "capacity"  # no node, or not enough GPUs in all, for the request
FRAGMENTATION = "fragmentation"  # enough free GPUs in all, scattered so that no node has the pod's count
RESOURCES = "resources"  # nodes with the GPUs free lack CPU, memory, pod slots or another resource
PLACEMENT = "placement"  # nodes with the GPUs free are cordoned, tainted or outside the pod's selector/affinity
TOPOLOGY = "topology"  # the gang fits the cluster but no domain of its required level
KUBELET = "kubelet"  # every node the scheduler would pick refuses the pod at admission
QUOTA = "quota"  # a queue's quota holds the workload back (callers add it)
GATED = "gated"  # scheduling gates keep the scheduler from trying (callers add it)
FITS = "fits"  # the model places it now: the wait is elsewhere
KINDS = (CAPACITY, FRAGMENTATION, RESOURCES, PLACEMENT, TOPOLOGY, KUBELET, QUOTA, GATED, FITS)

MAX_KUBELET_NODES = 256  # nodes with room whose kubelet is asked about one pod shape (each is one admission)

# A node's kubelet verdict on a pod the scheduler would bind there: None when admitted, else (reason, message),
# the reason as the kubelet writes it into the pod's status (TopologyAffinityError, SMTAlignmentError, ...).
KubeletCheck = Callable[[int, GpuPod], tuple[str, str] | None]


@dataclass(frozen=True)
class Cause:
    """One cause of the wait, in GPU terms, with the figures it rests on."""

    kind: str
    message: str
    figures: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "message": self.message, **({"figures": dict(self.figures)} if self.figures else {})}


@dataclass(frozen=True)
class TopologyNeed:
    """The domain level a gang must fit in whole (a Kueue podset-required-topology) and the tree of domains."""

    tree: TopologyTree
    level: str


@dataclass(frozen=True)
class Explanation:
    """Why one pod or gang waits: kube-scheduler's line for the pod that finds no node, the reason counts behind
    it, and the causes."""

    subject: str
    pods: int
    gpus_per_pod: int
    resource: str
    message: str
    reasons: Mapping[str, int]
    causes: tuple[Cause, ...]

    @property
    def kinds(self) -> tuple[str, ...]:
        return tuple(c.kind for c in self.causes)

    def with_causes(self, extra: Sequence[Cause]) -> Explanation:
        """The explanation with causes the cluster model cannot see (a queue's quota) put first."""
        causes = [*extra, *self.causes]
        return Explanation(
            self.subject, self.pods, self.gpus_per_pod, self.resource, self.message, self.reasons, tuple(causes)
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "subject": self.subject,
            "pods": self.pods,
            "gpus_per_pod": self.gpus_per_pod,
            "resource": self.resource,
            "scheduler_message": self.message,
            "reasons": dict(sorted(self.reasons.items())),
            "causes": [c.to_dict() for c in self.causes],
        }


def explain(
    cluster: GpuCluster,
    pods: Sequence[GpuPod],
    subject: str,
    *,
    topology: TopologyNeed | None = None,
    kubelet: KubeletCheck | None = None,
) -> Explanation:
    """Why `pods` (one pod, or a gang placed all or nothing) cannot all be placed on `cluster` now.

    The gang's pods are placed one by one (kube-scheduler's filters, lowest-name node first) until one finds no
    node; that pod's Diagnosis gives the FitError line. The cluster is left as it was.
    """
    if not pods:
        raise ValueError("explain needs at least one pod")
    framework: Framework[GpuCluster, GpuPod] = Framework([], tie_break="lowest-name")
    rep = max(pods, key=lambda p: (p.gpu_count, p.gpu_milli))
    placed: list[tuple[int, GpuPod, tuple[int, ...]]] = []
    blocked: GpuPod | None = None
    try:
        for pod in pods:
            nodes = framework.feasible_nodes(cluster, pod)
            if len(nodes) == 0:
                blocked = pod
                break
            node = min(nodes.tolist(), key=lambda n: cluster.names[n])
            gpus = _gpus_for(cluster, node, pod)
            cluster.bind(node, pod, gpus)
            placed.append((node, pod, gpus))
        message, reasons = "", {}
        causes: list[Cause] = []
        if blocked is not None:
            # read while the pods placed before it hold their GPUs: the state the blocked pod meets
            outcome = framework.diagnose(cluster, blocked)
            error = FitError(cluster.size, outcome.diagnosis)
            message, reasons = error.message, error.reason_counts()
            causes += _scheduler_causes(cluster, blocked, len(pods), len(placed), outcome.diagnosis.pre_filter_msg)
    finally:
        for node, pod, gpus in reversed(placed):
            cluster.unbind(node, pod, gpus)
    if blocked is None:
        if topology is not None and len(pods) > 1:
            causes += _topology(cluster, framework, rep, len(pods), topology)
        if kubelet is not None and not causes:
            causes += _kubelet(cluster, framework, pods, kubelet)
    if not causes:
        where = len(framework.feasible_nodes(cluster, rep))
        causes.append(
            Cause(
                FITS,
                f"the scheduler model places {'the whole gang' if len(pods) > 1 else 'it'} now "
                f"({where} node{_s(where)} would take {'a pod' if len(pods) > 1 else 'it'}): the wait is not "
                "for room",
                {"feasible_nodes": where},
            )
        )
    resource = rep.gpu_resource if rep.is_gpu else ""
    return Explanation(subject, len(pods), rep.gpu_count, resource, message, reasons, tuple(causes))


def _s(n: int) -> str:
    return "" if n == 1 else "s"


def _gpus_for(cluster: GpuCluster, node: int, pod: GpuPod) -> tuple[int, ...]:
    """The first GPUs of `node` holding the pod's share each (for a trial placement)."""
    if not pod.is_gpu:
        return ()
    count = int(cluster.gpu_count[node])
    free = [g for g in range(count) if cluster.gpu_left[node, g] >= pod.gpu_milli]
    return tuple(free[: pod.gpu_count])


def _gpu_nodes(cluster: GpuCluster, pod: GpuPod) -> BoolArray:
    """Nodes with GPUs of the pod's resource and an accepted model."""
    mask: BoolArray = (cluster.gpu_count > 0) & cluster.resource_mask(pod) & cluster.model_mask(pod)
    return mask


def _free_for(cluster: GpuCluster, pod: GpuPod) -> IntArray:
    """GPUs per node that could take one of the pod's GPUs (whole free GPUs for a whole-GPU pod)."""
    if pod.gpu_milli >= MILLI:
        return cluster.full_free.copy()
    counts: IntArray = (cluster.gpu_left >= pod.gpu_milli).sum(axis=1).astype(np.int64)
    return counts


def _gpus_word(pod: GpuPod) -> str:
    if pod.gpu_milli >= MILLI:
        return f"{pod.gpu_count} {pod.gpu_resource}"
    return f"{pod.gpu_count} GPU share{_s(pod.gpu_count)} of {pod.gpu_milli}m"


def _scheduler_causes(cluster: GpuCluster, pod: GpuPod, gang: int, placed: int, pre_filter: str) -> list[Cause]:
    """Causes for a pod no node takes: read in GPU terms from the same filters."""
    if pre_filter:
        return [Cause(PLACEMENT, f"the pod's node affinity rules out every node: {pre_filter}")]
    if not pod.is_gpu:
        return []
    causes: list[Cause] = []
    gpu_nodes = _gpu_nodes(cluster, pod)
    need = pod.gpu_count
    if not gpu_nodes.any():
        return [
            Cause(
                CAPACITY,
                f"no node has {pod.gpu_resource}"
                + (f" of model {', '.join(pod.gpu_models)}" if pod.gpu_models else ""),
            )
        ]
    biggest = int(cluster.gpu_count[gpu_nodes].max())
    if biggest < need:
        return [
            Cause(
                CAPACITY,
                f"the pod asks for {need} {pod.gpu_resource} and no node has that many (the largest has {biggest})",
                {"largest_node_gpus": biggest},
            )
        ]
    free = _free_for(cluster, pod)
    admitted = cluster.admits(pod) & gpu_nodes
    room = gpu_nodes & (free >= need)
    # nodes with the GPUs free that placement rules keep the pod off
    kept_off = room & ~cluster.admits(pod)
    if kept_off.any():
        causes.append(_placement(cluster, pod, np.flatnonzero(kept_off).tolist(), need))
    # nodes with the GPUs free and allowed, short of something else
    short = room & admitted & ~cluster.fits_resources(pod)
    if short.any():
        causes.append(_resources(cluster, pod, np.flatnonzero(short).tolist(), free))
    if not causes:
        total = int(free[admitted].sum())
        holders = int((free[admitted] > 0).sum())
        most = int(free[admitted].max()) if admitted.any() else 0
        figures = {"free_gpus": total, "nodes_with_free_gpus": holders, "largest_free_on_a_node": most, "needed": need}
        lead = ""
        if gang > 1:
            figures["gang_pods"], figures["gang_pods_placed"] = gang, placed
            lead = f"the gang needs {gang} pods with {_gpus_word(pod)} each; {placed} find room, then "
        if total >= need:
            text = f"{total} free GPUs on {holders} node{_s(holders)} the pod may use, none with {need}"
            causes.append(
                Cause(
                    FRAGMENTATION, (lead + text) if lead else f"{text}: it needs {_gpus_word(pod)} on one node", figures
                )
            )
        else:
            text = f"only {total} free GPUs on the nodes the pod may use"
            causes.append(
                Cause(CAPACITY, (lead + text) if lead else f"{text}; it needs {_gpus_word(pod)} on one node", figures)
            )
    return causes


def _placement(cluster: GpuCluster, pod: GpuPod, nodes: Sequence[int], need: int) -> Cause:
    """Nodes with room kept off by a cordon, a taint or the pod's selector/affinity (the first filter that
    rejects, as kube-scheduler counts them)."""
    by_reason: Counter[str] = Counter()
    taints: Counter[str] = Counter()
    cordon = cluster.admits_unschedulable(pod)
    tolerated = cluster.tolerated(pod)
    matched = cluster.matches_affinity(pod)
    for n in nodes:
        if cordon is not None and not cordon[n]:
            by_reason[ERR_UNSCHEDULABLE] += 1
        elif tolerated is not None and not tolerated[n]:
            by_reason[ERR_TAINT] += 1
            taint = untolerated_taint(cluster.nodes[n].taints, pod.tolerations)
            if taint is not None:
                taints[f"{taint.key}{'=' + taint.value if taint.value else ''}:{taint.effect}"] += 1
        elif matched is not None and not matched[n]:
            by_reason[ERR_AFFINITY] += 1
    words = {
        ERR_UNSCHEDULABLE: "cordoned",
        ERR_TAINT: "tainted without a toleration"
        + (f" ({', '.join(f'{k} on {v}' for k, v in sorted(taints.items()))})" if taints else ""),
        ERR_AFFINITY: "outside the pod's nodeSelector or node affinity",
    }
    parts = [f"{count} {words[reason]}" for reason, count in sorted(by_reason.items(), key=lambda kv: -kv[1])]
    names = ", ".join(cluster.names[n] for n in nodes[:5]) + (", ..." if len(nodes) > 5 else "")
    return Cause(
        PLACEMENT,
        f"{len(nodes)} node{_s(len(nodes))} with room for its {need} GPUs ({names}) cannot take the pod: "
        f"{'; '.join(parts)}",
        {"nodes": len(nodes), "by_reason": dict(sorted(by_reason.items())), "taints": dict(sorted(taints.items()))},
    )


def _resources(cluster: GpuCluster, pod: GpuPod, nodes: Sequence[int], free: IntArray) -> Cause:
    """Nodes with the GPUs free but short of CPU, memory, pod slots or another resource: their GPUs are
    stranded for this pod."""
    plugin = NodeResourcesFit()
    short: Counter[str] = Counter()
    for n in nodes:
        for reason in plugin.status(cluster, pod, n).reasons:
            short[reason.removeprefix("Insufficient ")] += 1
    stranded = int(free[list(nodes)].sum())
    details: list[str] = []
    for resource, count in sorted(short.items(), key=lambda kv: (-kv[1], kv[0])):
        text = f"{resource} on {count}"
        if resource == "cpu":
            most = max(int(cluster.cpu_cap[n] - cluster.cpu_used[n]) for n in nodes)
            text += f" (asks {pod.cpu_milli / 1000:g} CPUs, most free {most / 1000:g})"
        elif resource == "memory":
            most = max(int(cluster.mem_cap[n] - cluster.mem_used[n]) for n in nodes)
            text += f" (asks {pod.memory_bytes / 2**30:g}Gi, most free {most / 2**30:.4g}Gi)"
        details.append(text)
    names = ", ".join(cluster.names[n] for n in nodes[:5]) + (", ..." if len(nodes) > 5 else "")
    return Cause(
        RESOURCES,
        f"{len(nodes)} node{_s(len(nodes))} with room for its {pod.gpu_count} GPUs ({names}) lack what else "
        "the pod asks: "
        f"{'; '.join(details)}; {stranded} GPUs stranded there",
        {"nodes": len(nodes), "short": dict(sorted(short.items())), "stranded_gpus": stranded},
    )


def _topology(
    cluster: GpuCluster, framework: Framework[GpuCluster, GpuPod], pod: GpuPod, count: int, need: TopologyNeed
) -> list[Cause]:
    """A gang that fits the cluster but no single domain of its required level."""
    per_node = pods_that_fit(cluster, pod) * framework.filter_mask(cluster, pod)
    level = need.tree.level_index(need.level)
    counts = need.tree.counts(per_node, level)
    if len(counts) and int(counts.max()) >= count:
        return []
    names = need.tree.domain_names[level]
    best = int(np.argmax(counts)) if len(counts) else 0
    best_name = names[best][-1] if len(counts) else ""
    with_room = int((counts > 0).sum())
    return [
        Cause(
            TOPOLOGY,
            f"the gang of {count} pods with {_gpus_word(pod)} each must share one {need.level} domain; the cluster "
            f"has room for {int(per_node.sum())} such pods over {with_room} domain{_s(with_room)}, the best "
            f"({need.level}={best_name}) for {int(counts[best]) if len(counts) else 0}",
            {
                "level": need.level,
                "pods_needed": count,
                "room_in_cluster": int(per_node.sum()),
                "best_domain": best_name,
                "room_in_best_domain": int(counts[best]) if len(counts) else 0,
            },
        )
    ]


def _kubelet(
    cluster: GpuCluster, framework: Framework[GpuCluster, GpuPod], pods: Sequence[GpuPod], kubelet: KubeletCheck
) -> list[Cause]:
    """Every node the scheduler would bind a pod of the gang to refuses it at the kubelet's admission."""
    shapes: dict[tuple[int, int, int, int], GpuPod] = {}
    for pod in pods:  # pods of one shape get one answer: ask for the first of each
        shapes.setdefault((pod.cpu_milli, pod.memory_bytes, pod.gpu_count, pod.gpu_milli), pod)
    for pod in shapes.values():
        feasible = framework.feasible_nodes(cluster, pod).tolist()
        nodes = feasible[:MAX_KUBELET_NODES]
        refusals: dict[int, tuple[str, str]] = {}
        for n in nodes:
            verdict = kubelet(n, pod)
            if verdict is None:
                break
            refusals[n] = verdict
        else:
            if not nodes:
                continue
            reasons = Counter(reason for reason, _ in refusals.values())
            first = refusals[nodes[0]]
            summary = ", ".join(f"{count} {reason}" for reason, count in sorted(reasons.items()))
            which = "every node" if len(nodes) == len(feasible) else f"the first {len(nodes)} of {len(feasible)} nodes"
            return [
                Cause(
                    KUBELET,
                    f"{which} with room refuse{'s' if which == 'every node' else ''} the pod at the kubelet's "
                    f"admission ({summary}); on {cluster.names[nodes[0]]}: {first[0]}: {first[1]}",
                    {"nodes": len(nodes), "nodes_with_room": len(feasible), "by_reason": dict(sorted(reasons.items()))},
                )
            ]
    return []
