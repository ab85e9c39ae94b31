"""The FGD authors' published runs and how one of our runs compares with its published row.

Reads experiments/analysis/expected_results/analysis_allo_discrete.csv of hkust-adsl/kubernetes-scheduler-simulator
(workload, sc_policy, tune, seed, total_gpus, then the allocation % at arrived 0..130 % of GPU capacity).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from kubegpu.errors import InputError
from kubegpu.scheduler.gpu.registry import ARTIFACT_LABELS
from kubegpu.sim.traces.files import read_text

WORKLOAD_PREFIX = "openb_pod_list_"
MAX_PUBLISHED_ROWS = 100_000  # the published file has 1,020; a bound on what a hostile file may hold
RunKey = tuple[str, str, float, int]  # (workload, policy, tuning ratio, seed)


@dataclass(frozen=True)
class PublishedRuns:
    """Every published run: (workload, policy, tuning ratio, seed) → column (arrived %) → allocation %."""

    rows: Mapping[RunKey, Mapping[int, float]]

    def row(self, workload: str, policy: str, tune: float, seed: int) -> Mapping[int, float] | None:
        """One run's published columns (tuned to `tune` × GPU capacity), or None when not published."""
        return self.rows.get((workload, policy, tune, seed))

    def mean(self, workload: str, policy: str, column: int) -> float | None:
        """Mean over the published seeds at one column, or None when the pair was not published."""
        values = [r[column] for (w, p, _, _), r in self.rows.items() if w == workload and p == policy and column in r]
        return sum(values) / len(values) if values else None

    def workloads(self) -> list[str]:
        """Published workloads, `default` first, then by name."""
        return sorted({w for w, _, _, _ in self.rows}, key=lambda w: (w != "default", w))


def read_published(path: Path) -> PublishedRuns:
    """Read analysis_allo_discrete.csv; rows of other policies (not in the study) are skipped."""
    labels = {v: k for k, v in ARTIFACT_LABELS.items()}
    rows: dict[RunKey, dict[int, float]] = {}
    with io.StringIO(read_text(path), newline="") as handle:
        reader = csv.DictReader(handle)
        header = reader.fieldnames or []
        missing = [c for c in ("workload", "sc_policy", "tune", "seed") if c not in header]
        columns = [c for c in header if c.isdigit()]
        if missing or not columns:
            raise InputError(
                "not a published allocation table (workload, sc_policy, seed, 0..130)", file=str(path), line=1
            )
        for row in reader:
            if len(rows) >= MAX_PUBLISHED_ROWS:
                raise InputError(f"more than {MAX_PUBLISHED_ROWS} rows", file=str(path), line=reader.line_num)
            policy = labels.get(row["sc_policy"] or "")
            if policy is None:
                continue
            try:
                tune, seed = float(row["tune"] or ""), int(row["seed"] or "")
                values = {int(c): float(row[c]) for c in columns if (row[c] or "").strip()}
            except ValueError:
                raise InputError("bad number in tune, seed or a column", file=str(path), line=reader.line_num) from None
            rows[((row["workload"] or "").removeprefix(WORKLOAD_PREFIX), policy, tune, seed)] = values
    return PublishedRuns(rows)


@dataclass(frozen=True)
class RowComparison:
    """One of our runs against its published row: columns compared, identical, and where they first differ."""

    workload: str
    policy: str
    seed: int
    columns: int
    identical: int
    first_difference: int | None
    largest_difference: float

    @property
    def matches(self) -> bool:
        """True when every column is identical (the same columns present, the same values)."""
        return self.first_difference is None

    def to_dict(self) -> dict[str, object]:
        """The JSON object of one run's comparison."""
        return {
            "workload": self.workload,
            "policy": self.policy,
            "seed": self.seed,
            "columns": self.columns,
            "identical_columns": self.identical,
            "first_different_column": self.first_difference,
            "largest_difference": round(self.largest_difference, 2),
        }


def compare_row(
    workload: str, policy: str, seed: int, ours: Mapping[int, float], published: Mapping[int, float]
) -> RowComparison:
    """Compare column by column; a column present on one side only counts as different."""
    keys = sorted(set(ours) | set(published))
    different = [k for k in keys if ours.get(k) != published.get(k)]
    largest = max((abs(ours[k] - published[k]) for k in different if k in ours and k in published), default=0.0)
    return RowComparison(
        workload, policy, seed, len(keys), len(keys) - len(different), different[0] if different else None, largest
    )
