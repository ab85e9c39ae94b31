"""JUnit XML report: one test case per rule and object, failures for findings (CI dashboards read it)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import defaultdict

from kubegpu.rules import Finding, LintResult


def render_junit(result: LintResult) -> str:
    by_file: dict[str, list[Finding]] = defaultdict(list)
    for finding in result.findings:
        by_file[finding.location.file].append(finding)
    suites = ET.Element("testsuites", name="kubegpu", tests=str(max(1, len(result.findings))),
                        failures=str(len(result.findings)))
    if not by_file:
        suite = ET.SubElement(suites, "testsuite", name="kubegpu lint", tests="1", failures="0")
        ET.SubElement(suite, "testcase", classname="kubegpu", name=f"{result.documents} object(s) checked")
    for file, findings in by_file.items():
        suite = ET.SubElement(suites, "testsuite", name=file, tests=str(len(findings)), failures=str(len(findings)))
        for f in findings:
            obj = f"{f.obj.kind}/{f.obj.name}" if f.obj else file
            case = ET.SubElement(suite, "testcase", classname=obj, name=f"{f.code} {f.name}",
                                 file=file, line=str(f.location.line))
            failure = ET.SubElement(case, "failure", type=f.severity.value, message=f.message)
            failure.text = f"{file}:{f.location.line}:{f.location.column} {f.location.dotted_path}\n{f.message}"
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode")
