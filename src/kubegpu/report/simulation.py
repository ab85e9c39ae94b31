"""What `kubegpu simulate` prints: its three kinds of results as JSON, CSV, markdown or a terminal table.

Event runs (kubegpu.sim.events), the FGD method's summaries (kubegpu.sim.experiment) beside the published
figures, and a snapshot's what-if placements (kubegpu.sim.whatif). Text comes back as strings and tables as
rich renderables; the command prints them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import TYPE_CHECKING

from rich.table import Table

from kubegpu.sim.outputs import BOUND_COLUMNS, COLUMNS, bound_fields, rows_csv, summaries_markdown

if TYPE_CHECKING:  # read through their attributes only: the simulator is imported by the runs that need it
    from kubegpu.live.bound import RepackBound
    from kubegpu.sim.bound import BoundSummary
    from kubegpu.sim.events import EventsRun
    from kubegpu.sim.experiment import Summary
    from kubegpu.sim.whatif import WhatIfResult

EVENTS_TITLE = "kubegpu simulate (events)"
_NOT_A_METRIC = ("policy", "gang", "seed")


class Format(StrEnum):
    text = "text"
    json = "json"
    csv = "csv"
    markdown = "markdown"


# -- event runs ----------------------------------------------------------------------------------------------


def events_text(runs: Sequence[EventsRun], fmt: Format) -> str | Table:
    """The runs' totals: one object per run (JSON), one row per run (CSV, markdown), one column per run (table)."""
    rows = [dict(r.summary) for r in runs]
    if fmt is Format.json:
        return json.dumps(rows, indent=2)
    if fmt is Format.csv:
        return rows_csv(rows)
    keys = [k for k in rows[0] if k != "kubelet_rejections"] if rows else []
    if fmt is Format.markdown:
        lines = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
        lines += ["| " + " | ".join(str(r.get(k, "")) for k in keys) + " |" for r in rows]
        return "\n".join(lines) + "\n"
    table = Table(title=EVENTS_TITLE)
    table.add_column("metric")
    for r in runs:
        table.add_column(f"{r.config.policy}\n{r.config.gang.value}\nseed {r.config.seed}", justify="right")
    for k in keys:
        if k not in _NOT_A_METRIC:
            table.add_row(k, *(str(r.get(k, "")) for r in rows))
    table.add_row("kubelet_rejections", *(_rejections(r.get("kubelet_rejections")) for r in rows))
    return table


def events_report(runs: Sequence[EventsRun]) -> str:
    """The markdown report file of event runs."""
    rows = [dict(r.summary) for r in runs]
    return "\n".join([f"# {EVENTS_TITLE}", "", "```json", json.dumps(rows, indent=2), "```", ""])


def _rejections(value: object) -> str:
    if not isinstance(value, dict) or not value:
        return "0"
    return ", ".join(f"{reason}: {count}" for reason, count in value.items())


# -- the FGD method ------------------------------------------------------------------------------------------


def summaries_text(
    summaries: Sequence[Summary], fmt: Format, title: str, bounds: Mapping[str, BoundSummary] | None = None
) -> str | Table:
    """Allocation ratio per workload and policy (mean ± std over seeds) beside the published figure, and
    beside the bounds when computed: the most any placement of the same arrivals could allocate, and the most
    a greedy scheduler (one that places every pod that fits when it arrives) could."""
    rows = [{**s.to_dict(), **bound_fields(s, bounds)} for s in summaries]
    if fmt is Format.json:
        return json.dumps(rows, indent=2)
    if fmt is Format.csv:
        return rows_csv(rows, (*COLUMNS, *BOUND_COLUMNS) if bounds else COLUMNS)
    if fmt is Format.markdown:
        return summaries_markdown(summaries, title, bounds)
    table = Table(title=title)
    columns = [
        "workload",
        "policy",
        "seeds",
        "ours %",
        "± std",
        "published %",
        "Δ",
        "unallocated GPUs",
        "failed pods",
        "identical runs",
    ]
    if bounds:
        columns += ["bound %", "gap to bound", "greedy bound %", "gap to greedy bound"]
    for col in columns:
        table.add_column(col, justify="right" if col not in ("workload", "policy") else "left")
    for s, row in zip(summaries, rows, strict=True):
        pub = s.published_mean
        cells = [
            s.workload,
            s.policy,
            f"{s.seeds[0]}-{s.seeds[-1]}" if len(s.seeds) > 1 else str(s.seeds[0]),
            f"{s.gpu_alloc_ratio_mean:.2f}",
            f"{s.gpu_alloc_ratio_std:.2f}",
            "" if pub is None else f"{pub:.2f}",
            "" if pub is None else f"{s.gpu_alloc_ratio_mean - pub:+.2f}",
            f"{s.unallocated_gpus_mean:.0f}",
            f"{s.failed_pods_mean:.0f}",
            f"{s.identical_runs}/{len(s.runs)}" if s.runs else "",
        ]
        if bounds:
            cells += [_cell(row.get(key)) for key in BOUND_COLUMNS]
        table.add_row(*cells)
    return table


def _cell(value: object) -> str:
    return f"{value:.2f}" if isinstance(value, float) else ""


def published_runs_note(summaries: Sequence[Summary]) -> str | None:
    """One line under the table: how many runs equal the authors' published row in every column."""
    runs = [r for s in summaries for r in s.runs]
    if not runs:
        return None
    same = sum(r.matches for r in runs)
    text = f"{same} of {len(runs)} runs are identical to the authors' published row in every column."
    random = [r for r in runs if r.policy == "random" and not r.matches]
    if random:
        text += (
            f" The random policy's runs ({len(random)} here) cannot be: the original picks a random index into a"
            " node list whose order depends on thread timing (docs/commands/simulate.md)."
        )
    return text


# -- what-if on a snapshot -----------------------------------------------------------------------------------

_WHATIF_HEADER = (
    "policy",
    "seed",
    "placed",
    "of pending",
    "GPU alloc before %",
    "after %",
    "frag GPUs before",
    "after",
)


def whatif_text(results: Sequence[WhatIfResult], fmt: Format, bound: RepackBound | None = None) -> str | Table:
    """Pending pods placed per policy and seed, with GPU allocation and fragmentation before and after, and
    the most pending GPUs any repacking of the running pods could place when the bound is given."""
    extra = {} if bound is None else {"bound_placeable_pending_gpus": bound.placeable_pending}
    if fmt is Format.json:
        return json.dumps([{**r.to_dict(), **extra} for r in results], indent=2)
    rows = [
        (
            r.policy,
            str(r.seed),
            str(r.placed_pods),
            str(r.pending_pods),
            f"{r.gpu_alloc_before_pct:.2f}",
            f"{r.gpu_alloc_after_pct:.2f}",
            f"{r.frag_gpus_before:.2f}",
            f"{r.frag_gpus_after:.2f}",
        )
        for r in results
    ]
    if fmt is Format.csv:
        return "\n".join(",".join(row) for row in (_WHATIF_HEADER, *rows))
    if fmt is Format.markdown:
        lines = ["| " + " | ".join(_WHATIF_HEADER) + " |", "|" + "---|" * len(_WHATIF_HEADER)]
        return "\n".join([*lines, *("| " + " | ".join(row) + " |" for row in rows)])
    first = results[0] if results else None
    title = "kubegpu simulate --snapshot" + (
        f": {first.nodes} nodes, {first.total_gpus:g} GPUs, {first.running_pods} running, "
        f"{first.pending_pods} pending GPU pods"
        if first
        else ""
    )
    caption = None
    if bound is not None:
        caption = (
            f"any repacking of the running pods could place at most {bound.placeable_pending} of the "
            f"{bound.pending} pending GPUs (packing bound)"
        )
    table = Table(*_WHATIF_HEADER, title=title, caption=caption)
    for row in rows:
        table.add_row(*row)
    return table


def whatif_unplaced_lines(results: Sequence[WhatIfResult]) -> list[str]:
    """Why each policy and seed left pods unplaced: kube-scheduler's line and the cause, as `audit --why` says it."""
    from kubegpu.report.why import explanations_text

    lines: list[str] = []
    for r in results:
        if not r.failed_pods:
            continue
        shown = "" if len(r.unplaced) == len(r.failed_pods) else f" (the first {len(r.unplaced)} explained)"
        lines.append(f"{r.policy} (seed {r.seed}): {len(r.failed_pods)} pending pod(s) not placed{shown}")
        lines += explanations_text(r.unplaced)
    return lines
