"""Whether a file that does not parse is meant as a Kubernetes manifest: a template another tool fills in (Go
templates, Jinja, Terraform, `{username}` samples) or YAML of another tool (mkdocs, CI, values) is not.

Decided from the content alone: template markers whose replacement makes the file parse, or no document with
apiVersion and kind at its top level. A manifest that is simply broken is neither, and stays a parse error.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kubegpu.manifests.loader import LoadResult, load_text

# Template markers, each on one line: `{{ }}` (Go, Helm, Jinja), `{% %}` and `{# #}` (Jinja), `${ }` (Terraform,
# shell) and a `{name}` slot to fill in (documentation samples: `image: {username}/server`). Found by one pass over
# the line (`_spans`): an opener whose closer is not on the line ends the search for that kind, so a hostile line
# of openers costs linear time, not quadratic.
_PAIRS = {"{{": "}}", "{%": "%}", "{#": "#}", "${": "}"}
_OPENER = re.compile(r"\{\{|\{%|\{#|\$\{|\{(?=[A-Za-z_])")
_SLOT = re.compile(r"\{[A-Za-z_][A-Za-z0-9_-]*\}")
_TOKEN = "kgplaceholder"
_SAMPLE = "a sample with a placeholder to fill in"
_TOP_LEVEL_KEY = {
    key: re.compile(rf"""^["']?{key}["']?[ \t]*:|"{key}"[ \t]*:""", re.MULTILINE) for key in ("apiVersion", "kind")
}
_MAX_LINE = 4096  # longer lines are left as written: markers are looked for in lines people write
_MAX_OPENERS = 64
# Larger files are not read as templates (a broken one stays a parse error): filling and parsing again is bounded.
_MAX_TEMPLATE_CHARS = 2 << 20


def _spans(line: str) -> list[tuple[int, int]]:
    """The (start, end) of each template marker of one line, left to right, not overlapping; none for a line with
    more than _MAX_OPENERS openers (not a line people write: left as written, as a long line is)."""
    spans: list[tuple[int, int]] = []
    openers = 0
    dead: set[str] = set()  # openers with no closer after them: none later on the line has one either
    position = 0
    for found in _OPENER.finditer(line):
        openers += 1
        if openers > _MAX_OPENERS:
            return []
        start = found.start()
        if start < position:
            continue
        opener = found.group(0)
        if opener in _PAIRS:
            if opener in dead:
                continue
            close = _PAIRS[opener]
            end = line.find(close, found.end())
            if end < 0:
                dead.add(opener)
                continue
            end += len(close)
        else:  # a `{name}` slot: not after `{`, `$` or a word character, and not the start of `{name}}`
            slot = _SLOT.match(line, start)
            before = line[start - 1] if start else ""
            if slot is None or (before in "{$" and before) or before.isalnum() or before == "_":
                continue
            end = slot.end()
            if line.startswith("}", end):
                continue
        spans.append((start, end))
        position = end
    return spans


@dataclass(frozen=True)
class NotAManifest:
    """Why a file is not read as Kubernetes objects: a template, or another tool's file."""

    reason: str
    template: bool


def not_a_manifest(name: str, text: str, loaded: LoadResult) -> NotAManifest | None:
    """Why `text`, loaded as `loaded`, is not a manifest, when it does not parse; None when it parses or is meant
    as a manifest (its parse errors are then findings)."""
    errors = [problem for problem in loaded.problems if problem.code == "parse-error"]
    if not errors:
        return None
    error = f"line {errors[0].line}: {errors[0].message}"
    marker = _first_marker(text) if len(text) <= _MAX_TEMPLATE_CHARS else None
    if marker is not None:
        filled = _fill_markers(text)
        if filled != text and _parses(name, filled):
            line, found = marker
            kind = _template_kind(text, found)
            then = "someone fills it in" if kind == _SAMPLE else "it is rendered"
            return NotAManifest(f"{kind} (`{_short(found)}` at line {line}): YAML only once {then}; not linted", True)
    if not all(pattern.search(text) for pattern in _TOP_LEVEL_KEY.values()):
        return NotAManifest(
            f"not a Kubernetes manifest: no document has apiVersion and kind at its top level (nor is it plain "
            f"YAML: {error}); not linted",
            False,
        )
    return None


def _parses(name: str, text: str) -> bool:
    return not any(problem.code == "parse-error" for problem in load_text(name, text).problems)


def _first_marker(text: str) -> tuple[int, str] | None:
    """The first template marker and its 1-based line, outside comments when there is one there."""
    in_comment: tuple[int, str] | None = None
    for number, line in enumerate(text.splitlines(), 1):
        if len(line) > _MAX_LINE:
            continue
        spans = _spans(line) if "{" in line else []
        if spans:
            marker = line[spans[0][0] : spans[0][1]]
            if not line.lstrip().startswith("#"):
                return number, marker
            in_comment = in_comment or (number, marker)
    return in_comment


def _whole_line(line: str) -> bool:
    """A line that is nothing but template statements: it opens with a marker and closes with that marker's end."""
    stripped = line.strip()
    close = _PAIRS.get(stripped[:2])
    return close is not None and len(stripped) >= 4 and stripped.endswith(close)


def _fill_markers(text: str) -> str:
    """`text` with each line of template statements made a comment and each inline marker a neutral word."""
    out: list[str] = []
    for line in text.split("\n"):
        if len(line) > _MAX_LINE or "{" not in line:
            out.append(line)
        elif _whole_line(line):
            out.append("#")
        else:
            spans = _spans(line)
            pieces, last = [], 0
            for start, end in spans:
                pieces += [line[last:start], _TOKEN]
                last = end
            out.append("".join([*pieces, line[last:]]))
    return "\n".join(out)


def _template_kind(text: str, marker: str) -> str:
    """The template language a marker belongs to, in the words its users use."""
    if marker.startswith("${"):
        return "a template with `${}` interpolations (Terraform, envsubst)"
    if not marker.startswith(("{{", "{%", "{#")):
        return _SAMPLE
    if any(_GO_ACTION.match(line, start) for line in text.splitlines()[:_GO_LINES] for start, _end in _spans(line)):
        # `.Name`, `$var`: Go's data and variables; Jinja names them bare
        return "a Go template"
    return "a Jinja template"


_GO_ACTION = re.compile(r"\{\{-?\s*(?:[^}\n]*?[\s(])?[.$][A-Za-z_]")
_GO_LINES = 2000  # the lines read to tell Go from Jinja


def _short(marker: str) -> str:
    return marker if len(marker) <= 40 else marker[:37] + "..."
