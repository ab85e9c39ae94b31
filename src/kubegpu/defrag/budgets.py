"""PodDisruptionBudgets as the eviction API applies them: how many of a budget's pods may be evicted now, and
what an eviction of one pod costs.

Follows kubernetes v1.35: the disruption controller (pkg/controller/disruption: getExpectedPodCount,
countHealthyPods, updatePdbStatus) for a budget whose status is missing, and the eviction subresource
(pkg/registry/core/pod/storage/eviction.go: canIgnorePDB, more than one budget refused, unhealthy pods and
unhealthyPodEvictionPolicy, checkAndDecrement) for each pod.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from kubegpu.live.model import ClusterSnapshot, DisruptionBudget, IntOrPercent, PodInfo

ALWAYS_ALLOW = "AlwaysAllow"


@dataclass(frozen=True)
class Allowance:
    """How many of a budget's healthy pods may be evicted now, and the counts the eviction API reads."""

    key: str
    allowed: int
    current_healthy: int
    desired_healthy: int
    policy: str
    why: str  # where the figures come from, or why nothing may be evicted


@dataclass(frozen=True)
class Verdict:
    """What the eviction API does with one pod: refuse it (`refused` says why), let it go without touching a
    budget, or let it go against `budget`'s allowance."""

    refused: str = ""
    budget: str = ""


def scaled(value: IntOrPercent, total: int) -> int:
    """intstr.GetScaledValueFromIntOrPercent with roundUp: a percentage of `total`, rounded up."""
    if isinstance(value, int):
        return value
    return math.ceil(int(value[:-1]) * total / 100)


def _computed(budget: DisruptionBudget, pods: Sequence[PodInfo]) -> Allowance:
    """The disruption controller's figures from the snapshot's pods, for a budget with no status. The controllers'
    scale (the expected count of maxUnavailable and percentages) is not in a snapshot: the matching pods stand
    for it."""
    expected = len(pods)
    if budget.max_unavailable is not None:
        desired = max(0, expected - scaled(budget.max_unavailable, expected))
    elif budget.min_available is not None:
        desired = scaled(budget.min_available, expected)
    else:
        desired = 0
    healthy = sum(1 for p in pods if p.ready and not p.deleting)
    allowed = healthy - desired if expected > 0 else 0
    return Allowance(
        budget.key,
        max(0, allowed),
        healthy,
        desired,
        budget.unhealthy_pod_eviction_policy,
        "computed from the snapshot's pods (the budget has no status)",
    )


def allowance(budget: DisruptionBudget, snapshot: ClusterSnapshot) -> Allowance:
    """The budget's allowance: its status as the disruption controller wrote it, or the controller's computation
    when there is no status; none while the status is older than the spec (the eviction API answers 429)."""
    status = budget.status
    if status is None:
        pods = [p for p in snapshot.pods if budget.covers(p)]
        return _computed(budget, pods)
    policy = budget.unhealthy_pod_eviction_policy
    if status.observed_generation < budget.generation:
        return Allowance(
            budget.key,
            0,
            status.current_healthy,
            status.desired_healthy,
            policy,
            "its status is older than its spec (the eviction API waits for the disruption controller)",
        )
    return Allowance(
        budget.key,
        max(0, status.disruptions_allowed),
        status.current_healthy,
        status.desired_healthy,
        policy,
        "from its status",
    )


def verdict(pod: PodInfo, budgets: Sequence[DisruptionBudget], allowances: dict[str, Allowance]) -> Verdict:
    """The eviction API's answer for `pod` given the budgets of its namespace."""
    if pod.phase in ("Pending", "Succeeded", "Failed") or pod.deleting:
        return Verdict()  # canIgnorePDB: no budget is checked
    covering = [b for b in budgets if b.covers(pod)]
    if len(covering) > 1:
        names = ", ".join(b.key for b in covering)
        return Verdict(refused=f"more than one PodDisruptionBudget covers it ({names}): the eviction API refuses")
    if not covering:
        return Verdict()
    budget = allowances[covering[0].key]
    if not pod.ready:
        if budget.policy == ALWAYS_ALLOW:
            return Verdict()
        if budget.current_healthy >= budget.desired_healthy > 0:
            return Verdict()
    if budget.allowed < 1:
        return Verdict(refused=f"its PodDisruptionBudget {budget.key} allows no disruption now ({budget.why})")
    return Verdict(budget=budget.key)
