"""Volcano's binpack plugin node score: weighted used-plus-request share of each requested resource.

Follows volcano-sh/volcano pkg/scheduler/plugins/binpack/binpack.go (snapshot ed72c7c8): only
resources the task requests and the weight map names count; any overflow scores the node 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from kubegpu.errors import ConfigError

MAX_NODE_SCORE = 100.0


@dataclass(frozen=True)
class BinpackArgs:
    """`binpack.weight`, `binpack.cpu`, `binpack.memory` and `binpack.resources.<name>` weights."""

    weight: int = 1
    resources: Mapping[str, int] = field(default_factory=lambda: {"cpu": 1, "memory": 1})

    def __post_init__(self) -> None:
        if self.weight < 0:
            raise ConfigError("binpack.weight must not be negative")


def binpack_score(
    request: Mapping[str, float], allocatable: Mapping[str, float], used: Mapping[str, float], args: BinpackArgs
) -> float:
    """(Σ_r w_r (used_r + req_r) / alloc_r) / Σ_r w_r × 100 × binpack.weight, 0 on overflow."""
    score = 0.0
    weight_sum = 0
    for name, req in request.items():
        if req <= 0:
            continue
        weight = args.resources.get(name)
        if weight is None:
            continue
        weight = weight if weight >= 0 else 1  # negative weights fall back to 1, as upstream parses them
        alloc = allocatable.get(name, 0.0)
        total = used.get(name, 0.0) + req
        weight_sum += weight
        if alloc == 0:
            continue
        if total > alloc:
            return 0.0
        score += weight * total / alloc
    if weight_sum == 0:
        return 0.0
    return score / weight_sum * MAX_NODE_SCORE * args.weight
