"""What-if placement from a cluster's current state: bind the pods already running, then place the
pending ones under each policy and report how many fit and how fragmented the GPUs end up.

This is `kubegpu simulate --snapshot`: the live cluster (from `kubegpu audit --snapshot` dumps) is the
starting state, so a team can ask whether a bin-packing policy would have placed what now waits.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kubegpu.scheduler.framework import Framework
from kubegpu.scheduler.gang import bind
from kubegpu.scheduler.gpu.fragmentation import FragModel, StateCache, typical_pods
from kubegpu.scheduler.gpu.registry import make_profile
from kubegpu.scheduler.gpu.state import GpuCluster, GpuPod
from kubegpu.scheduler.gpu.why import Explanation, explain

MAX_EXPLAINED = 50  # unplaced pods explained per policy and seed (each is one more filter pass)


@dataclass(frozen=True)
class WhatIfResult:
    """One policy and seed: what of the pending demand it placed, and the cluster it left behind."""

    policy: str
    seed: int
    nodes: int
    total_gpus: float
    running_pods: int
    pending_pods: int
    placed_pods: int
    placed_gpus: float
    failed_pods: tuple[str, ...]
    gpu_alloc_before_pct: float
    gpu_alloc_after_pct: float
    frag_gpus_before: float
    frag_gpus_after: float
    unplaced: tuple[Explanation, ...] = ()  # why the first failed pods found no node, when they were tried

    def to_dict(self) -> dict[str, Any]:
        return {
            "policy": self.policy,
            "seed": self.seed,
            "nodes": self.nodes,
            "total_gpus": self.total_gpus,
            "running_pods": self.running_pods,
            "pending_pods": self.pending_pods,
            "placed_pods": self.placed_pods,
            "placed_gpus": self.placed_gpus,
            "failed_pods": list(self.failed_pods),
            "gpu_alloc_before_pct": self.gpu_alloc_before_pct,
            "gpu_alloc_after_pct": self.gpu_alloc_after_pct,
            "frag_gpus_before": self.frag_gpus_before,
            "frag_gpus_after": self.frag_gpus_after,
            "unplaced": [e.to_dict() for e in self.unplaced],
        }


def place_pending(
    start: GpuCluster,
    running: Sequence[GpuPod],
    pending: Sequence[GpuPod],
    policy: str,
    seed: int,
    tie_break: str = "random",
) -> WhatIfResult:
    """Place `pending` in order on `start` (modified: build a fresh cluster per policy and seed).

    The policy's typical pods (FGD's target workload) are drawn from running and pending pods alike:
    the cluster's own demand, as the paper draws them from its trace.
    """
    cluster = start
    demand = [*running, *pending]
    typical = typical_pods(demand)
    scorers, selector = make_profile(policy, typical)
    framework = Framework(scorers, seed=seed, tie_break=tie_break)
    metric = StateCache(cluster, FragModel(typical, cluster.model_names))
    frag_before = float(metric.node_frag().sum()) / 1000
    before = cluster.allocated_gpu_milli
    placed = 0
    placed_milli = 0
    failed: list[str] = []
    unplaced: list[Explanation] = []
    for pod in pending:
        node = framework.schedule(cluster, pod)
        if node is None:
            failed.append(pod.name)
            if len(unplaced) < MAX_EXPLAINED:  # the cluster as this pod met it, in the same words as audit --why
                unplaced.append(explain(cluster, [pod], pod.name))
            continue
        bind(cluster, selector, framework, pod, node)
        metric.update(cluster, node)
        placed += 1
        placed_milli += pod.total_gpu_milli
    total = cluster.total_gpu_milli
    after = cluster.allocated_gpu_milli
    return WhatIfResult(
        policy=policy,
        seed=seed,
        nodes=cluster.size,
        total_gpus=total / 1000,
        running_pods=len(running),
        pending_pods=len(pending),
        placed_pods=placed,
        placed_gpus=placed_milli / 1000,
        failed_pods=tuple(failed),
        gpu_alloc_before_pct=round(100 * before / total, 2) if total else 0.0,
        gpu_alloc_after_pct=round(100 * after / total, 2) if total else 0.0,
        frag_gpus_before=round(frag_before, 2),
        frag_gpus_after=round(float(metric.node_frag().sum()) / 1000, 2),
        unplaced=tuple(unplaced),
    )
