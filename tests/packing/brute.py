"""Exact integer optima of tiny packing problems by exhaustive search: the reference the bounds are held to."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from functools import cache

from kubegpu.packing.model import PackingProblem, fits


def node_patterns(problem: PackingProblem, c: int, caps: Sequence[int]) -> list[tuple[int, ...]]:
    """Every multiset of tasks (counts ≤ caps, eligible types only) one node of class c holds."""
    node = problem.classes[c]
    ranges = [range(caps[t] + 1) if problem.eligible[c][t] else range(1) for t in range(len(problem.types))]
    return [v for v in itertools.product(*ranges) if fits(node, problem.types, v)]


def optimum(problem: PackingProblem, counts: Sequence[int], required: Sequence[int] | None = None) -> float:
    """The most worth any placement of at most counts[t] (at least required[t]) tasks achieves; -inf when
    the required tasks cannot all be placed."""
    need = tuple(required) if required is not None else (0,) * len(counts)
    nodes = [c for c, node in enumerate(problem.classes) for _ in range(node.count)]
    patterns = {c: node_patterns(problem, c, counts) for c in set(nodes)}
    worth = [t.worth for t in problem.types]

    @cache
    def best(i: int, left: tuple[int, ...]) -> float:
        if i == len(nodes):
            placed = [counts[t] - left[t] for t in range(len(left))]
            return 0.0 if all(p >= n for p, n in zip(placed, need, strict=True)) else float("-inf")
        result = float("-inf")
        for v in patterns[nodes[i]]:
            if all(a <= b for a, b in zip(v, left, strict=True)):
                rest = best(i + 1, tuple(b - a for a, b in zip(v, left, strict=True)))
                result = max(result, rest + sum(w * a for w, a in zip(worth, v, strict=True)))
        return result

    return best(0, tuple(counts))
