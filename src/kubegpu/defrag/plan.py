"""The plan: the fewest evictions found, where each evicted pod and each waiting pod goes, how far from the best
it can be, and what the replay through the scheduler and kubelet models checked.

A placement the replay refuses is excluded and the search runs again, a bounded number of times.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from kubegpu.defrag.gangs import group_name, pod_group
from kubegpu.defrag.ilp import Scope
from kubegpu.defrag.problem import Instance, Kept, build_instance, kept_counts
from kubegpu.defrag.replay import Replay, replay
from kubegpu.defrag.search import Found, search
from kubegpu.defrag.targets import Target
from kubegpu.live.model import ClusterSnapshot
from kubegpu.manifests.accelerators import DEFAULT_REGISTRY, AcceleratorRegistry

MAX_ROUNDS = 6  # searches after a replay refused a placement
DEFAULT_TIME_LIMIT = 8.0


@dataclass(frozen=True)
class Eviction:
    """One pod to evict: where it runs, where it goes again (None: left waiting, below the waiting pods'
    priority), its GPUs, the budget it draws on and its pod group."""

    pod: str
    node: str
    to: str | None
    gpus: int
    budget: str
    group: str
    priority: int


@dataclass(frozen=True)
class Plan:
    """What defrag answers for one target."""

    target: Target
    evictions: tuple[Eviction, ...]
    placements: tuple[tuple[str, str], ...]  # (waiting pod, node)
    found: bool  # a plan was found
    possible: bool  # False: no plan exists, even evicting every pod that may leave
    lower_bound: int | None
    optimal: bool
    method: str
    seconds: float
    nodes: int
    movable: int
    kept: tuple[Kept, ...]
    kept_summary: tuple[tuple[str, int], ...]
    kubelet_nodes: tuple[str, ...]
    notes: tuple[str, ...]

    @property
    def gap(self) -> int | None:
        """How many evictions more than the fewest possible this plan may take (0: proved the fewest)."""
        if not self.found or self.lower_bound is None:
            return None
        return 0 if self.optimal else max(0, len(self.evictions) - self.lower_bound)


def _bans(scope: Scope | None, instance: Instance, checked: Replay) -> Scope:
    """The placements refused so far (a pod kind or waiting-pod kind on a node), for the next search."""
    kinds = set(scope.banned_kinds) if scope else set()
    targets = set(scope.banned_targets) if scope else set()
    for refusal in checked.refusals:
        if refusal.candidate is not None:
            kinds.add((instance.candidates[refusal.candidate].kind, refusal.node))
        if refusal.target is not None:
            kind = next(t for t, k in enumerate(instance.target_kinds) if refusal.target in k.pods)
            targets.add((kind, refusal.node))
    everywhere = np.ones(len(instance.nodes), dtype=np.bool_)
    return Scope(everywhere, everywhere, frozenset(kinds), frozenset(targets))


def _plan(
    instance: Instance, found: Found, checked: Replay | None, notes: list[str], seconds: float, refused: bool
) -> Plan:
    """The plan as printed; `refused`: the replay refused an earlier plan (a later "no plan" is the models')."""
    candidates, nodes = instance.candidates, instance.nodes
    solution = found.solution if checked is not None else None
    evictions: list[Eviction] = []
    placements: list[tuple[str, str]] = []
    if solution is not None:
        where = dict(solution.moves)
        for c in solution.evicted:
            cand = candidates[c]
            to = where.get(c)
            group = pod_group(cand.pod)
            evictions.append(
                Eviction(
                    pod=cand.pod.key,
                    node=nodes[cand.node].name,
                    to=None if to is None else nodes[to].name,
                    gpus=instance.kinds[cand.kind].gpus,
                    budget=cand.budget,
                    group=group_name(group) if group else "",
                    priority=cand.priority,
                )
            )
        placements = [(instance.target.pods[i].name, nodes[n].name) for i, n in solution.placements]
    elif found.solution is not None or refused:
        notes.append("every plan found was refused by the replay through the scheduler and kubelet models")
    if checked is not None:
        notes += list(checked.notes)
    return Plan(
        target=instance.target,
        evictions=tuple(evictions),
        placements=tuple(placements),
        found=solution is not None,
        possible=found.bound is not None or refused,
        lower_bound=found.bound,
        optimal=found.optimal and solution is not None,
        method=found.method,
        seconds=seconds,
        nodes=len(nodes),
        movable=len(candidates),
        kept=instance.kept,
        kept_summary=tuple(kept_counts(instance)),
        kubelet_nodes=checked.kubelet_nodes if checked is not None else (),
        notes=tuple(notes),
    )


def make_plan(
    snapshot: ClusterSnapshot,
    target: Target,
    time_limit: float = DEFAULT_TIME_LIMIT,
    registry: AcceleratorRegistry = DEFAULT_REGISTRY,
) -> Plan:
    """The plan for `target`: searched, replayed, searched again without what the replay refused."""
    started = time.monotonic()
    instance = build_instance(snapshot, target, registry)
    notes = list(target.notes) + list(instance.notes)
    bans: Scope | None = None
    found: Found | None = None
    checked: Replay | None = None
    for _ in range(MAX_ROUNDS):
        left = max(0.5, time_limit - (time.monotonic() - started))
        found = search(instance, left, bans)
        if found.solution is None:
            break
        checked = replay(instance, found.solution)
        if not checked.refusals:
            break
        notes += [f"the replay refused a placement, searched again without it: {r.why}" for r in checked.refusals]
        bans = _bans(bans, instance, checked)
        checked = None
    assert found is not None
    return _plan(instance, found, checked, notes, time.monotonic() - started, bans is not None)
