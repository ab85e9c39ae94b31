"""`kubegpu lint` on a whole platform repository: skipped files, file selection, charts, kustomize, exit codes."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kubegpu.cli.main import app
from tests.lint.tools import find_tool, require_tool, without_tools
from tests.paths import REPO_ROOT

PLATFORM = REPO_ROOT / "tests" / "fixtures" / "repos" / "platform"
runner = CliRunner()


def _json(args: list[str]) -> tuple[int, dict[str, object]]:
    result = runner.invoke(app, ["lint", *args, "-o", "json"])
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, json.loads(result.stdout)


@pytest.fixture
def platform(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the platform repository as the working directory (findings name files relative to it)."""
    copy = tmp_path / "platform"
    shutil.copytree(PLATFORM, copy)
    monkeypatch.chdir(copy)
    return copy


def test_files_that_are_not_kubernetes_are_counted_not_reported(
    platform: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    without_tools(monkeypatch, tmp_path)
    result = runner.invoke(app, ["lint", ".", "--verbose"])
    assert result.exit_code == 1, result.output  # the GPU manifests have findings; nothing else does
    assert "KG002" not in result.output and "KG001" not in result.output
    assert "3 files are not Kubernetes objects" in result.output
    assert "2 objects are of kinds kubegpu does not check" in result.output
    for name in ("package.json", "docker-compose.yaml", ".gitlab-ci.yml", "BurnJob/nightly", "Cluster"):
        assert name in result.output
    assert runner.invoke(app, ["lint", ".", "--exit-zero"]).exit_code == 0


def test_without_helm_or_kustomize_each_is_one_notice(
    platform: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    without_tools(monkeypatch, tmp_path)
    code, report = _json([".", "--exit-zero"])
    summary = report["summary"]
    assert isinstance(summary, dict)
    notices = summary["notices"]
    assert code == 0
    assert notices == [
        "chart charts/inference: not rendered: helm not found; install helm or pipe `helm template` output to "
        "`kubegpu lint -`",
        *[
            f"kustomization deploy/trainer/{k}: not rendered: neither kustomize nor kubectl found; install one or "
            "pipe `kustomize build` output to `kubegpu lint -`"
            for k in ("base", "overlays/dev", "overlays/prod")
        ],
    ]
    files = {f["file"] for f in report["findings"]}  # type: ignore[union-attr,index]
    assert not any("templates" in f or "patches" in f for f in files), files  # never linted as files


def test_a_broken_object_is_still_reported(tmp_path: Path) -> None:
    (tmp_path / "values.yaml").write_text("replicaCount: 2\n")
    (tmp_path / "broken.yaml").write_text("kind: Deployment\nmetadata: {name: web}\n")
    result = runner.invoke(app, ["lint", str(tmp_path)])
    assert result.exit_code == 1
    assert "KG002" in result.output and "broken.yaml" in result.output
    assert "1 file is not a Kubernetes object (skipped" in result.output


def test_no_input_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello\n")
    result = runner.invoke(app, ["lint", str(tmp_path)])
    assert result.exit_code == 2
    assert "no input" in result.output


def _git_repo(folder: Path) -> None:
    subprocess.run(["git", "init", "-q", str(folder)], check=True)


def test_gitignore_excludes_and_tool_folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if shutil.which("git") is None:
        pytest.skip("git not installed")
    gpu = (PLATFORM / "manifests" / "embeddings.yaml").read_text()
    repo = tmp_path / "repo"
    for relative in (
        "apps/web.yaml",
        "generated/out.yaml",
        "apps/legacy/old.yaml",
        "node_modules/pkg/x.yaml",
        ".venv/lib/x.yaml",
        "env/pyvenv-like/x.yaml",
        "apps/skip.generated.yaml",
    ):
        (repo / relative).parent.mkdir(parents=True, exist_ok=True)
        (repo / relative).write_text(gpu)
    (repo / "env" / "pyvenv-like" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    _git_repo(repo)
    (repo / ".gitignore").write_text("generated/\n")
    (repo / "kubegpu.toml").write_text('extend-exclude = ["*.generated.yaml"]\n')
    monkeypatch.chdir(repo)

    def files(*args: str) -> set[str]:
        _code, report = _json([".", "--exit-zero", *args])
        return {f["file"] for f in report["findings"]}  # type: ignore[union-attr,index]

    assert files() == {"apps/web.yaml", "apps/legacy/old.yaml"}
    assert files("--exclude", "legacy/") == {"apps/web.yaml"}
    assert files("--no-respect-gitignore") == {"apps/web.yaml", "apps/legacy/old.yaml", "generated/out.yaml"}
    # Named explicitly, a file is linted unless --force-exclude (pre-commit passes every changed file).
    _code, report = _json(["generated/out.yaml", "apps/skip.generated.yaml", "--exit-zero"])
    assert {f["file"] for f in report["findings"]} == {"generated/out.yaml", "apps/skip.generated.yaml"}  # type: ignore[union-attr,index]
    result = runner.invoke(app, ["lint", "generated/out.yaml", "apps/skip.generated.yaml", "--force-exclude"])
    assert result.exit_code == 2 and "no input" in result.output


def test_mistyped_rules_get_a_close_match(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
    for args, hint in (
        (["--select", "dshm-mising"], "did you mean dshm-missing?"),
        (["--ignore", "gpu-pod-not-guarantied"], "did you mean gpu-pod-not-guaranteed?"),
        (["--fail-on", "eror"], "did you mean error?"),
    ):
        result = runner.invoke(app, ["lint", str(tmp_path), *args])
        assert result.exit_code == 2, result.output
        assert hint in result.output
    explained = runner.invoke(app, ["explain", "dshm-mising"])
    assert explained.exit_code == 2 and "did you mean dshm-missing?" in explained.output


def test_fail_on_and_exit_zero(tmp_path: Path) -> None:
    (tmp_path / "gpu.yaml").write_text((PLATFORM / "manifests" / "embeddings.yaml").read_text())
    assert runner.invoke(app, ["lint", str(tmp_path)]).exit_code == 1
    assert runner.invoke(app, ["lint", str(tmp_path), "--fail-on", "error"]).exit_code == 0
    assert runner.invoke(app, ["lint", str(tmp_path), "--exit-zero"]).exit_code == 0
    (tmp_path / "bad.yaml").write_text("apiVersion: v1\nkind: Pod\nspec: [\n")
    # a broken manifest among readable ones is a finding: it fails the run, unless --exit-zero
    assert runner.invoke(app, ["lint", str(tmp_path), "--fail-on", "error"]).exit_code == 1
    assert runner.invoke(app, ["lint", str(tmp_path), "--exit-zero"]).exit_code == 0
    assert runner.invoke(app, ["lint", str(tmp_path), "--exclude", "bad.yaml", "--fail-on", "error"]).exit_code == 0


def test_stdin_filename_names_piped_input_in_every_format() -> None:
    text = (PLATFORM / "manifests" / "embeddings.yaml").read_text()
    for fmt in ("text", "json", "sarif", "junit", "github"):
        result = runner.invoke(
            app, ["lint", "-", "--stdin-filename", "deploy/serving.yaml", "-o", fmt, "--exit-zero"], input=text
        )
        assert result.exit_code == 0, result.output
        assert "deploy/serving.yaml" in result.stdout, fmt
        assert "stdin" not in result.stdout, fmt


def test_text_is_not_wrapped_when_not_a_terminal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "40")
    (tmp_path / "gpu.yaml").write_text((PLATFORM / "manifests" / "embeddings.yaml").read_text())
    result = runner.invoke(app, ["lint", str(tmp_path), "--exit-zero"])
    message = next(line for line in result.stdout.splitlines() if "have no memory-backed emptyDir" in line)
    assert message.rstrip().endswith("'No space left on device'")


# ------------------------------------------------------------------------------------------------ Helm


def test_helm_findings_point_at_template_lines_once(platform: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    require_tool(monkeypatch, "helm")
    _code, report = _json(["charts", "--exit-zero"])
    findings = report["findings"]
    assert isinstance(findings, list)
    template = "charts/inference/templates/deployment.yaml"
    lines = (platform / template).read_text().splitlines()
    got = {(f["name"], f["file"], lines[f["line"] - 1].strip()) for f in findings}
    assert ("dshm-missing", template, "- name: server") in got
    assert ("gpu-pod-not-guaranteed", template, "resources:") in got
    # Two models render two Deployments from one template: each finding is reported once, naming the chart.
    assert len(findings) == len({(f["rule"], f["file"], f["line"]) for f in findings})
    assert all(f["message"].endswith("[chart charts/inference]") for f in findings)


def test_helm_values_and_set_reach_the_chart(platform: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    require_tool(monkeypatch, "helm")
    (platform / "shm.yaml").write_text("shm:\n  enabled: true\n")
    _code, report = _json(["charts", "--exit-zero", "--helm-values", "shm.yaml"])
    assert "dshm-missing" not in {f["name"] for f in report["findings"]}  # type: ignore[union-attr,index]
    _code, report = _json(["charts", "--exit-zero", "--helm-set", "shm.enabled=true"])
    assert "dshm-missing" not in {f["name"] for f in report["findings"]}  # type: ignore[union-attr,index]
    (platform / "kubegpu.toml").write_text('[helm.charts."charts/inference"]\nset = ["shm.enabled=true"]\n')
    _code, report = _json(["charts", "--exit-zero"])
    assert "dshm-missing" not in {f["name"] for f in report["findings"]}  # type: ignore[union-attr,index]


def test_a_file_inside_a_chart_stands_for_the_chart(platform: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    require_tool(monkeypatch, "helm")
    _code, report = _json(["charts/inference/templates/deployment.yaml", "charts/inference/values.yaml", "--exit-zero"])
    assert {f["file"] for f in report["findings"]} == {"charts/inference/templates/deployment.yaml"}  # type: ignore[union-attr,index]


def test_a_chart_that_does_not_render_is_an_input_error(platform: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    require_tool(monkeypatch, "helm")
    template = platform / "charts" / "inference" / "templates" / "deployment.yaml"
    template.write_text(template.read_text().replace("{{- end }}\n", "", 1))
    result = runner.invoke(app, ["lint", "charts", "--exit-zero"])
    assert result.exit_code == 2
    assert "helm template failed" in result.output and "Chart.yaml" in result.output


# ------------------------------------------------------------------------------------------- kustomize


def test_kustomize_findings_point_at_the_patch_and_name_the_overlay(
    platform: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    require_tool(monkeypatch, "kustomize", "kubectl")
    before = {p: p.read_bytes() for p in platform.rglob("*") if p.is_file()}
    _code, report = _json(["deploy", "--exit-zero"])
    findings = report["findings"]
    assert isinstance(findings, list)
    patch = "deploy/trainer/overlays/prod/patches/gpus.yaml"
    assert [(f["name"], f["file"], f["line"]) for f in findings] == [("gpu-pod-not-guaranteed", patch, 13)]
    assert findings[0]["message"].endswith("[kustomization deploy/trainer/overlays/prod]")
    assert {p: p.read_bytes() for p in platform.rglob("*") if p.is_file()} == before  # nothing written


def test_a_base_finding_in_one_overlay_says_which(platform: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    require_tool(monkeypatch, "kustomize", "kubectl")
    dev = platform / "deploy" / "trainer" / "overlays" / "dev"
    (dev / "kustomization.yaml").write_text(
        (dev / "kustomization.yaml").read_text()
        + (
            "patches:\n  - target: {kind: Job, name: finetune}\n    patch: |-\n"
            "      - op: remove\n        path: /spec/template/spec/volumes\n"
            "      - op: remove\n        path: /spec/template/spec/containers/0/volumeMounts\n"
        )
    )
    _code, report = _json(["deploy", "--exit-zero"])
    dshm = [f for f in report["findings"] if f["name"] == "dshm-missing"]  # type: ignore[union-attr,index]
    assert len(dshm) == 1
    assert dshm[0]["file"] == "deploy/trainer/base/job.yaml"
    assert dshm[0]["message"].endswith("[only in kustomization deploy/trainer/overlays/dev]")


def test_the_whole_repository_reports_each_finding_once(platform: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if find_tool("helm") is None or (find_tool("kustomize") is None and find_tool("kubectl") is None):
        pytest.skip("helm and kustomize (or kubectl) are needed (.ci/run installs them)")
    require_tool(monkeypatch, "helm")
    result = runner.invoke(app, ["lint", ".", "--exit-zero"])
    assert result.exit_code == 0, result.output
    _code, report = _json([".", "--exit-zero", "--jobs", "2"])
    findings = report["findings"]
    assert isinstance(findings, list)
    assert len(findings) == len({(f["rule"], f["file"], f["line"], f["path"]) for f in findings})
    assert not any("kustomization.yaml" in f["file"] or f["file"].endswith("Chart.yaml") for f in findings)
    summary = report["summary"]
    assert isinstance(summary, dict)
    assert (summary["not_kubernetes_files"], summary["unchecked_objects"], summary["notices"]) == (3, 2, [])


def test_streaming_gives_what_loading_everything_gives(shared_dir: Path) -> None:
    from kubegpu.lint import LintConfig, lint_paths
    from kubegpu.report.findings_json import render_json

    for paths in ([str(shared_dir / "corpus" / "real")], [str(PLATFORM)]):
        whole = render_json(lint_paths(paths, LintConfig()))
        assert render_json(lint_paths(paths, LintConfig(), keep_documents=False)) == whole
        assert render_json(lint_paths(paths, LintConfig(), keep_documents=False, jobs=2)) == whole


def test_streamed_findings_that_say_the_same_thing_share_one_text(tmp_path: Path) -> None:
    """A monorepo's findings repeat a few thousand messages: streamed, equal ones are one string, not copies."""
    from kubegpu.lint import LintConfig, lint_paths

    pod = (
        "apiVersion: v1\nkind: Pod\nmetadata: {{name: p{n}}}\nspec:\n  containers:\n  - name: main\n"
        "    image: trainer:1.0\n    resources: {{limits: {{nvidia.com/gpu: 8}}}}\n"
    )
    for n in range(3):
        (tmp_path / f"pod{n}.yaml").write_text(pod.format(n=n))
    streamed = lint_paths([str(tmp_path)], LintConfig(), keep_documents=False).findings
    whole = lint_paths([str(tmp_path)], LintConfig()).findings
    assert [f.message for f in streamed] == [f.message for f in whole]
    texts = {f.message for f in streamed}
    assert len(texts) < len(streamed)  # the three pods have the same problems
    assert len({id(f.message) for f in streamed}) == len(texts)


def test_the_summary_counts_objects_read_generically(tmp_path: Path) -> None:
    (tmp_path / "run.yaml").write_text(
        "apiVersion: example.com/v1\nkind: TrainingRun\nmetadata: {name: r}\nspec:\n  worker:\n    template:\n"
        "      spec:\n        containers:\n        - name: t\n          image: trainer:1.0\n"
        "          resources: {limits: {nvidia.com/gpu: 8}}\n"
        "---\napiVersion: example.com/v1\nkind: Dashboard\nmetadata: {name: d}\nspec: {title: x}\n"
    )
    _code, report = _json([str(tmp_path), "--exit-zero"])
    summary = report["summary"]
    assert isinstance(summary, dict)
    assert summary["generic_objects"] == 1 and summary["unchecked_objects"] == 1
    result = runner.invoke(app, ["lint", str(tmp_path), "--exit-zero"])
    assert "1 object was of kinds with no known mapping" in result.output
    assert "1 object is of kinds kubegpu does not check" in result.output


def test_the_summary_counts_patch_fragments_read_on_their_own(tmp_path: Path) -> None:
    """A strategic-merge patch named on its own is counted as partial, never linted as a whole Deployment."""
    (tmp_path / "patch.yaml").write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: server}\nspec:\n  template:\n    spec:\n"
        "      containers:\n      - name: inference-server\n        args: [--max-model-len=1200]\n"
        "        resources: {limits: {cpu: '2', memory: 25Gi, nvidia.com/gpu: 1}}\n"
    )
    code, report = _json([str(tmp_path / "patch.yaml")])
    assert code == 0 and report["findings"] == []
    summary = report["summary"]
    assert isinstance(summary, dict)
    assert (summary["partial_objects"], summary["unchecked_objects"], summary["pod_templates"]) == (1, 0, 0)
    assert "container 'inference-server' has no image" in summary["skipped"][0]["reason"]
    result = runner.invoke(app, ["lint", str(tmp_path / "patch.yaml"), "--verbose"])
    assert "1 object is partial (a container without an image: a patch fragment)" in result.output
