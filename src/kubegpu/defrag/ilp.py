"""The defrag integer program (HiGHS): which pods to evict, where each goes again, where the waiting pods go.

Objective, lexicographic through weights: fewest evictions (proved when the solver finishes), then, as far as
the solver gets, fewest evicted pods left unplaced, then fewest GPUs moved. Variables: per group of
interchangeable lone pods (same kind, node and budget), how many to evict; per pod group, whether to evict it
(and whether to leave it unplaced); per pod kind and node, how many evicted pods of the kind go there, and how
many are left unplaced; per waiting-pod kind and node, how many waiting pods go there.
Rows: every evicted pod placed once or left unplaced (only pods below the waiting pods' priority), every
waiting pod placed, each node's room in every resource, each budget's allowance, pod groups whole.
The search may restrict it to a window: evictions on some nodes only, pods placed on some nodes only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import highspy
import numpy as np

from kubegpu.defrag.problem import BoolArray, Instance, IntArray
from kubegpu.packing.highs import new_solver

# The objective is evictions × EVICTION_WEIGHT + the tie-breaks (pods left waiting, GPUs moved), whose total is
# below EVICTION_WEIGHT / TIE_SHARE: the solver may stop once its dual bound is within half an eviction of the
# plan, which proves the number of evictions (not the tie-breaks) the fewest.
TIE_SHARE = 1000
STOP_GAP = 0.5  # in evictions
FEASIBLE = 2  # HiGHS's kSolutionStatusFeasible: the solver holds a plan


@dataclass(frozen=True)
class Scope:
    """Where the program may act: nodes whose pods may be evicted, nodes that may take pods, and placements a
    replay refused (kind index or waiting-pod kind index, node)."""

    evict: BoolArray
    receive: BoolArray
    banned_kinds: frozenset[tuple[int, int]] = frozenset()
    banned_targets: frozenset[tuple[int, int]] = frozenset()


@dataclass(frozen=True)
class Solution:
    """A plan: evicted candidates, those left unplaced, where the others go, where the waiting pods go."""

    evicted: tuple[int, ...]
    lost: tuple[int, ...]
    moves: tuple[tuple[int, int], ...]  # (candidate, node)
    placements: tuple[tuple[int, int], ...]  # (waiting pod index in Target.pods, node)
    optimal: bool  # proved optimal within its scope
    bound: int  # within its scope, no plan has fewer evictions


@dataclass
class _Model:
    """Columns and rows as HiGHS takes them (column-wise sparse matrix)."""

    cost: list[float] = field(default_factory=list)
    upper: list[float] = field(default_factory=list)
    entries: list[list[tuple[int, float]]] = field(default_factory=list)
    row_lower: list[float] = field(default_factory=list)
    row_upper: list[float] = field(default_factory=list)

    def column(self, cost: float, upper: float) -> int:
        self.cost.append(cost)
        self.upper.append(upper)
        self.entries.append([])
        return len(self.cost) - 1

    def row(self, terms: Sequence[tuple[int, float]], lower: float, upper: float) -> None:
        r = len(self.row_lower)
        self.row_lower.append(lower)
        self.row_upper.append(upper)
        for column, value in terms:
            if value:
                self.entries[column].append((r, value))

    def lp(self) -> highspy.HighsLp:
        lp = highspy.HighsLp()
        lp.num_col_ = len(self.cost)
        lp.num_row_ = len(self.row_lower)
        lp.col_cost_ = np.array(self.cost, dtype=np.float64)
        lp.col_lower_ = np.zeros(len(self.cost))
        lp.col_upper_ = np.array(self.upper, dtype=np.float64)
        lp.row_lower_ = np.array(self.row_lower, dtype=np.float64)
        lp.row_upper_ = np.array(self.row_upper, dtype=np.float64)
        starts = [0]
        index: list[int] = []
        value: list[float] = []
        for column in self.entries:
            for r, v in column:
                index.append(r)
                value.append(v)
            starts.append(len(index))
        lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
        lp.a_matrix_.start_ = np.array(starts, dtype=np.int32)
        lp.a_matrix_.index_ = np.array(index, dtype=np.int32)
        lp.a_matrix_.value_ = np.array(value, dtype=np.float64)
        lp.integrality_ = [highspy.HighsVarType.kInteger] * len(self.cost)
        return lp


class _Program:
    """The program of one scope: its columns by meaning, its rows, and how to read a solution back."""

    def __init__(self, instance: Instance, scope: Scope, allow_loss: bool) -> None:
        self.instance = instance
        self.model = _Model()
        candidates = instance.candidates
        in_scope = [
            u for u, unit in enumerate(instance.units) if any(scope.evict[candidates[c].node] for c in unit.members)
        ]
        self.lone: dict[tuple[int, int, str], list[int]] = {}  # (kind, node, budget) -> interchangeable pods
        self.gangs: list[int] = []
        for u in in_scope:
            unit = instance.units[u]
            if unit.group is None:
                cand = candidates[unit.members[0]]
                self.lone.setdefault((cand.kind, cand.node, cand.budget), []).append(unit.members[0])
            else:
                self.gangs.append(u)
        self.moving = [c for u in in_scope for c in instance.units[u].members]
        gpus = sum(instance.kinds[candidates[c].kind].gpus for c in self.moving)
        self.weight_lost = 1.0 + gpus
        self.tie_max = self.weight_lost * len(self.moving) + gpus  # the most the tie-breaks can add
        self.weight_evict = TIE_SHARE * (1.0 + self.tie_max)
        self.lone_cols: dict[tuple[int, int, str], int] = {}
        self.gang_cols: dict[int, int] = {}
        self.gang_lost: dict[int, int] = {}
        self.place_cols: dict[tuple[int, int], int] = {}
        self.lost_cols: dict[int, int] = {}
        self.target_cols: dict[tuple[int, int], int] = {}
        self._columns(scope, allow_loss)
        self._balance()
        self._room()
        self._budgets()

    def _columns(self, scope: Scope, allow_loss: bool) -> None:
        instance, model = self.instance, self.model
        candidates, kinds = instance.candidates, instance.kinds
        for key in sorted(self.lone):
            self.lone_cols[key] = model.column(self.weight_evict + kinds[key[0]].gpus, len(self.lone[key]))
        for u in self.gangs:
            members = instance.units[u].members
            gpus = sum(kinds[candidates[c].kind].gpus for c in members)
            self.gang_cols[u] = model.column(self.weight_evict * len(members) + gpus, 1)
            if allow_loss and all(kinds[candidates[c].kind].lossable for c in members):
                self.gang_lost[u] = model.column(self.weight_lost * len(members), 1)
        receive = scope.receive & instance.receivable
        self.kinds_used = sorted({candidates[c].kind for c in self.moving})
        for k in self.kinds_used:
            count = sum(1 for c in self.moving if candidates[c].kind == k)
            for n in np.flatnonzero(receive & kinds[k].eligible):
                if (k, int(n)) not in scope.banned_kinds:
                    self.place_cols[(k, int(n))] = model.column(0.0, count)
            lone_count = sum(len(v) for key, v in self.lone.items() if key[0] == k)
            if allow_loss and kinds[k].lossable and lone_count:
                self.lost_cols[k] = model.column(self.weight_lost, lone_count)
        for t, tkind in enumerate(instance.target_kinds):
            for n in np.flatnonzero(receive & tkind.eligible):
                if (t, int(n)) not in scope.banned_targets:
                    self.target_cols[(t, int(n))] = model.column(0.0, len(tkind.pods))

    def _balance(self) -> None:
        """Every evicted pod of a kind is placed once or left unplaced; every waiting pod is placed."""
        instance, model = self.instance, self.model
        candidates = instance.candidates
        for k in self.kinds_used:
            lone_terms = [(col, -1.0) for key, col in self.lone_cols.items() if key[0] == k]
            terms: list[tuple[int, float]] = [(col, 1.0) for (kk, _), col in self.place_cols.items() if kk == k]
            if k in self.lost_cols:
                terms.append((self.lost_cols[k], 1.0))
                model.row([(self.lost_cols[k], 1.0), *lone_terms], -np.inf, 0.0)  # only lone pods are counted here
            terms += lone_terms
            for u in self.gangs:
                count = sum(1 for c in instance.units[u].members if candidates[c].kind == k)
                if count:
                    terms.append((self.gang_cols[u], -float(count)))
                    if u in self.gang_lost:
                        terms.append((self.gang_lost[u], float(count)))
            model.row(terms, 0.0, 0.0)
        for u, col in self.gang_lost.items():
            model.row([(col, 1.0), (self.gang_cols[u], -1.0)], -np.inf, 0.0)
        for t, tkind in enumerate(instance.target_kinds):
            wanted = float(len(tkind.pods))
            model.row([(col, 1.0) for (tt, _), col in self.target_cols.items() if tt == t], wanted, wanted)

    def _room(self) -> None:
        """What arrives on a node fits what is free there plus what leaves it, in every resource."""
        instance = self.instance
        kinds, candidates = instance.kinds, instance.candidates
        arriving: dict[int, list[tuple[int, IntArray]]] = {}
        for (k, n), col in self.place_cols.items():
            arriving.setdefault(n, []).append((col, kinds[k].requests))
        for (t, n), col in self.target_cols.items():
            arriving.setdefault(n, []).append((col, instance.target_kinds[t].requests))
        leaving: dict[int, list[tuple[int, IntArray]]] = {}
        for key, col in self.lone_cols.items():
            leaving.setdefault(key[1], []).append((col, kinds[key[0]].requests))
        for u in self.gangs:
            by_node: dict[int, IntArray] = {}
            for c in instance.units[u].members:
                cand = candidates[c]
                by_node[cand.node] = by_node.get(cand.node, np.zeros_like(kinds[cand.kind].requests))
                by_node[cand.node] = by_node[cand.node] + kinds[cand.kind].requests
            for n, total in by_node.items():
                leaving.setdefault(n, []).append((self.gang_cols[u], total))
        free = instance.alloc - instance.used
        for n, arrivals in arriving.items():
            for r in range(len(instance.resources)):
                terms = [(col, float(req[r])) for col, req in arrivals if req[r] > 0]
                if terms:
                    terms += [(col, -float(req[r])) for col, req in leaving.get(n, []) if req[r] > 0]
                    self.model.row(terms, -np.inf, float(free[n, r]))

    def _budgets(self) -> None:
        """Evictions that draw on one PodDisruptionBudget stay within its allowance."""
        instance = self.instance
        for name, allowance in instance.allowances.items():
            terms = [(col, 1.0) for key, col in self.lone_cols.items() if key[2] == name]
            for u in self.gangs:
                count = sum(1 for c in instance.units[u].members if instance.candidates[c].budget == name)
                if count:
                    terms.append((self.gang_cols[u], float(count)))
            if terms:
                self.model.row(terms, -np.inf, float(allowance.allowed))


def solve(instance: Instance, scope: Scope, allow_loss: bool, time_limit: float) -> tuple[Solution | None, bool]:
    """The best plan within `scope` found in `time_limit` seconds, or None; and whether the solver proved that no
    plan exists in the scope (else none was found in time)."""
    program = _Program(instance, scope, allow_loss)
    solver = new_solver()
    solver.setOptionValue("mip_rel_gap", 0.0)
    solver.setOptionValue("mip_abs_gap", STOP_GAP * program.weight_evict)
    solver.setOptionValue("time_limit", max(0.05, time_limit))
    solver.passModel(program.model.lp())
    solver.run()
    status = solver.getModelStatus()
    info = solver.getInfo()
    if status not in (highspy.HighsModelStatus.kOptimal, highspy.HighsModelStatus.kTimeLimit):
        refuted = (highspy.HighsModelStatus.kInfeasible, highspy.HighsModelStatus.kUnboundedOrInfeasible)
        return None, status in refuted
    if info.primal_solution_status != FEASIBLE:
        return None, False
    values = np.rint(np.asarray(solver.getSolution().col_value)).astype(np.int64)
    optimal = status == highspy.HighsModelStatus.kOptimal
    dual = float(info.objective_function_value) if optimal else float(info.mip_dual_bound)
    # every plan's objective is at least `dual`, and at most its evictions × weight + tie_max
    bound = max(0, int(np.ceil((dual - program.tie_max) / program.weight_evict - 1e-6)))
    return _extract(program, values, optimal, bound), False


def _extract(program: _Program, values: IntArray, optimal: bool, bound: int) -> Solution:
    """Name the pods: which of a group of interchangeable pods go, which are left unplaced, where each goes."""
    instance = program.instance
    lone, lone_cols, gang_cols, gang_lost = program.lone, program.lone_cols, program.gang_cols, program.gang_lost
    place_cols, lost_cols, target_cols = program.place_cols, program.lost_cols, program.target_cols
    candidates = instance.candidates
    evicted: list[int] = []
    lost: list[int] = []
    lone_evicted: dict[int, list[int]] = {}
    for key, col in lone_cols.items():
        chosen = sorted(lone[key], key=lambda c: candidates[c].pod.key)[: int(values[col])]
        evicted += chosen
        lone_evicted.setdefault(key[0], []).extend(chosen)
    placing: dict[int, list[int]] = {}
    for u, col in gang_cols.items():
        if values[col]:
            members = list(instance.units[u].members)
            evicted += members
            if u in gang_lost and values[gang_lost[u]]:
                lost += members
            else:
                for c in members:
                    placing.setdefault(candidates[c].kind, []).append(c)
    for k, chosen in lone_evicted.items():
        count = int(values[lost_cols[k]]) if k in lost_cols else 0
        ordered = sorted(chosen, key=lambda c: (candidates[c].priority, candidates[c].pod.key))
        lost += ordered[:count]
        placing.setdefault(k, []).extend(ordered[count:])
    moves: list[tuple[int, int]] = []
    for k, pods in placing.items():
        slots: dict[int, int] = {n: int(values[col]) for (kk, n), col in place_cols.items() if kk == k and values[col]}
        waiting = sorted(pods, key=lambda c: candidates[c].pod.key)
        rest = []
        for c in waiting:  # a pod whose own node takes one of its kind goes back there
            home = candidates[c].node
            if slots.get(home, 0) > 0:
                slots[home] -= 1
                moves.append((c, home))
            else:
                rest.append(c)
        free_slots = [n for n in sorted(slots) for _ in range(slots[n])]
        moves += list(zip(rest, free_slots, strict=True))
    placements: list[tuple[int, int]] = []
    for t, tkind in enumerate(instance.target_kinds):
        slots_t = [n for (tt, n), col in sorted(target_cols.items()) if tt == t for _ in range(int(values[col]))]
        placements += list(zip(tkind.pods, slots_t, strict=True))
    return Solution(
        evicted=tuple(sorted(evicted, key=lambda c: candidates[c].pod.key)),
        lost=tuple(sorted(lost, key=lambda c: candidates[c].pod.key)),
        moves=tuple(sorted(moves, key=lambda m: candidates[m[0]].pod.key)),
        placements=tuple(placements),
        optimal=optimal,
        bound=bound,
    )
