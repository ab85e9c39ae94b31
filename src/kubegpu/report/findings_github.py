"""GitHub Actions workflow annotations: `::error file=…,line=…,col=…,title=…::message`.

File names and messages come from the repository: escaped by report/escape.py (printable, then the runner's
property and data escaping), so that each finding is one annotation line and nothing else is a workflow command.
"""

from __future__ import annotations

from kubegpu.lint import LintResult
from kubegpu.report.escape import workflow_data, workflow_property

_COMMAND = {"error": "error", "warning": "warning", "info": "notice"}


def render_github(result: LintResult) -> str:
    lines = []
    # A report repeats its file names, rules and messages: each is escaped once.
    properties: dict[str, str] = {}
    data: dict[str, str] = {}
    for f in result.findings:
        loc = f.location
        rule = f"{f.code} {f.name}"
        title = properties.get(rule) or properties.setdefault(rule, workflow_property(rule))
        file = properties.get(loc.file) or properties.setdefault(loc.file, workflow_property(loc.file))
        message = data.get(f.message) or data.setdefault(f.message, workflow_data(f.message))
        lines.append(
            f"::{_COMMAND[f.severity.value]} file={file},line={loc.line},col={loc.column},title={title}::{message}"
        )
    return "\n".join(lines)
