"""The class LP: a compact relaxation in which each node class pools the CPU, memory and pod slots of its
nodes while GPUs are still packed one by one — whole-GPU tasks take GPUs of their own, sharing tasks fill a
GPU through a filling (a maximal multiset of sharing sizes that fits 1000 milli).

Every placement of tasks on nodes is a solution (its per-class sums, and one filling covering each shared
GPU), so the LP optimum bounds them all. Its value is recomputed from the duals with a correction for any
dual infeasibility, so the bound does not rest on the solver's tolerances.
"""

from __future__ import annotations

from dataclasses import dataclass

import highspy
import numpy as np
import numpy.typing as npt

from kubegpu.errors import ModelError
from kubegpu.packing.highs import new_solver, set_col_bounds, set_row_bounds
from kubegpu.packing.model import PENALTY, PackingProblem, per_node_limit
from kubegpu.packing.pricing import FloatArray, fillings

IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True)
class ClassBound:
    """A sound bound from the class LP (`value`), the LP's own optimum (`primal`), the task prices (the
    duals of the task rows), which price node patterns in `ColumnGeneration`, and the tasks of each type the
    LP's solution places (`placed`)."""

    value: float
    primal: float
    prices: FloatArray
    placed: FloatArray


class ClassLP:
    """The class LP of a problem, built once; `solve` changes only the task rows' bounds (warm start)."""

    def __init__(self, problem: PackingProblem) -> None:
        self.problem = problem
        n_types = len(problem.types)
        self.n_types = n_types
        cost: list[float] = []
        upper: list[float] = []
        starts: list[int] = []
        index: list[int] = []
        value: list[float] = []
        row_upper: list[float] = [0.0] * n_types  # task rows first; set by solve
        for c, node in enumerate(problem.classes):
            base = len(row_upper)
            row_upper += [
                float(node.count * node.cpu_milli),
                float(node.count * node.memory_mib),
                float(node.count * node.pods),
                float(node.count * node.gpus),
            ]
            limits = [per_node_limit(problem, c, t) for t in range(n_types)]
            sizes = tuple(
                sorted({task.gpu_milli for t, task in enumerate(problem.types) if limits[t] and task.shares_gpu})
            )
            size_row = {s: len(row_upper) + i for i, s in enumerate(sizes)}
            row_upper += [0.0] * len(sizes)
            for t, task in enumerate(problem.types):
                if not limits[t] or node.count == 0:
                    continue
                cost.append(float(task.worth))
                upper.append(float(node.count * limits[t]))
                starts.append(len(index))
                entries = [
                    (t, 1),
                    (base, task.cpu_milli),
                    (base + 1, task.memory_mib),
                    (base + 2, 1),
                    (base + 3, task.whole_gpus),
                ]
                if task.shares_gpu:
                    entries.append((size_row[task.gpu_milli], 1))
                for row, coef in entries:
                    if coef:
                        index.append(row)
                        value.append(float(coef))
            if node.count == 0 or node.gpus == 0:
                continue
            for fill in fillings(sizes):
                cost.append(0.0)
                upper.append(float(node.count * node.gpus))
                starts.append(len(index))
                index.append(base + 3)
                value.append(1.0)
                for i, n in enumerate(fill):
                    if n:
                        index.append(size_row[sizes[i]])
                        value.append(-float(n))
        # one column per type stands in for required tasks that no class can take, so the LP stays feasible
        # whatever lower bounds `solve` is given (its upper bound is set there: the type's lower bound)
        self.penalty_cols = np.arange(len(cost), len(cost) + n_types, dtype=np.int32)
        for t, task in enumerate(problem.types):
            cost.append(-PENALTY)
            upper.append(float(task.required))
            starts.append(len(index))
            index.append(t)
            value.append(1.0)
        n_cols = len(cost)
        lp = highspy.HighsLp()
        lp.num_col_ = n_cols
        lp.num_row_ = len(row_upper)
        lp.sense_ = highspy.ObjSense.kMaximize
        lp.col_cost_ = np.array(cost)
        lp.col_lower_ = np.zeros(n_cols)
        lp.col_upper_ = np.array(upper)
        lp.row_lower_ = np.full(len(row_upper), -highspy.kHighsInf)
        lp.row_upper_ = np.array(row_upper)
        lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
        lp.a_matrix_.start_ = np.array([*starts, len(index)], dtype=np.int32)
        lp.a_matrix_.index_ = np.array(index, dtype=np.int32)
        lp.a_matrix_.value_ = np.array(value)
        self.cost = lp.col_cost_.copy()
        self.col_upper = np.array(lp.col_upper_, dtype=np.float64)
        self.row_upper = lp.row_upper_.copy()
        self.entries = (
            np.repeat(np.arange(n_cols), np.diff(np.array([*starts, len(index)]))),
            np.array(index, dtype=np.int64),
            np.array(value),
        )
        solver = new_solver()
        solver.passModel(lp)
        self.solver = solver

    def _dual_bound(self, y: FloatArray, lower: IntArray, upper: IntArray) -> float:
        """Weak duality made rigorous: Σ rows b·y plus, for each column, its positive reduced cost times
        its upper bound (zero when y is dual feasible)."""
        rhs = self.row_upper.copy()
        rhs[: self.n_types] = np.where(y[: self.n_types] >= 0, upper, lower)
        col_of, index, value = self.entries
        used = np.bincount(col_of, weights=value * y[index], minlength=len(self.cost))
        reduced = np.maximum(self.cost - used, 0.0)
        return float(rhs @ y + reduced @ self.col_upper)

    def solve(self, lower: IntArray, upper: IntArray) -> ClassBound:
        """The class LP for task counts between `lower` and `upper`."""
        solver = self.solver
        inf = highspy.kHighsInf
        rows = np.arange(self.n_types, dtype=np.int32)
        set_row_bounds(solver, rows, np.where(lower > 0, lower, -inf).astype(np.float64), upper.astype(np.float64))
        shortfall = np.maximum(lower, 0).astype(np.float64)
        set_col_bounds(solver, self.penalty_cols, np.zeros(self.n_types), shortfall)
        self.col_upper[self.penalty_cols] = shortfall
        if solver.getNumCol() == 0:
            return ClassBound(0.0, 0.0, np.zeros(self.n_types), np.zeros(self.n_types))
        solver.run()
        status = solver.getModelStatus()
        if status != highspy.HighsModelStatus.kOptimal:
            raise ModelError(f"the class LP stopped: {solver.modelStatusToString(status)}")
        solution = solver.getSolution()
        y = np.asarray(solution.row_dual, dtype=np.float64)
        placed = np.asarray(solution.row_value[: self.n_types], dtype=np.float64)
        # prices of rows without a lower bound are ≥ 0 in any dual solution; clip round-off
        clip = np.ones(len(y), dtype=np.bool_)
        clip[: self.n_types] = lower <= 0
        y = np.where(clip, np.maximum(y, 0.0), y)
        primal = float(solver.getInfo().objective_function_value)
        value = self._dual_bound(y, lower, upper)
        return ClassBound(value, primal, y[: self.n_types].copy(), placed)
