"""Pricing: the most profitable set of tasks one node of a class can hold, solved exactly (HiGHS MIP).

Sharing tasks are packed onto GPUs through GPU fillings — maximal multisets of the sharing sizes that fit
one GPU — so the integer program holds exactly the patterns a node can take (no per-GPU symmetry); whole-GPU
tasks take GPUs of their own, and CPU, memory and pod slots are shared by all.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import highspy
import numpy as np
import numpy.typing as npt

from kubegpu.errors import ModelError
from kubegpu.packing.highs import new_solver
from kubegpu.packing.model import MILLI, NodeClass, PackingProblem, TaskType, per_node_limit

FloatArray = npt.NDArray[np.float64]
MAX_FILLINGS = 50_000  # more distinct sharing sizes than this allows are refused (openb: 1,871 at most)
PROFIT_EPS = 1e-9  # tasks whose profit is not above this never improve a pattern
MIP_GAP = 1e-7  # relative gap HiGHS closes; the bound uses its dual bound, so any gap stays sound


@lru_cache(maxsize=256)
def fillings(sizes: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    """Every maximal multiset of `sizes` (distinct, ascending, each < 1000) that fits one GPU, as counts.

    Any set of sharing tasks that fits one GPU is covered by one of these, so fillings are all a GPU needs.
    """
    if not sizes:
        return ()
    smallest = sizes[0]
    out: list[tuple[int, ...]] = []
    counts = [0] * len(sizes)

    def walk(i: int, room: int) -> None:
        if len(out) > MAX_FILLINGS:
            raise ModelError(f"too many ways to share a GPU among {len(sizes)} request sizes")
        if i == 0:  # as many of the smallest size as still fit: that is what makes the multiset maximal
            counts[0] = room // smallest
            if any(counts):
                out.append(tuple(counts))
            counts[0] = 0
            return
        for k in range(room // sizes[i], -1, -1):
            counts[i] = k
            walk(i - 1, room - k * sizes[i])
        counts[i] = 0

    walk(len(sizes) - 1, MILLI)
    return tuple(out)


@dataclass(frozen=True)
class Priced:
    """The best pattern found (`counts` per task type of the problem), its profit, and an upper bound on
    the profit of every pattern of the class (equal to `profit` when the search finished)."""

    counts: tuple[int, ...]
    profit: float
    upper: float


class Pricer:
    """Exact pricing for one node class: maximise Σ profit[t]·n[t] over the multisets n one node holds.

    `caps[t]` limits n[t] (no node can hold more copies than exist); types the class may not run are left out.
    """

    def __init__(self, problem: PackingProblem, index: int, caps: Sequence[int], time_limit: float = 0.0) -> None:
        self.node: NodeClass = problem.classes[index]
        self.types: tuple[TaskType, ...] = problem.types
        limits = [min(int(caps[t]), per_node_limit(problem, index, t)) for t in range(len(problem.types))]
        self.limits = np.array(limits, dtype=np.int64)
        self.solver = new_solver()
        self.solver.setOptionValue("mip_rel_gap", MIP_GAP)
        self.solver.setOptionValue("mip_abs_gap", 1e-6)
        self.solver.setOptionValue("presolve", "off")  # the models are small; presolve costs more than it saves
        if time_limit > 0:  # stopped early, the search still gives a sound upper bound (its dual bound)
            self.solver.setOptionValue("time_limit", time_limit)

    def best(self, profit: FloatArray) -> Priced:
        """The most profitable pattern for `profit` per copy (types with no positive profit are left out)."""
        items = [int(t) for t in np.flatnonzero((profit > PROFIT_EPS) & (self.limits > 0))]
        empty = (0,) * len(self.types)
        if not items:
            return Priced(empty, 0.0, 0.0)
        node = self.node
        sizes = tuple(sorted({self.types[t].gpu_milli for t in items if self.types[t].shares_gpu}))
        fills = fillings(sizes)
        size_row = {s: 4 + i for i, s in enumerate(sizes)}
        n_rows = 4 + len(sizes)
        n_cols = len(items) + len(fills)
        cost = np.zeros(n_cols)
        upper = np.zeros(n_cols)
        starts: list[int] = []
        index: list[int] = []
        value: list[float] = []
        for j, t in enumerate(items):
            task = self.types[t]
            cost[j] = profit[t]
            upper[j] = self.limits[t]
            starts.append(len(index))
            for row, coef in (
                (0, task.cpu_milli),
                (1, task.memory_mib),
                (2, 1),
                (3, task.whole_gpus),
                (size_row.get(task.gpu_milli, -1) if task.shares_gpu else -1, 1),
            ):
                if row >= 0 and coef:
                    index.append(row)
                    value.append(float(coef))
        for k, fill in enumerate(fills):
            j = len(items) + k
            upper[j] = node.gpus
            starts.append(len(index))
            index.append(3)
            value.append(1.0)
            for i, n in enumerate(fill):
                if n:
                    index.append(4 + i)
                    value.append(-float(n))
        lp = highspy.HighsLp()
        lp.num_col_ = n_cols
        lp.num_row_ = n_rows
        lp.sense_ = highspy.ObjSense.kMaximize
        lp.col_cost_ = cost
        lp.col_lower_ = np.zeros(n_cols)
        lp.col_upper_ = upper
        inf = highspy.kHighsInf
        lp.row_lower_ = np.full(n_rows, -inf)
        lp.row_upper_ = np.array([node.cpu_milli, node.memory_mib, node.pods, node.gpus] + [0] * len(sizes), float)
        lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
        lp.a_matrix_.start_ = np.array([*starts, len(index)], dtype=np.int32)
        lp.a_matrix_.index_ = np.array(index, dtype=np.int32)
        lp.a_matrix_.value_ = np.array(value)
        lp.integrality_ = [highspy.HighsVarType.kInteger] * n_cols
        solver = self.solver
        solver.clearModel()
        solver.passModel(lp)
        solver.run()
        status = solver.getModelStatus()
        if status not in (highspy.HighsModelStatus.kOptimal, highspy.HighsModelStatus.kTimeLimit):
            raise ModelError(f"pricing for node class {node.name} stopped: {solver.modelStatusToString(status)}")
        info = solver.getInfo()
        chosen = np.rint(np.asarray(solver.getSolution().col_value[: len(items)])).astype(np.int64)
        counts = [0] * len(self.types)
        for j, t in enumerate(items):
            counts[t] = int(chosen[j])
        found = float(sum(profit[t] * counts[t] for t in items))
        bound = max(found, float(info.mip_dual_bound), float(info.objective_function_value))
        return Priced(tuple(counts), found, bound)
