"""Simulation outputs: CSV rows, a markdown report and matplotlib plots (Agg) of allocation vs arrivals.

The plot mirrors the FGD paper's figure: GPU allocation ratio against arrived GPU requests, per policy.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from kubegpu.errors import InputError
from kubegpu.sim.experiment import RunResult, Summary

if TYPE_CHECKING:  # read through its attributes only: the bound (and HiGHS) is imported by runs that ask for it
    from kubegpu.sim.bound import BoundSummary

COLUMNS = (
    "workload",
    "policy",
    "seeds",
    "arrival",
    "gpu_alloc_ratio_mean",
    "gpu_alloc_ratio_std",
    "published_mean",
    "delta",
    "unallocated_gpus_mean",
    "failed_pods_mean",
    "frag_pct_of_capacity_mean",
    "published_runs_compared",
    "published_runs_identical",
)
BOUND_COLUMNS = ("bound_mean", "gap_to_bound", "greedy_bound_mean", "gap_to_greedy_bound")


def bound_fields(summary: Summary, bounds: Mapping[str, BoundSummary] | None) -> dict[str, object]:
    """The bounds of the summary's workload (any placement; greedy schedulers, which place every pod that fits
    when it arrives) and how far the policy is below each (empty without bounds)."""
    bound = None if bounds is None else bounds.get(summary.workload)
    if bound is None:
        return {}
    return {
        "bound_mean": round(bound.mean, 3),
        "gap_to_bound": round(bound.mean - summary.gpu_alloc_ratio_mean, 3),
        "greedy_bound_mean": round(bound.greedy_mean, 3),
        "gap_to_greedy_bound": round(bound.greedy_mean - summary.gpu_alloc_ratio_mean, 3),
    }


def rows_csv(rows: Sequence[Mapping[str, object]], columns: Sequence[str] | None = None) -> str:
    """CSV text of dict rows (lists are joined with spaces)."""
    cols = list(columns or (list(rows[0]) if rows else []))
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(cols)
    for row in rows:
        writer.writerow(
            [
                " ".join(map(str, v)) if isinstance(v, list | tuple) else ("" if v is None else v)
                for v in (row.get(c) for c in cols)
            ]
        )
    return out.getvalue()


def summaries_markdown(
    summaries: Sequence[Summary], title: str, bounds: Mapping[str, BoundSummary] | None = None
) -> str:
    """A markdown table: our mean over seeds beside the published mean (and the bound), per workload and policy;
    then each run against its published row, where the authors published one."""
    extra = " bound | gap to bound | greedy bound | gap to greedy bound |" if bounds else ""
    lines = [
        f"# {title}",
        "",
        "| workload | policy | seeds | ours (alloc % @ arrival) | std | published | Δ | "
        "unallocated GPUs | failed pods | runs identical to published |" + extra,
        "|---|---|---|---|---|---|---|---|---|---|" + ("---|---|---|---|" if bounds else ""),
    ]
    for s in summaries:
        pub = "" if s.published_mean is None else f"{s.published_mean:.2f}"
        delta = "" if s.published_mean is None else f"{s.gpu_alloc_ratio_mean - s.published_mean:+.2f}"
        seeds = f"{s.seeds[0]}–{s.seeds[-1]}" if len(s.seeds) > 1 else str(s.seeds[0])
        same = f"{s.identical_runs} of {len(s.runs)}" if s.runs else ""
        bound = bound_fields(s, bounds)
        cells = "".join(f" {bound[key]:.2f} |" for key in BOUND_COLUMNS) if bound else (" | | | |" if bounds else "")
        lines.append(
            f"| {s.workload} | {s.policy} | {seeds} | {s.gpu_alloc_ratio_mean:.2f} | "
            f"{s.gpu_alloc_ratio_std:.2f} | {pub} | {delta} | {s.unallocated_gpus_mean:.0f} | "
            f"{s.failed_pods_mean:.0f} | {same} |" + cells
        )
    runs = [r for s in summaries for r in s.runs]
    if runs:
        lines += [
            "",
            "## Each run against its published row",
            "",
            "| workload | policy | seed | identical columns | first different column | largest difference |",
            "|---|---|---|---|---|---|",
        ]
        for r in runs:
            first = "" if r.first_difference is None else str(r.first_difference)
            largest = "" if r.matches else f"{r.largest_difference:.2f}"
            lines.append(
                f"| {r.workload} | {r.policy} | {r.seed} | {r.identical} of {r.columns} | {first} | {largest} |"
            )
    return "\n".join(lines) + "\n"


def plot_allocation(
    results: Sequence[RunResult],
    path: Path,
    title: str = "",
    bound: Mapping[int, float] | None = None,
    greedy_bound: Mapping[int, float] | None = None,
) -> None:
    """Mean GPU allocation % against arrived GPU request % (0..arrival), one line per policy, and the bounds
    when given: the most any placement of the same arrivals could allocate, and the most a scheduler that
    places every pod that fits when it arrives could."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups: dict[str, list[RunResult]] = {}
    for r in results:
        groups.setdefault(r.policy, []).append(r)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    top = max((round(r.arrival * 100) for r in results), default=130)
    xs = np.arange(0, top + 1)
    for policy, runs in groups.items():
        ys = [np.mean([r.discrete.get(int(x), np.nan) for r in runs]) for x in xs]
        ax.plot(xs, ys, label=policy, linewidth=1.4)
    for curve, style, label in (
        (bound, "--", "bound (any placement)"),
        (greedy_bound, "-.", "greedy bound (schedulers that place every pod that fits)"),
    ):
        if curve:
            columns = sorted(curve)
            ax.plot(columns, [curve[k] for k in columns], color="black", linestyle=style, linewidth=1.4, label=label)
    ax.plot(xs, np.minimum(xs, 100), color="grey", linestyle=":", linewidth=1, label="arrived")
    ax.set_xlabel("arrived GPU requests (% of capacity)")
    ax.set_ylabel("GPU allocation ratio (%)")
    ax.set_title(title or "GPU allocation vs arrived workload")
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right", fontsize=8)
    ax.set_xlim(60, top)
    ax.set_ylim(60, 100)
    try:
        fig.savefig(path, dpi=120, bbox_inches="tight")
    except OSError as err:
        raise InputError(f"cannot write the plot: {err.strerror}", file=str(path)) from None
    finally:
        plt.close(fig)


def plot_timeline(
    series: Mapping[str, tuple[Sequence[float], Sequence[float]]], path: Path, ylabel: str, title: str
) -> None:
    """Allocation (or anything) over simulated time, one line per run."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    for label, (times, ys) in series.items():
        ax.step(np.asarray(times) / 3600, ys, where="post", label=label, linewidth=1.2)
    ax.set_xlabel("simulated time (h)")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    try:
        fig.savefig(path, dpi=120, bbox_inches="tight")
    except OSError as err:
        raise InputError(f"cannot write the plot: {err.strerror}", file=str(path)) from None
    finally:
        plt.close(fig)
