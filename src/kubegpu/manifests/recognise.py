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
# shell) and a `{name}` slot to fill in (documentation samples: `image: {username}/server`).
_MARKER = re.compile(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}|\$\{[^}\n]*\}|(?<![{$\w])\{[A-Za-z_][A-Za-z0-9_-]*\}(?!\})")
# A line that is nothing but template statements (`{{- toYaml . | nindent 6 }}`, `{% for x in y %}`): its
# rendered text is not known, so it is read as a comment.
_WHOLE_LINE = re.compile(r"^\s*(?:\{\{.*\}\}|\{%.*%\}|\{#.*#\}|\$\{.*\})\s*$")
_TOKEN = "kgplaceholder"
_SAMPLE = "a sample with a placeholder to fill in"
_TOP_LEVEL_KEY = {
    key: re.compile(rf"""^["']?{key}["']?[ \t]*:|"{key}"[ \t]*:""", re.MULTILINE) for key in ("apiVersion", "kind")
}
_MAX_LINE = 4096  # longer lines are left as written: markers are looked for in lines people write


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
    marker = _first_marker(text)
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
        found = _MARKER.search(line)
        if found is not None:
            if not line.lstrip().startswith("#"):
                return number, found.group(0)
            in_comment = in_comment or (number, found.group(0))
    return in_comment


def _fill_markers(text: str) -> str:
    """`text` with each line of template statements made a comment and each inline marker a neutral word."""
    out: list[str] = []
    for line in text.split("\n"):
        if len(line) > _MAX_LINE:
            out.append(line)
        elif _WHOLE_LINE.match(line):
            out.append("#")
        else:
            out.append(_MARKER.sub(_TOKEN, line))
    return "\n".join(out)


def _template_kind(text: str, marker: str) -> str:
    """The template language a marker belongs to, in the words its users use."""
    if marker.startswith("${"):
        return "a template with `${}` interpolations (Terraform, envsubst)"
    if not marker.startswith(("{{", "{%", "{#")):
        return _SAMPLE
    if _GO_ACTION.search(text):  # `.Name`, `$var`: Go's data and variables; Jinja names them bare
        return "a Go template"
    return "a Jinja template"


_GO_ACTION = re.compile(r"\{\{-?\s*(?:[^}\n]*?[\s(])?[.$][A-Za-z_]")


def _short(marker: str) -> str:
    return marker if len(marker) <= 40 else marker[:37] + "..."
