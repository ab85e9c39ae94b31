"""The lint command end to end: exit codes, stdin, formats, rule docs kept in step with the rules."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kubegpu.cli.main import app
from kubegpu.lint import all_rules
from kubegpu.lint.docs import rule_doc, rules_index
from tests.paths import REPO_ROOT

runner = CliRunner()
GPU_POD = """\
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
  - name: c
    image: nvcr.io/nvidia/pytorch:24.05-py3
    resources:
      limits: {nvidia.com/gpu: 1}
"""


def test_rule_docs_are_up_to_date() -> None:
    folder = REPO_ROOT / "docs" / "rules"
    for rule in all_rules():
        page = folder / f"{rule.code}.md"
        assert page.is_file(), f"{page} missing: run `make docs`"
        assert page.read_text() == rule_doc(rule), f"{page} is stale: run `make docs`"
    assert (folder / "README.md").read_text() == rules_index()


def test_codes_and_names_follow_the_convention() -> None:
    for rule in all_rules():
        assert rule.code.startswith("KG") and len(rule.code) == 5 and rule.code[2:].isdigit()
        assert rule.name == rule.name.lower() and " " not in rule.name
        assert rule.summary.endswith(".") and rule.rationale


def test_exit_codes(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(GPU_POD)
    clean = tmp_path / "clean.yaml"
    clean.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
    broken = tmp_path / "broken.yaml"
    broken.write_text("apiVersion: v1\nkind: Pod\nmetadata: [\n")
    assert runner.invoke(app, ["lint", str(clean)]).exit_code == 0
    assert runner.invoke(app, ["lint", str(bad)]).exit_code == 1
    assert runner.invoke(app, ["lint", str(bad), "--exit-zero"]).exit_code == 0
    assert runner.invoke(app, ["lint", str(bad), "--fail-on", "error"]).exit_code == 0
    result = runner.invoke(app, ["lint", str(broken), str(bad), "-o", "json"])
    assert result.exit_code == 1  # a broken manifest is a finding; the other file is still checked
    names = {f["name"] for f in json.loads(result.stdout)["findings"]}
    assert {"parse-error", "dshm-missing"} <= names
    assert runner.invoke(app, ["lint", str(broken), str(bad), "--exit-zero"]).exit_code == 0
    alone = runner.invoke(app, ["lint", str(broken), "--exit-zero"])
    assert alone.exit_code == 2  # nothing could be read: kubegpu could not do its job
    assert "no input could be read" in alone.stderr
    assert runner.invoke(app, ["lint", str(tmp_path / "missing.yaml")]).exit_code == 2


def test_stdin_and_json_fields() -> None:
    result = runner.invoke(app, ["lint", "-", "-o", "json"], input=GPU_POD)
    assert result.exit_code == 1
    finding = next(f for f in json.loads(result.stdout)["findings"] if f["name"] == "dshm-missing")
    assert finding["file"] == "<stdin>"
    assert finding["object"] == {"kind": "Pod", "namespace": None, "name": "p"}
    assert finding["path"] == "spec.containers[0]"
    assert (finding["line"], finding["column"]) == (6, 5)
    assert {"file", "line", "column", "rule", "name", "severity", "message", "object", "path"} <= set(finding)


def test_suppression_annotation_and_line_comment() -> None:
    annotated = GPU_POD.replace(
        "metadata: {name: p}",
        "metadata:\n  name: p\n  annotations:\n    kubegpu.io/ignore: 'dshm-missing: inference only; KG101: reviewed'",
    )
    result = runner.invoke(app, ["lint", "-", "-o", "json"], input=annotated)
    names = {f["name"] for f in json.loads(result.stdout)["findings"]}
    assert "dshm-missing" not in names and "gpu-pod-not-guaranteed" not in names
    no_reason = GPU_POD.replace(
        "metadata: {name: p}", "metadata:\n  name: p\n  annotations:\n    kubegpu.io/ignore: dshm-missing"
    )
    names = {
        f["name"]
        for f in json.loads(runner.invoke(app, ["lint", "-", "-o", "json"], input=no_reason).stdout)["findings"]
    }
    assert {"dshm-missing", "suppression-without-reason"} <= names
    commented = GPU_POD.replace("  - name: c\n", "  - name: c  # kubegpu: ignore[KG201]\n")
    names = {
        f["name"]
        for f in json.loads(runner.invoke(app, ["lint", "-", "-o", "json"], input=commented).stdout)["findings"]
    }
    assert "dshm-missing" not in names


def test_config_file_select_and_severity(tmp_path: Path) -> None:
    (tmp_path / "kubegpu.toml").write_text('select = ["KG2"]\n[severity]\ndshm-missing = "info"\n')
    (tmp_path / "pod.yaml").write_text(GPU_POD)
    result = runner.invoke(app, ["lint", str(tmp_path / "pod.yaml"), "-o", "json"])
    findings = json.loads(result.stdout)["findings"]
    assert {f["rule"][:3] for f in findings} == {"KG2"}
    assert all(f["severity"] == "info" for f in findings if f["name"] == "dshm-missing")
    assert result.exit_code == 0  # info is below the default fail-on (warning)
    (tmp_path / "kubegpu.toml").write_text('select = ["no-such-rule"]\n')
    bad = runner.invoke(app, ["lint", str(tmp_path / "pod.yaml")])
    assert bad.exit_code == 2 and "unknown rule" in bad.output


def test_explain_and_rules() -> None:
    assert "## Why" in runner.invoke(app, ["explain", "KG201"]).stdout
    assert runner.invoke(app, ["explain", "dshm-missing"]).exit_code == 0
    assert runner.invoke(app, ["explain", "nope"]).exit_code == 2
    listed = json.loads(runner.invoke(app, ["rules", "-o", "json"]).stdout)
    assert {r["code"] for r in listed} == {r.code for r in all_rules()}


@pytest.mark.parametrize("script", ["kubegpu", "kubectl-gpu"])
def test_console_scripts(script: str) -> None:
    exe = Path(sys.executable).parent / script
    result = subprocess.run([str(exe), "--help"], capture_output=True, text=True, check=False)
    assert result.returncode == 0
    assert ("kubectl gpu" if script == "kubectl-gpu" else "kubegpu") in result.stdout
