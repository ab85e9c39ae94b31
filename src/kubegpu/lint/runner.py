"""Lint what the paths name: discover the inputs, then lint them in this process (the engine) or in several
(the parallel mode), streaming when no fix needs the documents kept."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from kubegpu.collector import gc_paused
from kubegpu.lint import parallel
from kubegpu.lint.config import LintConfig
from kubegpu.lint.engine import (
    LintResult,
    in_order,
    lint_loaded,
    lint_streaming,
    load_source,
    prepare_streaming,
)
from kubegpu.lint.inventory import Skipped
from kubegpu.lint.processes import input_sizes, plan_processes
from kubegpu.manifests import discover
from kubegpu.manifests.selection import Selection
from kubegpu.manifests.sources import WalkReport
from kubegpu.ruleapi import NodeTarget


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
) -> LintResult:
    """Lint files, directories and `-` (stdin, named `stdin_name`) with the given configuration (and node,
    when `target` names one).

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
    return _with_walk(_lint_inputs(inputs, config, jobs, keep_documents, target), walk)


def _lint_inputs(
    inputs: Sequence[tuple[str, Path | None, str]],
    config: LintConfig,
    jobs: int,
    keep_documents: bool,
    target: NodeTarget | None,
) -> LintResult:
    if not keep_documents:
        with gc_paused():
            prepared = prepare_streaming(inputs, config)
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
