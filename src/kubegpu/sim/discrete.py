"""The published table's columns from one run's curve, computed with the artifact's own arithmetic.

Follows hkust-adsl/kubernetes-scheduler-simulator experiments/analysis/merge_alloc_discrete.py (pandas 2.0.1,
numpy 1.24.3 per its requirements.txt): per scheduling event, arrive_ratio = round(arrived / total_gpus / 10, 0)
and alloc_ratio = round(used / total_gpus / 10, 2) with Python's round; column k is the mean alloc_ratio of
the events whose arrive_ratio is k (of those within k ± 1 when none is), rounded with numpy's round.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from kubegpu.scheduler.gpu.fragmentation import FloatArray

TOP_COLUMN = 130  # merge_alloc_discrete writes columns 0..130


def numpy_round(value: float, decimals: int) -> float:
    """round() of a numpy float64 (np.around): rint(value × 10^d) / 10^d, not Python's exact decimal rounding."""
    scale = 10.0**decimals
    return round(value * scale) / scale


def arrival_columns(arrived: Sequence[int], total_gpus: int) -> FloatArray:
    """Each event's column: round(arrived / total_gpus / 10, 0), the arrived GPU in whole percent."""
    columns: FloatArray = np.rint(np.asarray(arrived, dtype=np.int64) / total_gpus / 10)
    return columns


def _alloc_ratios(used: Sequence[int], total_gpus: int) -> FloatArray:
    """round(used / total_gpus / 10, 2) per event with Python's correctly rounded round (Series.apply)."""
    values, inverse = np.unique(np.asarray(used, dtype=np.int64), return_inverse=True)
    rounded = np.array([round(int(v) / total_gpus / 10, 2) for v in values.tolist()], dtype=np.float64)
    result: FloatArray = rounded[inverse.reshape(-1)]
    return result


def discretize(
    arrived: Sequence[int], allocated: Sequence[int], total_gpus: int, top: int = TOP_COLUMN
) -> dict[int, float]:
    """Column k (0..top) → allocation %: the mean over events at k% arrival (k ± 1 when none), as published.

    `arrived` and `allocated` are milli-GPU after each scheduling event; `total_gpus` is the cluster's GPUs.
    A column with no event within k ± 1 is absent, as it is in the published table.
    """
    if total_gpus <= 0 or not arrived:
        return {}
    arrive = arrival_columns(arrived, total_gpus)
    alloc = _alloc_ratios(allocated, total_gpus)
    out: dict[int, float] = {}
    for k in range(top + 1):
        chosen = alloc[arrive == k]
        if chosen.size == 0:
            chosen = alloc[(arrive >= k - 1) & (arrive <= k + 1)]
            if chosen.size == 0:
                continue
        # pandas' Series.mean: numpy's (pairwise) sum over the selection, divided by the count
        out[k] = numpy_round(float(np.sum(chosen)) / float(chosen.size), 2)
    return out
