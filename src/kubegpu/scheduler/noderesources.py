"""NodeResourcesFit scoring strategies and NodeResourcesBalancedAllocation, with upstream integer arithmetic.

Follows kubernetes v1.35 pkg/scheduler/framework/plugins/noderesources (resource_allocation.go,
least_allocated.go, most_allocated.go, requested_to_capacity_ratio.go, balanced_allocation.go, fit.go)
and plugins/helper/shape_score.go. BalancedAllocation is the v1.35 std-dev form (PR #135573 is v1.36).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from kubegpu.errors import ConfigError
from kubegpu.scheduler.resources import CPU, MEMORY, PODS, NodeResources, ResourceRequest, is_extended

MAX_NODE_SCORE = 100
MAX_CUSTOM_PRIORITY_SCORE = 10


class Strategy(StrEnum):
    """The three `scoringStrategy.type` values of NodeResourcesFitArgs."""

    LEAST_ALLOCATED = "LeastAllocated"
    MOST_ALLOCATED = "MostAllocated"
    REQUESTED_TO_CAPACITY_RATIO = "RequestedToCapacityRatio"


@dataclass(frozen=True)
class ResourceSpec:
    """One `scoringStrategy.resources[]` entry: a resource name and its integer weight (1..100)."""

    name: str
    weight: int = 1


@dataclass(frozen=True)
class ShapePoint:
    """One point of the RequestedToCapacityRatio shape: utilization 0..100 and score (scaled 0..100)."""

    utilization: int
    score: int


DEFAULT_RESOURCES: tuple[ResourceSpec, ...] = (ResourceSpec(CPU, 1), ResourceSpec(MEMORY, 1))


def validate_resources(resources: Sequence[ResourceSpec]) -> None:
    """Reject weights outside 1..100, naming the field as the upstream validation does."""
    for index, spec in enumerate(resources):
        if not 1 <= spec.weight <= 100:
            raise ConfigError(
                f"scoringStrategy.resources[{index}].weight: Invalid value: {spec.weight}: "
                "resource weight of %s should be in range 1-100" % spec.name
            )


def validate_shape(shape: Sequence[ShapePoint]) -> None:
    """Shape points need strictly increasing utilization in 0..100 and unscaled scores in 0..10."""
    if not shape:
        raise ConfigError("requestedToCapacityRatio.shape: Required value: at least one point")
    previous = -1
    for index, point in enumerate(shape):
        if not 0 <= point.utilization <= 100 or point.utilization <= previous:
            raise ConfigError(f"requestedToCapacityRatio.shape[{index}].utilization: Invalid value")
        if not 0 <= point.score <= MAX_CUSTOM_PRIORITY_SCORE:
            raise ConfigError(f"requestedToCapacityRatio.shape[{index}].score: Invalid value")
        previous = point.utilization


def scale_shape(shape: Sequence[ShapePoint]) -> tuple[ShapePoint, ...]:
    """Config scores 0..10 become 0..100 (× MaxNodeScore / MaxCustomPriorityScore)."""
    factor = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
    return tuple(ShapePoint(p.utilization, p.score * factor) for p in shape)


def go_div(a: int, b: int) -> int:
    """Go integer division: truncation toward zero."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def broken_linear(shape: Sequence[ShapePoint], p: int) -> int:
    """helper.BuildBrokenLinearFunction evaluated at p, with Go integer arithmetic."""
    for i, point in enumerate(shape):
        if p <= point.utilization:
            if i == 0:
                return shape[0].score
            prev = shape[i - 1]
            return prev.score + go_div(
                (point.score - prev.score) * (p - prev.utilization), point.utilization - prev.utilization
            )
    return shape[-1].score


def scaled_utilization(requested: int, capacity: int, maximum: int = MAX_NODE_SCORE) -> int:
    """floor(requested × max / capacity) without overflow; 0 for no request or capacity, max when full."""
    if capacity <= 0 or requested <= 0:
        return 0
    if requested >= capacity:
        return maximum
    return requested * maximum // capacity


def least_allocated(requested: Sequence[int], allocatable: Sequence[int], weights: Sequence[int]) -> int:
    """Weighted integer mean of ((alloc − req) × 100) div alloc; 0 for an over-requested resource."""
    score = weight_sum = 0
    for req, alloc, weight in zip(requested, allocatable, weights, strict=True):
        if alloc == 0:
            continue
        s = 0 if req > alloc else (alloc - req) * MAX_NODE_SCORE // alloc
        score += s * weight
        weight_sum += weight
    return 0 if weight_sum == 0 else score // weight_sum


def most_allocated(requested: Sequence[int], allocatable: Sequence[int], weights: Sequence[int]) -> int:
    """Weighted integer mean of (min(req, alloc) × 100) div alloc."""
    score = weight_sum = 0
    for req, alloc, weight in zip(requested, allocatable, weights, strict=True):
        if alloc == 0:
            continue
        score += (min(req, alloc) * MAX_NODE_SCORE // alloc) * weight
        weight_sum += weight
    return 0 if weight_sum == 0 else score // weight_sum


def requested_to_capacity_ratio(
    requested: Sequence[int],
    allocatable: Sequence[int],
    weights: Sequence[int],
    scaled_shape: Sequence[ShapePoint],
) -> int:
    """Round(Σ f(u_r) × w_r / Σ w_r) over resources whose shape score f(u_r) is above 0."""
    node_score = 0
    weight_sum = 0
    for req, alloc, weight in zip(requested, allocatable, weights, strict=True):
        value = broken_linear(scaled_shape, scaled_utilization(req, alloc))
        if value > 0:
            node_score += value * weight
            weight_sum += weight
    if weight_sum == 0:
        return 0
    return _round_half_away(node_score / weight_sum)


def _round_half_away(x: float) -> int:
    return math.floor(x + 0.5) if x >= 0 else -math.floor(-x + 0.5)


def balanced_allocation(requested: Sequence[int], allocatable: Sequence[int]) -> int:
    """int((1 − std) × 100) over fractions min(1, req/alloc); std of two is |f1 − f2| / 2 (v1.35)."""
    fractions = [min(1.0, req / alloc) for req, alloc in zip(requested, allocatable, strict=True)]
    if len(fractions) == 2:
        std = abs(fractions[0] - fractions[1]) / 2
    elif len(fractions) > 2:
        mean = sum(fractions) / len(fractions)
        std = math.sqrt(sum((f - mean) ** 2 for f in fractions) / len(fractions))
    else:
        std = 0.0
    return int((1 - std) * MAX_NODE_SCORE)


@dataclass(frozen=True)
class FitScorer:
    """NodeResourcesFit's Score: the configured strategy over (requested, allocatable) per resource."""

    strategy: Strategy = Strategy.LEAST_ALLOCATED
    resources: tuple[ResourceSpec, ...] = DEFAULT_RESOURCES
    shape: tuple[ShapePoint, ...] = ()

    def __post_init__(self) -> None:
        validate_resources(self.resources)
        if self.strategy is Strategy.REQUESTED_TO_CAPACITY_RATIO:
            validate_shape(self.shape)

    def vectors(self, node: NodeResources, pod: ResourceRequest) -> tuple[list[int], list[int], list[int]]:
        """(requested, allocatable, weights) over the resources this pod and node are scored on."""
        requested: list[int] = []
        allocatable: list[int] = []
        weights: list[int] = []
        for spec in self.resources:
            name = spec.name
            if is_extended(name) and pod.get(name) == 0:
                continue
            alloc = node.allocatable.get(name, 0)
            if alloc == 0:
                continue
            nonzero = name in (CPU, MEMORY)
            used = (node.nonzero_requested if nonzero else node.requested).get(name, 0)
            requested.append(used + pod.get(name, nonzero=nonzero))
            allocatable.append(alloc)
            weights.append(spec.weight)
        return requested, allocatable, weights

    def score(self, node: NodeResources, pod: ResourceRequest) -> int:
        """The raw plugin score 0..100 for one node; ConfigError when no resource is configured."""
        if not self.resources:
            raise ConfigError("NodeResourcesFit: resources are required")
        req, alloc, weights = self.vectors(node, pod)
        if self.strategy is Strategy.LEAST_ALLOCATED:
            return least_allocated(req, alloc, weights)
        if self.strategy is Strategy.MOST_ALLOCATED:
            return most_allocated(req, alloc, weights)
        return requested_to_capacity_ratio(req, alloc, weights, scale_shape(self.shape))


@dataclass(frozen=True)
class BalancedAllocationScorer:
    """NodeResourcesBalancedAllocation: actual requests, skips unrequested extended resources."""

    resources: tuple[ResourceSpec, ...] = DEFAULT_RESOURCES

    def skip(self, pod: ResourceRequest) -> bool:
        """PreScore Skip for a pod requesting none of the scored resources (issue #129138)."""
        return pod.is_best_effort_for(spec.name for spec in self.resources)

    def score(self, node: NodeResources, pod: ResourceRequest) -> int:
        """The raw score 50..100 (two resources) for one node."""
        requested: list[int] = []
        allocatable: list[int] = []
        for spec in self.resources:
            if is_extended(spec.name) and pod.get(spec.name) == 0:
                continue
            alloc = node.allocatable.get(spec.name, 0)
            if alloc == 0:
                continue
            requested.append(node.requested.get(spec.name, 0) + pod.get(spec.name))
            allocatable.append(alloc)
        return balanced_allocation(requested, allocatable)


def fits(node: NodeResources, pod: ResourceRequest) -> bool:
    """NodeResourcesFit Filter: every requested resource fits what is left, and one more pod slot."""
    max_pods = node.allocatable.get(PODS)
    if max_pods is not None and node.pod_count + 1 > max_pods:
        return False
    for name, amount in pod.requests.items():
        if amount == 0:
            continue
        if amount > node.allocatable.get(name, 0) - node.requested.get(name, 0):
            return False
    return True
