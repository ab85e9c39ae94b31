"""The few HiGHS calls kubegpu makes, in one place: a quiet single-threaded solver and bulk row bounds.

highspy (the HiGHS project's Python interface) ships partial type information; the gaps are bridged here.
"""

from __future__ import annotations

import highspy
import numpy as np
import numpy.typing as npt


def new_solver() -> highspy.Highs:
    """A silent, single-threaded HiGHS instance (kubegpu's runs are parallel by process, if at all)."""
    solver = highspy.Highs()  # type: ignore[no-untyped-call]
    solver.silent()
    solver.setOptionValue("threads", 1)
    return solver


def set_row_bounds(
    solver: highspy.Highs, rows: npt.NDArray[np.int32], lower: npt.NDArray[np.float64], upper: npt.NDArray[np.float64]
) -> None:
    """Change the bounds of many rows at once."""
    solver.changeRowsBounds(len(rows), rows, lower, upper)  # type: ignore[attr-defined]


def set_col_costs(solver: highspy.Highs, cols: npt.NDArray[np.int32], cost: npt.NDArray[np.float64]) -> None:
    """Change the objective coefficients of many columns at once."""
    solver.changeColsCost(len(cols), cols, cost)


def set_col_bounds(
    solver: highspy.Highs, cols: npt.NDArray[np.int32], lower: npt.NDArray[np.float64], upper: npt.NDArray[np.float64]
) -> None:
    """Change the bounds of many columns at once."""
    solver.changeColsBounds(len(cols), cols, lower, upper)
