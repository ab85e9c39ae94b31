"""GitHub Actions workflow annotations: `::error file=…,line=…,col=…,title=…::message`.

File names and messages come from the repository: escaped by report/escape.py (printable, then the runner's
property and data escaping), so that each finding is one annotation line and nothing else is a workflow command.
"""

from __future__ import annotations

from kubegpu.report.escape import workflow_data, workflow_property
from kubegpu.rules import LintResult

_COMMAND = {"error": "error", "warning": "warning", "info": "notice"}


def render_github(result: LintResult) -> str:
    lines = []
    for f in result.findings:
        loc = f.location
        title = workflow_property(f"{f.code} {f.name}")
        lines.append(
            f"::{_COMMAND[f.severity.value]} file={workflow_property(loc.file)},line={loc.line},"
            f"col={loc.column},title={title}::{workflow_data(f.message)}"
        )
    return "\n".join(lines)
