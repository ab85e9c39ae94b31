"""Which integer programs to solve: the whole cluster at once when it is small enough, else a bounded search
over windows of nodes, each window the cheapest nodes to empty (by the lower bound's per-node costs), doubled
while time is left and until a wider window, solved to the end, finds nothing better. Every answer carries the
lower bound, so a plan from a window says how far from the best it can be.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from kubegpu.defrag.ilp import Scope, Solution, solve
from kubegpu.defrag.lower import INF, LowerBound, lower_bound
from kubegpu.defrag.problem import Instance

EXACT_CANDIDATES = 1500  # at most this many movable pods: one program over the whole cluster
EXACT_NODES = 400
FIRST_WINDOW = 8  # nodes whose pods may be evicted in the first window, at least
EXACT = "integer program"
BOUNDED = "bounded search"


@dataclass(frozen=True)
class Found:
    """The best plan found (None: none exists, or none was found in time), the lower bound on any plan's
    evictions (None: no plan exists), whether the plan is proved the fewest, and how it was searched."""

    solution: Solution | None
    bound: int | None
    optimal: bool
    method: str
    windows: int


def _ranked_nodes(instance: Instance, bound: LowerBound) -> list[int]:
    """Nodes in the order a window takes them: the cheapest spread's nodes first, then by the fewest evictions
    before one waiting pod fits (ties: most free GPUs-worth of room)."""
    cheapest: dict[int, int] = {}
    for costs in bound.costs:
        for node in costs:
            if len(node.costs) > 1 and node.costs[1] < INF:
                cheapest[node.node] = min(cheapest.get(node.node, int(INF)), int(node.costs[1]))
    free = instance.free.sum(axis=1)
    rest = sorted(cheapest, key=lambda n: (cheapest[n], -int(free[n]), n))
    first = sorted(bound.spread)
    return first + [n for n in rest if n not in bound.spread]


def _scope(instance: Instance, nodes: list[int] | None, bans: Scope | None) -> Scope:
    count = len(instance.nodes)
    evict = np.ones(count, dtype=np.bool_)
    if nodes is not None:
        evict = np.zeros(count, dtype=np.bool_)
        evict[nodes] = True
    receive = np.ones(count, dtype=np.bool_)
    if bans is None:
        return Scope(evict, receive)
    return Scope(evict, receive, bans.banned_kinds, bans.banned_targets)


def search(instance: Instance, time_limit: float, bans: Scope | None = None) -> Found:
    """The fewest evictions found within `time_limit` seconds, with the bound that says how close it is."""
    started = time.monotonic()
    bound = lower_bound(instance)
    if bound.evictions is None:
        return Found(None, None, True, EXACT, 0)
    if len(instance.candidates) <= EXACT_CANDIDATES and len(instance.nodes) <= EXACT_NODES:
        solution, infeasible = solve(instance, _scope(instance, None, bans), True, time_limit)
        if solution is None:
            return Found(None, None if infeasible else bound.evictions, infeasible, EXACT, 1)
        proved = max(bound.evictions, solution.bound)
        return Found(solution, proved, solution.optimal or len(solution.evicted) <= proved, EXACT, 1)
    ranked = _ranked_nodes(instance, bound)
    width = max(FIRST_WINDOW, 2 * len(bound.spread))
    best: Solution | None = None
    windows = 0
    while True:
        left = time_limit - (time.monotonic() - started)
        if left <= 0.05:
            break
        window = ranked[:width]
        windows += 1
        found, _ = solve(instance, _scope(instance, window, bans), True, left)
        improved = found is not None and (best is None or len(found.evicted) < len(best.evicted))
        if improved:
            best = found
        if best is not None and len(best.evicted) <= bound.evictions:
            break
        if best is not None and not improved and found is not None and found.optimal:
            break  # a window twice as wide, solved to the end, found nothing better: wider ones rarely do
        if width >= len(ranked):
            break
        width *= 2
    optimal = best is not None and len(best.evicted) <= bound.evictions
    return Found(best, bound.evictions, optimal, BOUNDED, windows)
