"""Human report of lint findings: grouped by file, each with the offending line.

One model of the report's lines (text segments with their style) serves two writers: plain text for pipes, CI
logs and files (as fast as the JSON report), and rich, with colours, for a terminal.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from kubegpu.manifests import read_regular
from kubegpu.rules import Finding, LintResult

if TYPE_CHECKING:
    from rich.console import Console

_SOURCE_MAX_BYTES = 256 * 1024 * 1024
_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}
_BATCH = 512  # lines per write: one write per line cost as much as making it


# Control characters a manifest's text may carry (a carriage return, an escape sequence): printed as such they
# would rewrite what a terminal or CI log shows, so the report leaves them out (tabs and newlines stay).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def _clean(text: str) -> str:
    return _CONTROL.sub("", text) if _CONTROL.search(text) else text


@dataclass(frozen=True)
class ReportLine:
    """One line of the report: text segments with their rich style ("" for none), and how rich prints it."""

    segments: tuple[tuple[str, str], ...]
    highlight: bool = True  # rich's highlighting of numbers and strings (a terminal only)
    soft_wrap: bool = False

    @property
    def text(self) -> str:
        """The line as plain text, tabs expanded as rich expands them."""
        text = "".join(text for text, _style in self.segments)
        return _expand_tabs(text) if "\t" in text else text


def _expand_tabs(text: str, size: int = 8) -> str:
    """Tabs as spaces to the next multiple of `size` terminal cells (wide and zero-width characters counted as a
    terminal shows them, as rich does)."""
    from rich.cells import cell_len

    lines = []
    for line in text.split("\n"):
        out: list[str] = []
        column = 0
        for part in line.split("\t")[:-1]:
            column += cell_len(part) + 1
            pad = -column % size
            out.append(part + " " * (1 + pad))
            column += pad
        out.append(line.rsplit("\t", 1)[-1] if "\t" in line else line)
        lines.append("".join(out))
    return "\n".join(lines)


def _source_lines(file: str) -> list[str]:
    try:
        # a FIFO or device named like a manifest was refused when read: never open it again here
        return read_regular(Path(file), _SOURCE_MAX_BYTES).decode(errors="replace").splitlines()
    except OSError:
        return []


def report_lines(result: LintResult, show_source: bool = True, verbose: bool = False) -> Iterator[ReportLine]:
    """The report, line by line: each file, its findings (position, severity, rule, object, message, field path
    and source line), then the summary."""
    by_file: dict[str, list[Finding]] = defaultdict(list)
    for finding in result.findings:
        by_file[finding.location.file].append(finding)
    for file, findings in by_file.items():
        # This file's lines only, read when first shown: a monorepo's files are never all held at once.
        source: list[str] | None = None
        yield ReportLine(((_clean(file), "bold"),))
        for f in findings:
            severity = f.severity.value
            obj = _clean("" if f.obj is None else f" {f.obj.kind}/{f.obj.name}" if f.obj.name else f" {f.obj.kind}")
            yield ReportLine(
                (
                    (f"  {f.location.line}:{f.location.column} ", ""),
                    (severity, _STYLE[severity]),
                    (" ", ""),
                    (f.code, "bold"),
                    (f" {f.name}{obj}", ""),
                    *(((" ", ""), ("(fixable)", "dim")) if f.fix else ()),
                )
            )
            yield ReportLine(((f"    {_clean(f.message)}", ""),), soft_wrap=True)
            if f.location.path:
                yield ReportLine((("    ", ""), (f"at {_clean(f.location.dotted_path)}", "dim")))
            if not show_source:
                continue
            if source is None:
                source = _source_lines(file)
            if 0 < f.location.line <= len(source):
                line = _clean(source[f.location.line - 1])
                yield ReportLine((("    ", ""), (f"{f.location.line:>5} |", "dim"), (f" {line}", "")), soft_wrap=True)
    counts: dict[str, int] = defaultdict(int)
    for f in result.findings:
        counts[f.severity.value] += 1
    summary = ", ".join(f"{counts[s]} {s}" for s in ("error", "warning", "info") if counts[s]) or "no findings"
    n_fixable = sum(1 for f in result.findings if f.fix)
    yield ReportLine(
        (
            (
                f"\n{result.files} file(s), {result.documents} object(s), {result.gpu_templates} GPU pod template(s): "
                f"{summary}"
                + (f"; {n_fixable} fixable with `kubegpu fix`" if n_fixable else "")
                + (f"; {result.suppressed} suppressed" if result.suppressed else ""),
                "",
            ),
        ),
        highlight=False,
    )
    for text in skipped_summary(result):
        yield ReportLine(((_clean(text), ""),), highlight=False)
    if verbose:
        for skipped in result.skipped:
            line = _clean(f"  skipped {skipped.file}: {skipped.reason}")
            yield ReportLine(((line, ""),), highlight=False)


def write_text(result: LintResult, write: Callable[[str], object], verbose: bool = False) -> None:
    """The report as plain text (no colours, no wrapping), a few hundred lines per write."""
    batch: list[str] = []
    for line in report_lines(result, verbose=verbose):
        batch.append(line.text)
        if len(batch) >= _BATCH:
            write("\n".join(batch) + "\n")
            batch.clear()
    if batch:
        write("\n".join(batch) + "\n")


def render_text(result: LintResult, console: Console, show_source: bool = True, verbose: bool = False) -> None:
    """The report on a rich console (a terminal: colours, and long lines wrapped where they may be). Lines are
    built as rich Text, never parsed as markup, so what the input holds is printed as it is."""
    from rich.text import Text

    for line in report_lines(result, show_source, verbose):
        text = Text.assemble(*((part, style) if style else part for part, style in line.segments))
        if line.highlight and console.highlighter is not None:
            text = console.highlighter(text)
        console.print(text, soft_wrap=line.soft_wrap)


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
