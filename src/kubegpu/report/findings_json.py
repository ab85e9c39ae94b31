"""JSON report of lint findings: one object per finding with file, line, column, rule and path.

One finding per line: readable, greppable, and written by formatting each line around json's C string
encoder, which is twice as fast as building a dict per finding and encoding it. Strings from the input are kept
exact but valid Unicode, and `##[` is written `##\\u005b` (report/escape.py): the same data, no workflow command.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from json.encoder import encode_basestring_ascii as _quote
from typing import Any

from kubegpu.lint import Finding, Fix, LintResult
from kubegpu.manifests import FieldPath, ObjectRef, format_path
from kubegpu.report.escape import json_defused, unicode_text


def finding_to_dict(finding: Finding) -> dict[str, Any]:
    """The finding as the report's JSON object (`finding_line` writes exactly `json_defused(json.dumps(...))` of
    this)."""
    obj = finding.obj
    text = unicode_text
    return {
        "file": text(finding.location.file),
        "line": finding.location.line,
        "column": finding.location.column,
        "rule": finding.code,
        "name": finding.name,
        "severity": finding.severity.value,
        "message": text(finding.message),
        "object": None
        if obj is None
        else {
            "kind": text(obj.kind),
            "namespace": None if obj.namespace is None else text(obj.namespace),
            "name": text(obj.name),
        },
        "path": text(finding.location.dotted_path),
        "fix": None
        if finding.fix is None
        else {
            "description": text(finding.fix.description),
            "safety": finding.fix.safety.value,
        },
    }


def json_string(text: str) -> str:
    """`text` as a JSON string: valid Unicode, `##[` defused."""
    return json_defused(_quote(unicode_text(text)))


class LineMemo:
    """Text already written once in a report: quoted strings, field paths and objects, which the findings of
    one report repeat (a monorepo's report writes the same file, rule and object names thousands of times)."""

    def __init__(self) -> None:
        # Messages too: a monorepo's 75,000 findings say some 20,000 things, and quoting a message (a few hundred
        # characters, one at a time) cost ten times looking it up.
        self.quoted: dict[str, str] = {}
        self.paths: dict[FieldPath, str] = {}
        self.objects: dict[int, tuple[ObjectRef, str]] = {}  # by identity: findings of one object share its ref
        self.fixes: dict[int, tuple[Fix, str]] = {}  # by identity: a report's fixes are shared descriptions

    def quote(self, text: str) -> str:
        found = self.quoted.get(text)
        if found is None:
            found = self.quoted[text] = json_string(text)
        return found

    def fix(self, fix: Fix | None) -> str:
        if fix is None:
            return "null"
        found = self.fixes.get(id(fix))
        if found is None or found[0] is not fix:
            # Safety is a string enum: its text is its value.
            text = f'{{"description": {json_string(fix.description)}, "safety": {self.quote(fix.safety)}}}'
            found = self.fixes[id(fix)] = (fix, text)
        return found[1]

    def path(self, path: FieldPath) -> str:
        found = self.paths.get(path)
        if found is None:
            found = self.paths[path] = json_string(format_path(path))
        return found

    def object(self, obj: ObjectRef) -> str:
        found = self.objects.get(id(obj))
        if found is None or found[0] is not obj:
            namespace = "null" if obj.namespace is None else self.quote(obj.namespace)
            text = f'{{"kind": {self.quote(obj.kind)}, "namespace": {namespace}, "name": {self.quote(obj.name)}}}'
            found = self.objects[id(obj)] = (obj, text)
        return found[1]


def finding_line(finding: Finding, memo: LineMemo | None = None) -> str:
    """`json_defused(json.dumps(finding_to_dict(finding)))`, character for character, made faster.

    `memo` keeps the text of what the findings of one report repeat.
    """
    if memo is None:
        memo = LineMemo()
    # The memo's dicts are read directly, its methods called only for what is not there yet: a method call per
    # field cost more than the lookup. Every text kept there is at least `""`, so `or` falls back only on a miss.
    quoted = memo.quoted
    where, obj, fix = finding.location, finding.obj, finding.fix
    # Severity is a string enum: its text is its value. Line and column are ints, written as str() writes them.
    return (
        f'{{"file": {quoted.get(where.file) or memo.quote(where.file)}, "line": {where.line}, '
        f'"column": {where.column}, "rule": {quoted.get(finding.code) or memo.quote(finding.code)}, '
        f'"name": {quoted.get(finding.name) or memo.quote(finding.name)}, '
        f'"severity": {quoted.get(finding.severity) or memo.quote(finding.severity)}, '
        f'"message": {quoted.get(finding.message) or memo.quote(finding.message)}, '
        f'"object": {"null" if obj is None else memo.object(obj)}, '
        f'"path": {memo.paths.get(where.path) or memo.path(where.path)}, '
        f'"fix": {"null" if fix is None else memo.fix(fix)}}}'
    )


_BATCH = 512


def render_json(result: LintResult) -> str:
    parts: list[str] = []
    write_json(result, parts.append)
    return "".join(parts)


def write_json(result: LintResult, write: Callable[[str], object]) -> None:
    """The report, written a finding at a time (a monorepo's report is never held whole in memory)."""
    summary = {
        "files": result.files,
        "documents": result.documents,
        "pod_templates": result.templates,
        "gpu_pod_templates": result.gpu_templates,
        "findings": len(result.findings),
        "suppressed": result.suppressed,
        "not_kubernetes_files": len(result.skipped_files),
        "template_files": len(result.skipped_templates),
        "unchecked_objects": len(result.skipped_objects),
        "partial_objects": len(result.partial_objects),
        "generic_objects": result.generic,
        "skipped": [
            {"file": unicode_text(s.file), "what": s.kind, "reason": unicode_text(s.reason)} for s in result.skipped
        ],
        "notices": [unicode_text(notice) for notice in result.notices],
    }
    memo = LineMemo()
    findings = result.findings
    if not findings:
        write('{\n  "findings": []')
    # Written a batch of findings at a time: one write per finding cost as much as formatting it.
    for start in range(0, len(findings), _BATCH):
        lines = [finding_line(finding, memo) for finding in findings[start : start + _BATCH]]
        write('{\n  "findings": [\n    ' if start == 0 else ",\n    ")  # (not prepended: that copied the batch)
        write(",\n    ".join(lines))
    if findings:
        write("\n  ]")
    write(f',\n  "summary": {json_defused(json.dumps(summary))}\n}}')
