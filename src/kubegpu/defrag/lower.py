"""A lower bound on the evictions any plan needs, node by node: the fewest pods that must leave a node before
it has room for j waiting pods, then the cheapest way to spread the waiting pods over nodes.

On one node, making room in each resource takes at least as many evictions as the largest requests of that
resource need to cover its shortfall; the node's cost is the largest of these counts. Evicted pods are assumed to
find room elsewhere, pod groups to cost only their pods on the node, and budgets to allow everything: each
relaxation can only lower the bound, so it holds for every plan. For waiting pods of several kinds, the bound
is the largest of the kinds' bounds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kubegpu.defrag.problem import BoolArray, Instance, IntArray

INF = np.iinfo(np.int64).max // 4


@dataclass(frozen=True)
class NodeCosts:
    """`costs[j]`: at least this many evictions on the node before j waiting pods of a kind fit (INF: never)."""

    node: int
    costs: IntArray


@dataclass(frozen=True)
class LowerBound:
    """The bound (None: no plan exists, even evicting every pod that may leave) and, per node, how many waiting
    pods of each kind the cheapest spread puts there (the search's first window)."""

    evictions: int | None
    spread: dict[int, int]
    costs: tuple[tuple[NodeCosts, ...], ...]  # per waiting-pod kind, the candidate nodes


def node_costs(instance: Instance, kind: int) -> tuple[NodeCosts, ...]:
    """Per node that admits the kind: the fewest evictions there before 0, 1, ... of its pods fit."""
    target = instance.target_kinds[kind]
    count = len(target.pods)
    request = target.requests
    wanted = request > 0
    by_node: dict[int, list[int]] = {}
    for i, candidate in enumerate(instance.candidates):
        by_node.setdefault(candidate.node, []).append(i)
    out: list[NodeCosts] = []
    usable: BoolArray = target.eligible & instance.receivable
    for n in np.flatnonzero(usable):
        node = int(n)
        members = by_node.get(node, [])
        items = (
            np.array([instance.kinds[instance.candidates[i].kind].requests for i in members], dtype=np.int64)
            if members
            else np.zeros((0, len(instance.resources)), dtype=np.int64)
        )
        room_now = instance.alloc[node] - instance.used[node]
        room_all = room_now + items.sum(axis=0)
        most = int(min(room_all[wanted] // request[wanted])) if wanted.any() else count
        most = max(0, min(most, count))
        costs = np.full(count + 1, INF, dtype=np.int64)
        costs[0] = 0
        if most:
            ordered = -np.sort(-items, axis=0)  # each resource's largest requests first
            cumulative = np.cumsum(ordered, axis=0)
            for j in range(1, most + 1):
                short = request * j - room_now
                need = 0
                for r in np.flatnonzero(short > 0):
                    need = max(need, int(np.searchsorted(cumulative[:, r], short[r])) + 1)
                costs[j] = need
        out.append(NodeCosts(node, costs))
    return tuple(out)


def _spread(costs: tuple[NodeCosts, ...], count: int) -> tuple[int, dict[int, int]] | None:
    """The cheapest way to place `count` pods on these nodes (dynamic programming over nodes), or None."""
    best = np.full(count + 1, INF, dtype=np.int64)
    best[0] = 0
    choices = np.zeros((len(costs), count + 1), dtype=np.int64)
    for i, node in enumerate(costs):
        after = best.copy()
        for j in range(1, count + 1):
            cost = node.costs[j]
            if cost >= INF:
                break
            candidate = best[: count + 1 - j] + cost
            better = candidate < after[j:]
            after[j:] = np.where(better, candidate, after[j:])
            choices[i, j:] = np.where(better, j, choices[i, j:])
        best = np.minimum(after, INF)
    if best[count] >= INF:
        return None
    spread: dict[int, int] = {}
    left = count
    for i in range(len(costs) - 1, -1, -1):
        j = int(choices[i, left])
        if j:
            spread[costs[i].node] = j
            left -= j
    return int(best[count]), spread


def lower_bound(instance: Instance) -> LowerBound:
    """The bound over every waiting-pod kind, and the cheapest spread of each kind."""
    value = 0
    spread: dict[int, int] = {}
    all_costs: list[tuple[NodeCosts, ...]] = []
    for kind in range(len(instance.target_kinds)):
        costs = node_costs(instance, kind)
        all_costs.append(costs)
        found = _spread(costs, len(instance.target_kinds[kind].pods))
        if found is None:
            return LowerBound(None, {}, tuple(all_costs))
        value = max(value, found[0])
        for node, j in found[1].items():
            spread[node] = spread.get(node, 0) + j
    return LowerBound(value, spread, tuple(all_costs))
