"""A lower bound on the evictions any plan needs, node by node: the fewest pods that must leave a node before
it has room for j waiting pods, then the cheapest way to spread the waiting pods over nodes.

On one node, making room in each resource takes at least as many evictions as the largest requests of that
resource need to cover its shortfall; the node's cost is the largest of these counts. Pod groups cost only
their pods on the node, and budgets allow everything: each relaxation can only lower the bound, so it holds for
every plan. For waiting pods of several kinds, the bound is the largest of the kinds' bounds.

Evicted pods that must run again are assumed to find room, with one exception that tightens the bound where
defrag is needed most. A GPU pod is homeless when no node has room for it now: wherever it runs again, at least
one pod must leave that node first. When a node that takes a waiting pod has no GPU left for a homeless pod,
its destination is another node, with an eviction the per-node costs do not count, and one node takes at most
as many GPUs as the largest node has. So each node either evicts no homeless pod (its cost among the other
pods) or at least its smallest one; the bound adds one eviction per node's worth of homeless GPUs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kubegpu.defrag.problem import BoolArray, Instance, IntArray

INF = np.iinfo(np.int64).max // 4


@dataclass(frozen=True)
class NodeCosts:
    """`costs[j]`: at least this many evictions on the node before j waiting pods of a kind fit (INF: never);
    `settled[j]`: the same without evicting a homeless pod; `homeless`: the GPUs of the smallest homeless pod
    on the node (0: none)."""

    node: int
    costs: IntArray
    settled: IntArray
    homeless: int = 0


@dataclass(frozen=True)
class LowerBound:
    """The bound (None: no plan exists, even evicting every pod that may leave) and, per node, how many waiting
    pods of each kind the cheapest spread puts there (the search's first window)."""

    evictions: int | None
    spread: dict[int, int]
    costs: tuple[tuple[NodeCosts, ...], ...]  # per waiting-pod kind, the candidate nodes


def _homeless(instance: Instance) -> BoolArray:
    """Candidates that must run again (not below the waiting pods' priority), ask for GPUs, and fit no node's
    free room now."""
    kinds = instance.kinds
    free = instance.free
    receivable = instance.receivable
    fits_somewhere = {}
    for k, kind in enumerate(kinds):
        room = np.all(free >= kind.requests, axis=1) & kind.eligible & receivable
        fits_somewhere[k] = bool(room.any())
    return np.array(
        [
            not kinds[c.kind].lossable and kinds[c.kind].gpus > 0 and not fits_somewhere[c.kind]
            for c in instance.candidates
        ],
        dtype=np.bool_,
    )


def _cover_costs(items: IntArray, room_now: IntArray, request: IntArray, most: int, count: int) -> IntArray:
    """Per j, the largest over resources of the fewest of `items` (largest first) whose removal makes room."""
    costs = np.full(count + 1, INF, dtype=np.int64)
    costs[0] = 0
    if not most:
        return costs
    ordered = -np.sort(-items, axis=0)  # each resource's largest requests first
    cumulative = np.cumsum(ordered, axis=0)
    for j in range(1, most + 1):
        short = request * j - room_now
        need = 0
        for r in np.flatnonzero(short > 0):
            if len(cumulative) == 0 or cumulative[-1, r] < short[r]:
                need = int(INF)
                break
            need = max(need, int(np.searchsorted(cumulative[:, r], short[r])) + 1)
        costs[j] = need
    return costs


def node_costs(instance: Instance, kind: int) -> tuple[NodeCosts, ...]:
    """Per node that admits the kind: the fewest evictions there before 0, 1, ... of its pods fit."""
    target = instance.target_kinds[kind]
    count = len(target.pods)
    request = target.requests
    wanted = request > 0
    by_node: dict[int, list[int]] = {}
    for i, candidate in enumerate(instance.candidates):
        by_node.setdefault(candidate.node, []).append(i)
    homeless = _homeless(instance)
    gpu_of = np.array([instance.kinds[c.kind].gpus for c in instance.candidates], dtype=np.int64)
    out: list[NodeCosts] = []
    usable: BoolArray = target.eligible & instance.receivable
    width = len(instance.resources)
    for n in np.flatnonzero(usable):
        node = int(n)
        members = by_node.get(node, [])
        items = (
            np.array([instance.kinds[instance.candidates[i].kind].requests for i in members], dtype=np.int64)
            if members
            else np.zeros((0, width), dtype=np.int64)
        )
        room_now = instance.alloc[node] - instance.used[node]
        room_all = room_now + items.sum(axis=0)
        most = int(min(room_all[wanted] // request[wanted])) if wanted.any() else count
        most = max(0, min(most, count))
        costs = _cover_costs(items, room_now, request, most, count)
        away = np.array([homeless[i] for i in members], dtype=np.bool_)
        if away.any():
            settled = _cover_costs(items[~away], room_now, request, most, count)
            smallest = int(min(gpu_of[i] for i, h in zip(members, away, strict=True) if h))
        else:
            settled, smallest = costs, 0
        out.append(NodeCosts(node, costs, settled, smallest))
    return tuple(out)


def _gpu_column(instance: Instance, kind: int) -> int | None:
    """The index of the resource the waiting pods' GPUs are counted in."""
    shape = instance.target.pods[instance.target_kinds[kind].pods[0]].shape
    if shape.gpu_resource in instance.resources:
        return instance.resources.index(shape.gpu_resource)
    return None


def _with_homeless(instance: Instance, kind: int, costs: tuple[NodeCosts, ...]) -> int | None:
    """The tightened bound of one kind (None: it does not apply, or no spread exists)."""
    column = _gpu_column(instance, kind)
    if column is None or not any(c.homeless for c in costs):
        return None
    per_pod = int(instance.target_kinds[kind].requests[column])
    smallest = min(c.homeless for c in costs if c.homeless)
    largest = int(instance.alloc[:, column].max())
    if largest <= 0 or any(int(instance.alloc[c.node, column]) - per_pod >= smallest for c in costs):
        return None  # a node that takes a waiting pod may keep room for a homeless one
    count = len(instance.target_kinds[kind].pods)
    cap = largest * (count + 1)  # more homeless GPUs than this cost at least as much: counted as this many
    best = np.full((count + 1, cap + 1), INF, dtype=np.int64)
    best[0, 0] = 0
    for node in costs:
        after = best.copy()
        for j in range(1, count + 1):
            for cost, extra in ((node.settled[j], 0), (node.costs[j], node.homeless)):
                if cost >= INF:
                    continue
                shifted = np.full_like(best, INF)
                rows = count + 1 - j
                moved = best[:rows, :]
                if extra:
                    target = np.full_like(moved, INF)
                    if extra <= cap:
                        target[:, extra:] = moved[:, : cap + 1 - extra]
                    target[:, cap] = np.minimum(target[:, cap], moved[:, max(0, cap - extra) :].min(axis=1))
                    moved = target
                shifted[j:, :] = moved + cost
                after = np.minimum(after, shifted)
        best = np.minimum(after, INF)
    row = best[count]
    penalty = -(-np.arange(cap + 1) // largest)
    total = row + penalty
    value = int(total.min())
    return None if value >= INF else value


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
        value = max(value, found[0], _with_homeless(instance, kind, costs) or 0)
        for node, j in found[1].items():
            spread[node] = spread.get(node, 0) + j
    return LowerBound(value, spread, tuple(all_costs))
