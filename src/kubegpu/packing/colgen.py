"""Column generation for a packing problem: a master LP over the patterns found so far, exact pricing per
node class, and the Lagrangian dual bound that holds whenever the loop stops.

For task prices y (any y ≥ 0 on rows without a lower bound), every placement x satisfies
value(x) ≤ Σ_t b_t·y_t + Σ_c N_c · max(0, max over patterns p of class c of Σ_t (worth_t − y_t)·p_t),
with b_t the row's upper bound where y_t ≥ 0 and its lower bound where y_t < 0. Pricing answers the inner
maximum exactly (or an upper bound on it), so the bound is sound for any y; at the LP optimum it equals it.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import highspy
import numpy as np
import numpy.typing as npt

from kubegpu.errors import ModelError
from kubegpu.packing.highs import new_solver, set_row_bounds
from kubegpu.packing.model import PENALTY, PackingProblem, fits
from kubegpu.packing.pricing import FloatArray, Priced, Pricer

IntArray = npt.NDArray[np.int64]
REDUCED_EPS = 1e-6  # a pattern joins the master when its reduced cost is above this (objective units)
SMOOTHING = 0.7  # weight of the best prices so far in the prices the pricers see
SLACK = 1e-6  # relative safety margin added to every dual bound against floating-point error


@dataclass(frozen=True)
class Bound:
    """The result for one count vector: `value` is a sound upper bound on the objective of every placement;
    `primal` is what the master LP reaches with the patterns found (a lower bound on the LP optimum)."""

    value: float
    primal: float
    iterations: int
    columns: int

    @property
    def gap(self) -> float:
        """How far the bound may be above the LP optimum (objective units)."""
        return max(0.0, self.value - self.primal)


@dataclass(frozen=True)
class DualPoint:
    """Task prices and the best pattern profit of each node class at those prices: a dual bound for any
    counts (`bound_for`)."""

    prices: FloatArray
    class_profit: FloatArray

    def bound_for(self, lower: IntArray, upper: IntArray, nodes: IntArray) -> float:
        """Σ_t b_t·y_t + Σ_c N_c · max(0, profit_c) for these row bounds and node counts."""
        y = self.prices
        rhs = np.where(y >= 0, upper, lower)
        raw = float(rhs @ y + nodes @ np.maximum(self.class_profit, 0.0))
        return raw + SLACK * (abs(raw) + 1.0)


class ColumnGeneration:
    """The master LP and one pricer per node class; patterns and dual points carry over between solves."""

    def __init__(self, problem: PackingProblem, caps: Sequence[int] | None = None, time_limit: float = 0.0) -> None:
        self.problem = problem
        n_types = len(problem.types)
        self.worth = np.array([t.worth for t in problem.types], dtype=np.float64)
        self.nodes = np.array([c.count for c in problem.classes], dtype=np.int64)
        limit = caps if caps is not None else [t.available for t in problem.types]
        self.pricers = [Pricer(problem, i, limit, time_limit) for i in range(len(problem.classes))]
        self.patterns: set[tuple[int, tuple[int, ...]]] = set()
        self.points: list[DualPoint] = []
        master = new_solver()
        inf = highspy.kHighsInf
        master.changeObjectiveSense(highspy.ObjSense.kMaximize)
        for t in problem.types:
            master.addRow(-inf, float(t.available), 0, np.array([], np.int32), np.array([], np.float64))
        for c in problem.classes:
            master.addRow(-inf, float(c.count), 0, np.array([], np.int32), np.array([], np.float64))
        for row, task in enumerate(problem.types):
            if task.required:
                master.addCol(-PENALTY, 0.0, inf, 1, np.array([row], np.int32), np.array([1.0]))
        self.master = master
        self.n_types = n_types

    def add_pattern(self, node_class: int, counts: Sequence[int]) -> bool:
        """Add a pattern (task counts on one node of the class) to the master; False when already there."""
        key = (node_class, tuple(int(n) for n in counts))
        if key in self.patterns:
            return False
        if not fits(self.problem.classes[node_class], self.problem.types, key[1]):
            raise ModelError(f"pattern {key[1]} does not fit node class {self.problem.classes[node_class].name}")
        self.patterns.add(key)
        rows = [t for t, n in enumerate(key[1]) if n]
        index = np.array([*rows, self.n_types + node_class], dtype=np.int32)
        value = np.array([float(key[1][t]) for t in rows] + [1.0])
        cost = float(sum(self.worth[t] * key[1][t] for t in rows))
        self.master.addCol(cost, 0.0, highspy.kHighsInf, len(index), index, value)
        return True

    def price(self, y: FloatArray) -> list[Priced]:
        """Exact pricing of every node class at task prices y."""
        profit = self.worth - y
        return [p.best(profit) for p in self.pricers]

    def add_point(self, prices: FloatArray) -> DualPoint:
        """Price every node class at these task prices and keep the dual point (a bound for any counts)."""
        priced = self.price(prices)
        point = DualPoint(prices, np.array([p.upper for p in priced]))
        self.points.append(point)
        for c, p in enumerate(priced):
            if any(p.counts):
                self.add_pattern(c, p.counts)
        return point

    def pooled_bound(self, lower: IntArray, upper: IntArray) -> float:
        """The best dual bound the prices seen so far give for these row bounds (inf when none yet)."""
        return min((p.bound_for(lower, upper, self.nodes) for p in self.points), default=float("inf"))

    def _master(self, lower: IntArray) -> tuple[float, FloatArray, FloatArray]:
        master = self.master
        if master.getNumCol() == 0:
            return 0.0, np.zeros(self.n_types), np.zeros(len(self.nodes))
        master.run()
        status = master.getModelStatus()
        if status != highspy.HighsModelStatus.kOptimal:
            raise ModelError(f"the packing LP stopped: {master.modelStatusToString(status)}")
        solution = master.getSolution()
        duals = np.asarray(solution.row_dual, dtype=np.float64)
        y = duals[: self.n_types].copy()
        y = np.where(lower > 0, y, np.maximum(y, 0.0))
        return float(master.getInfo().objective_function_value), y, duals[self.n_types :]

    def solve(
        self, lower: IntArray, upper: IntArray, tolerance: float, max_rounds: int = 200, budget: float = 0.0
    ) -> Bound:
        """Generate columns until the dual bound is within `tolerance` of the master's value (or no pattern
        improves it, or `max_rounds` pass, or `budget` seconds when given); the bound is sound in every case.

        Prices are smoothed towards the prices of the best bound so far (Wentges): the master's own prices
        swing from round to round, and pricing at a point between the two converges in far fewer rounds.
        """
        inf = highspy.kHighsInf
        master = self.master
        rows = np.arange(self.n_types, dtype=np.int32)
        set_row_bounds(master, rows, np.where(lower > 0, lower, -inf).astype(np.float64), upper.astype(np.float64))
        best = float("inf")
        center: FloatArray | None = None
        for point in self.points:
            value = point.bound_for(lower, upper, self.nodes)
            if value < best:
                best, center = value, point.prices
        primal = 0.0
        rounds = 0
        smoothing = SMOOTHING
        deadline = time.monotonic() + budget if budget > 0 else float("inf")
        while rounds < max_rounds and time.monotonic() < deadline:
            rounds += 1
            primal, y, pi = self._master(lower)
            if best - primal <= tolerance:
                break
            trial = y if center is None else smoothing * center + (1 - smoothing) * y
            priced = self.price(trial)
            point = DualPoint(trial, np.array([p.upper for p in priced]))
            self.points.append(point)
            value = point.bound_for(lower, upper, self.nodes)
            if value < best:
                best, center = value, trial
            added = 0
            for c, p in enumerate(priced):
                reduced = float((self.worth - y) @ np.asarray(p.counts, dtype=np.float64)) - pi[c]
                if reduced > REDUCED_EPS and self.add_pattern(c, p.counts):
                    added += 1
            if added == 0:
                if smoothing == 0.0:
                    break
                smoothing = 0.0  # the smoothed prices found nothing: price at the master's own once
            else:
                smoothing = SMOOTHING
        return Bound(best, primal, rounds, len(self.patterns))
