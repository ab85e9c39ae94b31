"""Render a run's charts and kustomizations before anything is linted: each once, several at a time.

The kustomizations are built as `render_plan` says (bases through the overlays that include them), the charts
each; up to `jobs` renderers run at once, each in its own sandbox with its time limit, under the run's deadline.
Each output is cut as soon as it arrives (`unread.strip_unread`: bodies of kinds no rule reads), so that what is
held until lint reads it is the objects rules read, not megabytes of schema.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

from kubegpu.manifests.render import Rendered, RenderOptions, render_chart, render_kustomization
from kubegpu.manifests.render_plan import RenderPlan, plan_renders
from kubegpu.manifests.roots import display
from kubegpu.manifests.sources import HELM, KUSTOMIZE
from kubegpu.manifests.unread import strip_unread

# One input as `discover` finds it: display name, path (None for stdin) and kind.
Input = tuple[str, Path | None, str]
Unread = Callable[[str, str], bool]  # (apiVersion, kind) -> no rule reads such objects
Progress = Callable[[int, int, str], None]  # (renders done, renders planned, the one just done)


@dataclass(frozen=True)
class RenderRecord:
    """One render of the run, for `--verbose`: what, how long, and how it ended."""

    label: str  # "kustomization config/overlays/prod", "chart charts/x"
    folder: Path  # resolved
    seconds: float
    outcome: str  # "rendered", "failed", "not rendered"
    objects_cut: int = 0  # objects of kinds no rule reads, cut to their header


@dataclass(frozen=True)
class RenderRun:
    """A run's renders: the inputs left to lint (covered kustomizations removed), the results by folder, the
    record of each render, and the kustomizations reported through others (label, the labels that include it)."""

    inputs: list[Input]
    results: dict[Path, Rendered]
    records: list[RenderRecord]
    through: list[tuple[str, list[str]]]
    plain_only: int = 0  # charts and kustomizations not rendered (--no-render)

    @property
    def renders(self) -> dict[str, int]:
        """Renders run, per kind ("helm", "kustomize")."""
        counts = {HELM: 0, KUSTOMIZE: 0}
        for record in self.records:
            counts[HELM if record.label.startswith("chart ") else KUSTOMIZE] += 1
        return counts


def label_of(folder: Path, kind: str) -> str:
    return f"chart {display(folder)}" if kind == HELM else f"kustomization {display(folder)}"


def render_jobs(requested: int) -> int:
    """Renderers at once: `requested`, or (0) one per CPU this process may use."""
    if requested > 0:
        return requested
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def render_all(
    inputs: Sequence[Input],
    options: RenderOptions,
    max_bytes: int,
    jobs: int,
    unread: Unread | None,
    progress: Progress | None = None,
) -> RenderRun:
    """Render every chart and kustomization among `inputs` once (`jobs` at a time); the other inputs pass through."""
    if not options.enabled:
        kept = [entry for entry in inputs if entry[2] not in (HELM, KUSTOMIZE)]
        return RenderRun(kept, {}, [], [], plain_only=len(inputs) - len(kept))
    folders = [Path(os.path.realpath(path)) for _n, path, kind in inputs if kind == KUSTOMIZE and path is not None]
    plan = plan_renders(folders, options.root_of, max_bytes)
    built = plan.builds()
    charts = [Path(os.path.realpath(path)) for _n, path, kind in inputs if kind == HELM and path is not None]
    results: dict[Path, Rendered] = {}
    records: list[RenderRecord] = []
    work: list[tuple[Path, str]] = [(f, HELM) for f in charts] + [(f, KUSTOMIZE) for f in built]
    done = 0
    total = len(work)
    succeeded: set[Path] = set()
    failed: set[Path] = set()
    with ThreadPoolExecutor(max_workers=max(1, min(render_jobs(jobs), len(work) or 1))) as pool:
        while work:
            # The longest first (by the bytes each build reads), so that no long build starts last on a core alone.
            futures: list[tuple[Path, str, Future[tuple[Rendered, RenderRecord]]]] = [
                (folder, kind, pool.submit(_render_one, folder, kind, options, max_bytes, unread))
                for folder, kind in sorted(work, key=lambda item: -_weight(item[0], item[1], plan))
            ]
            for folder, kind, future in futures:
                rendered, record = future.result()
                results[folder] = rendered
                records.append(record)
                if kind == KUSTOMIZE:
                    (succeeded if rendered.text is not None else failed).add(folder)
                done += 1
                if progress is not None:
                    progress(done, total, record.label)
            # Bases whose every including build failed or was refused: built themselves after all.
            again = plan.orphaned(succeeded, failed)
            work = [(f, KUSTOMIZE) for f in again]
            total += len(work)
    order = {Path(os.path.realpath(path)): i for i, (_n, path, _k) in enumerate(inputs) if path is not None}
    records.sort(key=lambda r: (order.get(r.folder, len(order)), r.label))
    rendered_folders = set(results)
    through = plan.through(sorted(succeeded))
    kept = [
        entry
        for entry in inputs
        if entry[2] not in (HELM, KUSTOMIZE) or entry[1] is None or Path(os.path.realpath(entry[1])) in rendered_folders
    ]
    return RenderRun(
        kept,
        results,
        records,
        [
            (label_of(f, KUSTOMIZE), [label_of(b, KUSTOMIZE) for b in by])
            for f, by in sorted(through.items())
            if f not in rendered_folders
        ],
    )


def _weight(folder: Path, kind: str, plan: RenderPlan) -> int:
    """About how long a build takes: the bytes of the files in the folders it reads (their top level)."""
    total = 0
    for here in (folder, *(plan.reach(folder) if kind == KUSTOMIZE else ())):
        try:
            with os.scandir(here) as listing:
                total += sum(e.stat(follow_symlinks=False).st_size for e in listing if e.is_file(follow_symlinks=False))
        except OSError:
            continue
    return total


def _render_one(
    folder: Path, kind: str, options: RenderOptions, max_bytes: int, unread: Unread | None
) -> tuple[Rendered, RenderRecord]:
    started = time.monotonic()
    rendered = (
        render_chart(folder, options, max_bytes) if kind == HELM else render_kustomization(folder, options, max_bytes)
    )
    cut = 0
    if rendered.text is not None and unread is not None:
        text, cut = strip_unread(rendered.text, unread)
        rendered = replace(rendered, text=text)
    outcome = "rendered" if rendered.text is not None else "failed" if rendered.error is not None else "not rendered"
    return rendered, RenderRecord(label_of(folder, kind), folder, time.monotonic() - started, outcome, cut)
