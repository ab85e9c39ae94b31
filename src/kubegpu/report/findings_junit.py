"""JUnit XML report: one test case per object and rule; findings at or above --fail-on are failures.

Findings below the threshold are listed as passed cases with their message in system-out, and objects
without findings are passed cases, so a CI dashboard shows what was checked, not only what failed. Names and
messages from the input are printable (report/escape.py): valid XML 1.0 characters, no control sequences.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import defaultdict

from kubegpu.lint import Finding, LintResult, Severity
from kubegpu.report.escape import printable


def render_junit(result: LintResult, fail_on: Severity = Severity.WARNING) -> str:
    by_file: dict[str, list[Finding]] = defaultdict(list)
    for finding in result.findings:
        by_file[finding.location.file].append(finding)
    clean = _clean_objects(result, by_file)
    total_failures = sum(1 for f in result.findings if f.severity.rank >= fail_on.rank)
    total_tests = len(result.findings) + sum(len(objects) for objects in clean.values())
    suites = ET.Element("testsuites", name="kubegpu", tests=str(max(1, total_tests)), failures=str(total_failures))
    if not by_file and not clean:
        suite = ET.SubElement(suites, "testsuite", name="kubegpu lint", tests="1", failures="0")
        ET.SubElement(suite, "testcase", classname="kubegpu", name=f"{result.documents} object(s) checked")
    for file in sorted(by_file.keys() | clean.keys()):
        findings = by_file.get(file, [])
        passed = clean.get(file, [])
        failures = sum(1 for f in findings if f.severity.rank >= fail_on.rank)
        shown = printable(file)
        suite = ET.SubElement(
            suites, "testsuite", name=shown, tests=str(len(findings) + len(passed)), failures=str(failures)
        )
        for f in findings:
            obj = printable(f"{f.obj.kind}/{f.obj.name}") if f.obj else shown
            case = ET.SubElement(
                suite, "testcase", classname=obj, name=f"{f.code} {f.name}", file=shown, line=str(f.location.line)
            )
            message = printable(f.message)
            detail = f"{shown}:{f.location.line}:{f.location.column} {printable(f.location.dotted_path)}\n{message}"
            if f.severity.rank >= fail_on.rank:
                failure = ET.SubElement(case, "failure", type=f.severity.value, message=message)
                failure.text = detail
            else:
                below = f"{f.severity.value} (below --fail-on {fail_on.value})"
                ET.SubElement(case, "system-out").text = f"{below}: {detail}"
        for name in passed:
            ET.SubElement(suite, "testcase", classname=printable(name), name="kubegpu lint", file=shown)
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode")


def _clean_objects(result: LintResult, by_file: dict[str, list[Finding]]) -> dict[str, list[str]]:
    """Objects checked with no finding, by file: `Kind/name` of each."""
    with_findings = {(f.location.file, f.obj.kind, f.obj.name) for f in result.findings if f.obj is not None}
    clean: dict[str, list[str]] = defaultdict(list)
    for file, kind, name in result.checked:
        if (file, kind, name) not in with_findings:
            label = f"{kind}/{name}" if name else kind
            if label not in clean[file]:
                clean[file].append(label)
    return clean
