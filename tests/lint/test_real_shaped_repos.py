"""`kubegpu lint DIR` on repositories shaped like kuberay, kserve and ai-on-gke (tests/fixtures/repos/ray-tpu, serving,
gke-bench: written for these tests): templates and other tools' files are skipped and counted, a broken manifest
is a finding, and the exit codes follow the documented contract (docs/commands/lint.md, "Exit codes")."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from kubegpu.cli.main import app

REPOS = Path(__file__).resolve().parents[1] / "fixtures" / "repos"
runner = CliRunner()


def _lint(*args: str) -> tuple[int, dict[str, Any]]:
    result = runner.invoke(app, ["lint", *args, "-o", "json"])
    return result.exit_code, json.loads(result.stdout) if result.stdout.strip() else {}


def _by_file(report: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    found: dict[str, list[dict[str, Any]]] = {}
    for finding in report["findings"]:
        found.setdefault(Path(finding["file"]).name, []).append(finding)
    return found


def _skipped(report: dict[str, Any]) -> dict[str, dict[str, str]]:
    return {Path(s["file"]).name: s for s in report["summary"]["skipped"]}


def test_a_kuberay_shaped_repository() -> None:
    repo = str(REPOS / "ray-tpu")
    code, report = _lint(repo, "--exit-zero")
    assert code == 0
    assert runner.invoke(app, ["lint", repo]).exit_code == 1  # findings fail the run without --exit-zero
    summary = report["summary"]
    assert (summary["template_files"], summary["not_kubernetes_files"]) == (2, 1)
    skipped = _skipped(report)
    assert skipped[".krew.yaml"]["what"] == "template" and "a Go template" in skipped[".krew.yaml"]["reason"]
    assert "`{{.Name}}` at line 5" in skipped["raycluster.yaml"]["reason"]  # the first marker outside comments
    assert "not a Kubernetes manifest" in skipped["mkdocs.yml"]["reason"]
    assert "Dockerfile" not in skipped  # a Dockerfile is linted, not an empty file
    findings = _by_file(report)
    assert [f["rule"] for f in findings["Dockerfile"]] == ["KG304"]
    codes = Counter(f["rule"] for f in report["findings"])
    assert codes["KG001"] == 1 and findings["raycluster.yaml"][0]["rule"] == "KG001"  # meant as a manifest: broken
    multihost = {f["rule"]: f["message"] for f in findings["ray-cluster.tpu-v6e-16.yaml"]}
    assert "KG601" not in multihost  # the gke-tpu-topology nodeSelector keeps the hosts on one TPU slice
    assert "hold TPUs" in multihost["KG501"]
    assert multihost["KG201"].startswith("TPU container(s) 'ray-worker'")
    assert "Ray's object store" in multihost["KG201"]
    assert "NCCL" not in multihost["KG201"] and "PyTorch" not in multihost["KG201"]
    single = {f["rule"] for f in findings["ray-job.tpu-jax.yaml"]}
    assert "KG501" not in single  # one TPU pod beside a CPU head: nothing to gang
    gpu = {f["rule"]: f["message"] for f in findings["ray-cluster.gpu.yaml"]}
    assert "Ray's object store" in gpu["KG201"] and "NCCL fails" in gpu["KG201"]


def test_a_kserve_shaped_repository() -> None:
    code, report = _lint(str(REPOS / "serving"), "--exit-zero")
    assert code == 0
    assert report["summary"]["template_files"] == 3
    reasons = {name: s["reason"] for name, s in _skipped(report).items()}
    assert "a Go template" in reasons["storage-patch.yaml"]
    assert "a Jinja template" in reasons["switch-scenario.yaml"]
    assert "a sample with a placeholder to fill in (`{username}` at line 9)" in reasons["torchserve-gpu.yaml"]
    findings = _by_file(report)
    assert all(f["rule"] != "KG001" for f in report["findings"])
    # The preset in `kserve` mounts a memory-backed /dev/shm into `main`; team-a's own preset, which KServe takes
    # first for a service in team-a, does not.
    assert "KG201" not in {f["rule"] for f in findings["single-gpu.yaml"]}
    assert "KG201" in {f["rule"] for f in findings["team-a.yaml"]}
    # The presets make no pods of their own.
    assert "config-llm-template.yaml" not in findings and "team-a-override.yaml" not in findings


def test_an_ai_on_gke_shaped_repository() -> None:
    code, report = _lint(str(REPOS / "gke-bench"), "--exit-zero")
    assert code == 0
    summary = report["summary"]
    assert (summary["template_files"], summary["not_kubernetes_files"]) == (3, 2)
    reasons = {name: s["reason"] for name, s in _skipped(report).items()}
    assert "`${}` interpolations" in reasons["values.yaml"]
    assert "a Go template" in reasons["config.yaml"] and "a Go template" in reasons["statefulset.yaml"]
    tpu = [f for f in report["findings"] if f["file"].endswith("jetstream.yaml") and f["rule"] == "KG201"]
    assert [f["severity"] for f in tpu] == ["info"]  # TPU collectives do not use /dev/shm; data loaders might
    assert "TPU collectives do not use it" in tpu[0]["message"]
    messages = {f["rule"]: f["message"] for f in report["findings"] if f["file"].endswith("mpijob.yaml")}
    assert "MPI and NCCL collective" in messages["KG601"]
    assert "shared-memory transports of MPI and NCCL" in messages["KG201"] and "PyTorch" not in messages["KG201"]


def test_exit_two_only_when_nothing_could_be_read(tmp_path: Path) -> None:
    broken = REPOS / "ray-tpu" / "broken" / "raycluster.yaml"
    for extra in ((), ("--exit-zero",), ("--ignore", "KG001")):
        result = runner.invoke(app, ["lint", str(broken), *extra])
        assert result.exit_code == 2, extra  # the only input does not parse: kubegpu could not do its job
        assert "no input could be read" in result.stderr
    template = REPOS / "ray-tpu" / ".krew.yaml"
    alone = runner.invoke(app, ["lint", str(template), "--verbose"])
    assert alone.exit_code == 0 and "a Go template" in alone.output  # read and skipped: nothing wrong
    both = runner.invoke(app, ["lint", str(broken), str(REPOS / "ray-tpu" / "samples" / "ray-job.tpu-jax.yaml")])
    assert both.exit_code == 1  # one input was read: the broken one is a finding
    assert runner.invoke(app, ["lint", str(tmp_path / "missing.yaml")]).exit_code == 2
    assert runner.invoke(app, ["lint", str(tmp_path)]).exit_code == 2  # no input at all
    assert runner.invoke(app, ["lint", str(broken), "--fail-on", "nonsense"]).exit_code == 2  # a usage error


def test_the_accuracy_sample_is_fixed_by_its_seed() -> None:
    from tests.lint.sample_findings import sample

    findings = [
        {"file": f"f{i % 7}.yaml", "line": i, "column": 1, "rule": f"KG{100 + i % 5}", "message": str(i)}
        for i in range(100)
    ]
    first = sample(findings, 30, 25)
    assert len(first) == 30 and len({(f["file"], f["line"]) for f in first}) == 30
    assert sample(list(reversed(findings)), 30, 25) == first  # the report's order does not matter
    assert sample(findings, 30, 26) != first
    assert sample(findings[:10], 30, 25) == sorted(findings[:10], key=lambda f: (f["file"], f["line"]))


def test_every_judged_finding_is_decided_and_every_wrong_one_fixed_or_explained() -> None:
    table = Path(__file__).with_name("real_repo_judgments.tsv")
    rows = [line.split("\t") for line in table.read_text().splitlines()[3:]]
    assert rows and all(len(row) == 6 for row in rows)
    assert {row[4] for row in rows} <= {"right", "wrong", "debatable"}
    assert all(row[5].startswith(("fixed:", "not fixed")) for row in rows if row[4] == "wrong")
    assert all(count <= 30 for count in Counter(row[0] for row in rows).values())
