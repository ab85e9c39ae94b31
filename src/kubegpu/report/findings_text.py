"""Human report of lint findings with rich: grouped by file, each with the offending line."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from kubegpu.manifests import read_regular
from kubegpu.rules import Finding, LintResult

_SOURCE_MAX_BYTES = 256 * 1024 * 1024
_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}


def _source_line(file: str, line: int, cache: dict[str, list[str]]) -> str | None:
    if file not in cache:
        try:
            # a FIFO or device named like a manifest was refused when read: never open it again here
            cache[file] = read_regular(Path(file), _SOURCE_MAX_BYTES).decode(errors="replace").splitlines()
        except OSError:
            cache[file] = []
    lines = cache[file]
    return lines[line - 1] if 0 < line <= len(lines) else None


def render_text(result: LintResult, console: Console, show_source: bool = True, verbose: bool = False) -> None:
    by_file: dict[str, list[Finding]] = defaultdict(list)
    for finding in result.findings:
        by_file[finding.location.file].append(finding)
    cache: dict[str, list[str]] = {}
    for file, findings in by_file.items():
        console.print(f"[bold]{escape(file)}[/bold]")
        for f in findings:
            style = _STYLE[f.severity.value]
            obj = "" if f.obj is None else f" {f.obj.kind}/{f.obj.name}" if f.obj.name else f" {f.obj.kind}"
            fixable = " [dim](fixable)[/dim]" if f.fix else ""
            console.print(
                f"  {f.location.line}:{f.location.column} [{style}]{f.severity.value}[/{style}] "
                f"[bold]{f.code}[/bold] {f.name}{escape(obj)}{fixable}"
            )
            console.print(f"    {escape(f.message)}", soft_wrap=True)
            if f.location.path:
                console.print(f"    [dim]at {escape(f.location.dotted_path)}[/dim]")
            line = _source_line(file, f.location.line, cache) if show_source else None
            if line is not None:
                console.print(f"    [dim]{f.location.line:>5} |[/dim] {escape(line)}", soft_wrap=True)
    counts: dict[str, int] = defaultdict(int)
    for f in result.findings:
        counts[f.severity.value] += 1
    summary = ", ".join(f"{counts[s]} {s}" for s in ("error", "warning", "info") if counts[s]) or "no findings"
    n_fixable = sum(1 for f in result.findings if f.fix)
    console.print(
        f"\n{result.files} file(s), {result.documents} object(s), {result.gpu_templates} GPU pod template(s): "
        f"{summary}"
        + (f"; {n_fixable} fixable with `kubegpu fix`" if n_fixable else "")
        + (f"; {result.suppressed} suppressed" if result.suppressed else ""),
        highlight=False,
    )
    for line in skipped_summary(result):
        console.print(line, highlight=False, markup=False)
    if verbose:
        for skipped in result.skipped:
            console.print(f"  skipped {skipped.file}: {skipped.reason}", highlight=False, markup=False)


def skipped_summary(result: LintResult) -> list[str]:
    """ "3 files are not Kubernetes objects (--verbose lists them)", and the same for kinds not checked."""
    lines = []
    if result.generic:
        were = "s were" if result.generic != 1 else " was"
        lines.append(
            f"{result.generic} object{were} of kinds with no known mapping: their pod specs were found by a "
            "generic search (their findings say so)"
        )
    files, objects = len(result.skipped_files), len(result.skipped_objects)
    if files:
        lines.append(
            f"{files} {'files are not Kubernetes objects' if files != 1 else 'file is not a Kubernetes object'} "
            "(skipped; --verbose lists them)"
        )
    if objects:
        lines.append(
            f"{objects} object{'s are' if objects != 1 else ' is'} of kinds kubegpu does not check "
            "(skipped; --verbose lists them)"
        )
    partial = len(result.partial_objects)
    if partial:
        lines.append(
            f"{partial} object{'s are' if partial != 1 else ' is'} partial (a container without an image: a patch "
            "fragment), not checked as whole objects; lint the kustomization that applies them (--verbose lists them)"
        )
    return lines
