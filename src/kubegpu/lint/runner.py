"""Lint what the paths name: discover the inputs, then lint them in this process (the engine) or in several
(the parallel mode), streaming when no fix needs the documents kept."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from kubegpu.collector import gc_paused
from kubegpu.lint import parallel
from kubegpu.lint.config import LintConfig
from kubegpu.lint.engine import (
    Early,
    LintResult,
    in_order,
    lint_loaded,
    lint_streaming,
    load_source,
    prepare_streaming,
    read_early,
)
from kubegpu.lint.inventory import Skipped, unread_kind
from kubegpu.lint.processes import input_sizes, plan_processes
from kubegpu.lint.registry import all_rules
from kubegpu.manifests import discover
from kubegpu.manifests.selection import Selection
from kubegpu.manifests.sources import WalkReport
from kubegpu.ruleapi import NodeTarget

if TYPE_CHECKING:
    from kubegpu.manifests.render_run import Progress


class NoInputError(ValueError):
    """Nothing to lint: the paths named no file kubegpu reads (or all of them were excluded)."""


def lint_paths(
    paths: Sequence[str],
    config: LintConfig,
    jobs: int = 1,
    selection: Selection | None = None,
    stdin_name: str | None = None,
    keep_documents: bool = True,
    target: NodeTarget | None = None,
    progress: Progress | None = None,
) -> LintResult:
    """Lint files, directories and `-` (stdin, named `stdin_name`) with the given configuration (and node,
    when `target` names one). Charts and kustomizations are rendered first, each once and `jobs` at a time
    (`progress` hears of each); a kustomization that another of the run includes is read through it.

    `jobs`: processes to use (0: one per CPU when the input is large enough); the result is the same.
    `keep_documents=False` (reports only: no fixes) streams the input file by file, keeping only the
    objects that cross-object checks read, so that memory does not grow with the input.
    """
    walk = WalkReport()
    inputs = list(discover(paths, selection if selection is not None else config.selection, stdin_name, walk))
    if not inputs:
        raise NoInputError(
            "no input: the paths hold no YAML, JSON, Dockerfile, chart or kustomization "
            "(or all of it is excluded or git-ignored)" + "".join(f"; {notice}" for notice in walk.notices)
        )
    config = replace(config, render=config.render.for_run(walk.roots))
    from kubegpu.manifests.render_run import render_all  # runs without a chart or kustomization never need it

    every = all_rules()

    def unread(api_version: str, kind: str) -> bool:
        return unread_kind(api_version, kind, every)

    # reports only: plain files' objects of kinds no rule reads are cut too (fix reads files whole)
    config = replace(config, render=replace(config.render, unread=None if keep_documents else unread))
    from concurrent.futures import ThreadPoolExecutor

    early = None
    with ThreadPoolExecutor(1) as background:  # the renderers run in their own processes, on the other cores
        rendering = background.submit(render_all, inputs, config.render, config.max_file_bytes, jobs, unread, progress)
        if not keep_documents:  # meanwhile, the plain files' first pass
            with gc_paused():
                early = read_early(inputs, config)
        run = rendering.result()
    if not run.inputs:
        raise NoInputError(
            f"no input: --no-render leaves {run.plain_only} chart(s) and kustomization(s) unread and no plain file"
        )
    config = replace(config, render=replace(config.render, results=run.results))
    result = _with_walk(_lint_inputs(run.inputs, config, jobs, keep_documents, target, early), walk)
    result.renders = run.records
    result.rendered_through = run.through
    if run.plain_only:
        result.notices.append(
            f"{run.plain_only} chart(s) and kustomization(s) not rendered (--no-render): only plain files were linted"
        )
    return result


def _lint_inputs(
    inputs: Sequence[tuple[str, Path | None, str]],
    config: LintConfig,
    jobs: int,
    keep_documents: bool,
    target: NodeTarget | None,
    early: Early | None = None,
) -> LintResult:
    if not keep_documents:
        with gc_paused():
            prepared = prepare_streaming(inputs, config, early)
        if prepared is not None:
            processes = 1 if jobs == 1 else plan_processes(input_sizes(inputs), jobs)
            if processes > 1:
                return parallel.lint_streaming_parallel(
                    inputs, input_sizes(inputs), config, processes, prepared, target
                )
            with gc_paused():
                return in_order(lint_streaming(inputs, range(len(inputs)), prepared, config, target))
    if jobs != 1:
        sizes = input_sizes(inputs)
        processes = plan_processes(sizes, jobs)
        if processes > 1:
            return parallel.lint_inputs_parallel(inputs, sizes, config, processes, target)
    with gc_paused():
        loaded = [load_source(name, path, kind, config.max_file_bytes, config.render) for name, path, kind in inputs]
        return lint_loaded(loaded, config, target=target)


def _with_walk(result: LintResult, walk: WalkReport) -> LintResult:
    """The result with what the walk left out: links and folders not read first among the skipped, its
    notices first among the notices."""
    result.skipped[:0] = [Skipped(name, reason, what) for name, reason, what in walk.skipped]
    result.notices[:0] = walk.notices
    return result
