"""JSON report of lint findings: one object per finding with file, line, column, rule and path."""

from __future__ import annotations

import json
from typing import Any

from kubegpu.rules import Finding, LintResult


def finding_to_dict(finding: Finding) -> dict[str, Any]:
    obj = finding.obj
    return {
        "file": finding.location.file,
        "line": finding.location.line,
        "column": finding.location.column,
        "rule": finding.code,
        "name": finding.name,
        "severity": finding.severity.value,
        "message": finding.message,
        "object": None if obj is None else {"kind": obj.kind, "namespace": obj.namespace, "name": obj.name},
        "path": finding.location.dotted_path,
        "fix": None if finding.fix is None else {
            "description": finding.fix.description,
            "safety": finding.fix.safety.value,
        },
    }


def render_json(result: LintResult) -> str:
    payload = {
        "findings": [finding_to_dict(f) for f in result.findings],
        "summary": {
            "files": result.files,
            "documents": result.documents,
            "pod_templates": result.templates,
            "gpu_pod_templates": result.gpu_templates,
            "findings": len(result.findings),
            "suppressed": result.suppressed,
        },
    }
    # One finding per line: readable, and json's C encoder (used only without indent) stays fast.
    findings = ",\n    ".join(json.dumps(f) for f in payload["findings"])
    body = f"[\n    {findings}\n  ]" if findings else "[]"
    return f'{{\n  "findings": {body},\n  "summary": {json.dumps(payload["summary"])}\n}}'

