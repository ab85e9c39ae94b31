"""Human report of lint findings: grouped by file, each with the offending line.

One model of the report's lines (text segments with their style) serves two writers: plain text for pipes, CI
logs and files (as fast as the JSON report), and rich, with colours, for a terminal.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from kubegpu.lint import Finding, LintResult
from kubegpu.manifests import read_regular
from kubegpu.report.escape import printable

if TYPE_CHECKING:
    from rich.console import Console

_SOURCE_MAX_BYTES = 256 * 1024 * 1024
_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}
_BATCH = 512  # lines per write: one write per line cost as much as making it


# The widest source excerpt, in characters: a longer line (a one-line JSON List, a minified manifest) is shown as a
# window around the finding's column with "..." where it was cut, as rustc does, so a report's size follows its
# findings, never the length of the input's lines.
EXCERPT_WIDTH = 120
_BEFORE = 40  # characters of the window before the column, when the line is cut
_CUT = "..."


def excerpt_window(length: int, column: int) -> tuple[int, int]:
    """The [start, end) characters of a line of `length` shown for a finding at 1-based `column`: the whole line
    when it fits in EXCERPT_WIDTH, else a window of that width holding the column."""
    if length <= EXCERPT_WIDTH:
        return 0, length
    start = min(max(0, column - 1 - _BEFORE), length - EXCERPT_WIDTH)
    return start, start + EXCERPT_WIDTH


def excerpt(line: str, window: tuple[int, int]) -> str:
    """The window of a source line, printable, with "..." where it was cut."""
    start, end = window
    return (_CUT if start > 0 else "") + printable(line[start:end]) + (_CUT if end < len(line) else "")


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
    except (OSError, ValueError):  # ValueError: a name no file can have (a NUL, from --stdin-filename)
        return []


def report_lines(
    result: LintResult, show_source: bool = True, verbose: bool = False, summary: bool = True
) -> Iterator[ReportLine]:
    """The report, line by line: each file, its findings (position, severity, rule, object, message, field path)
    and the source line they point at, then the summary.

    Findings on one line that one excerpt shows (the whole line, or the window of a long one) are listed
    together, with the excerpt once after them. Everything taken from the input is printable (escape.py).
    """
    by_file: dict[str, list[Finding]] = defaultdict(list)
    for finding in result.findings:
        by_file[finding.location.file].append(finding)
    for file, findings in by_file.items():
        # This file's lines only, read when first shown: a monorepo's files are never all held at once.
        source: list[str] | None = None
        yield ReportLine(((printable(file), "bold"),))
        window: tuple[int, int] | None = None  # the excerpt of the findings listed since the last one shown
        for i, f in enumerate(findings):
            yield from _finding_lines(f)
            if not show_source:
                continue
            if source is None:
                source = _source_lines(file)
            number = f.location.line
            if not 0 < number <= len(source):
                continue
            line = source[number - 1]
            if window is None:
                window = excerpt_window(len(line), f.location.column)
            following = findings[i + 1] if i + 1 < len(findings) else None
            if (
                following is not None
                and following.location.line == number
                and (window == (0, len(line)) or window[0] < following.location.column <= window[1])
            ):
                continue  # the next finding's excerpt is this one: shown once, after it
            yield ReportLine(
                (("    ", ""), (f"{number:>5} |", "dim"), (f" {excerpt(line, window)}", "")), soft_wrap=True
            )
            window = None
    if not summary:  # --quiet: the findings only
        return
    counts: dict[str, int] = defaultdict(int)
    for f in result.findings:
        counts[f.severity.value] += 1
    tally = ", ".join(f"{counts[s]} {s}" for s in ("error", "warning", "info") if counts[s]) or "no findings"
    n_fixable = sum(1 for f in result.findings if f.fix)
    yield ReportLine(
        (
            (
                f"\n{result.files} file(s), {result.documents} object(s), {result.gpu_templates} GPU pod template(s): "
                f"{tally}"
                + (f"; {n_fixable} fixable with `kubegpu fix`" if n_fixable else "")
                + (f"; {result.suppressed} suppressed" if result.suppressed else ""),
                "",
            ),
        ),
        highlight=False,
    )
    for text in skipped_summary(result):
        yield ReportLine(((text, ""),), highlight=False)
    if verbose:
        for skipped in result.skipped:
            line = printable(f"  skipped {skipped.file}: {skipped.reason}")
            yield ReportLine(((line, ""),), highlight=False)


def _finding_lines(f: Finding) -> Iterator[ReportLine]:
    """A finding's position, severity, rule and object, its message and its field path."""
    severity = f.severity.value
    obj = "" if f.obj is None else f" {f.obj.kind}/{f.obj.name}" if f.obj.name else f" {f.obj.kind}"
    yield ReportLine(
        (
            (f"  {f.location.line}:{f.location.column} ", ""),
            (severity, _STYLE[severity]),
            (" ", ""),
            (f.code, "bold"),
            (printable(f" {f.name}{obj}"), ""),
            *(((" ", ""), ("(fixable)", "dim")) if f.fix else ()),
        )
    )
    yield ReportLine(((f"    {printable(f.message)}", ""),), soft_wrap=True)
    if f.location.path:
        yield ReportLine((("    ", ""), (f"at {printable(f.location.dotted_path)}", "dim")))


def write_text(result: LintResult, write: Callable[[str], object], verbose: bool = False, summary: bool = True) -> None:
    """The report as plain text (no colours, no wrapping), a few hundred lines per write."""
    batch: list[str] = []
    for line in report_lines(result, verbose=verbose, summary=summary):
        batch.append(line.text)
        if len(batch) >= _BATCH:
            write("\n".join(batch) + "\n")
            batch.clear()
    if batch:
        write("\n".join(batch) + "\n")


def render_text(
    result: LintResult, console: Console, show_source: bool = True, verbose: bool = False, summary: bool = True
) -> None:
    """The report on a rich console (a terminal: colours, and long lines wrapped where they may be). Lines are
    built as rich Text, never parsed as markup, so what the input holds is printed as it is."""
    from rich.text import Text

    for line in report_lines(result, show_source, verbose, summary):
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
    templates = len(result.skipped_templates)
    if templates:
        lines.append(
            f"{templates} {'files are templates' if templates != 1 else 'file is a template'} (Go, Jinja, "
            "`${}`, samples with a slot to fill in) that read as YAML only once filled in (skipped; --verbose lists "
            f"{'them' if templates != 1 else 'it'})"
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
