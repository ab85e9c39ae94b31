"""GitHub Actions workflow annotations: `::error file=…,line=…,col=…,title=…::message`."""

from __future__ import annotations

from kubegpu.rules import LintResult

_COMMAND = {"error": "error", "warning": "warning", "info": "notice"}


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render_github(result: LintResult) -> str:
    lines = []
    for f in result.findings:
        loc = f.location
        title = _escape_property(f"{f.code} {f.name}")
        lines.append(
            f"::{_COMMAND[f.severity.value]} file={_escape_property(loc.file)},line={loc.line},"
            f"col={loc.column},title={title}::{_escape_data(f.message)}"
        )
    return "\n".join(lines)
