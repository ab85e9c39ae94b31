"""Gang admission: place a pod group all-or-nothing (a transaction rolled back on failure) or pod by pod.

Follows Volcano's allocate action (statements committed only when JobReady: ready >= minMember),
Kueue's all-or-nothing admission and the v1.35 GangScheduling plugin's Permit barrier; pod-by-pod
is plain kube-scheduler, which binds what fits and holds it while the rest waits.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol

from kubegpu.scheduler.draws import Draws
from kubegpu.scheduler.framework import Framework
from kubegpu.scheduler.gpu.state import BoolArray, GpuCluster, GpuPod


class GangMode(StrEnum):
    """How a group is admitted."""

    ALL_OR_NOTHING = "all-or-nothing"
    POD_BY_POD = "pod-by-pod"


class GpuSelector(Protocol):
    """What picks GPU indices on the chosen node and follows binds (a policy plugin)."""

    def select_gpus(self, cluster: GpuCluster, node: int, pod: GpuPod, rng: Draws) -> tuple[int, ...]:
        """GPU indices for the pod on `node`."""
        ...

    def bound(self, cluster: GpuCluster, node: int) -> None:
        """Called after `node` changed."""
        ...


@dataclass(frozen=True)
class Binding:
    """One pod bound to a node and GPU indices."""

    pod: GpuPod
    node: int
    gpus: tuple[int, ...]


@dataclass
class GangResult:
    """What a placement attempt did: pods bound (kept or rolled back) and pods still waiting."""

    bound: list[Binding] = field(default_factory=list)
    waiting: list[GpuPod] = field(default_factory=list)
    rolled_back: int = 0

    @property
    def complete(self) -> bool:
        """True when no pod of the group is left waiting."""
        return not self.waiting


def bind(
    cluster: GpuCluster, selector: GpuSelector, framework: Framework[GpuCluster, GpuPod], pod: GpuPod, node: int
) -> Binding:
    """Choose GPUs, bind, and let the selector's caches follow."""
    gpus = selector.select_gpus(cluster, node, pod, framework.rng)
    cluster.bind(node, pod, gpus)
    selector.bound(cluster, node)
    return Binding(pod, node, gpus)


def unbind(cluster: GpuCluster, selector: GpuSelector, binding: Binding) -> None:
    """Release one binding."""
    cluster.unbind(binding.node, binding.pod, binding.gpus)
    selector.bound(cluster, binding.node)


def place_group(
    cluster: GpuCluster,
    framework: Framework[GpuCluster, GpuPod],
    selector: GpuSelector,
    pods: Sequence[GpuPod],
    mode: GangMode,
    min_member: int | None = None,
    restrict: BoolArray | None = None,
    plan: dict[int, int] | None = None,
) -> GangResult:
    """Schedule each pod in turn; all-or-nothing rolls everything back unless `min_member` pods fit.

    `plan` (node -> count, from topology-aware assignment) pins pods to nodes in order.
    """
    need = len(pods) if min_member is None else min_member
    result = GangResult()
    slots = [n for n, c in sorted((plan or {}).items()) for _ in range(c)]
    for i, pod in enumerate(pods):
        node: int | None
        if plan is not None:
            node = slots[i] if i < len(slots) else None
            if node is not None and not framework.filter_mask(cluster, pod)[node]:
                node = None
        else:
            node = framework.schedule(cluster, pod, restrict)
        if node is None:
            result.waiting.append(pod)
            continue
        result.bound.append(bind(cluster, selector, framework, pod, node))
    if mode is GangMode.ALL_OR_NOTHING and len(result.bound) < need:
        for b in reversed(result.bound):
            unbind(cluster, selector, b)
        result.rolled_back = len(result.bound)
        result.waiting = list(pods)
        result.bound = []
    return result
