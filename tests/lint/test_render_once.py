"""A render-heavy repository linted whole: each chart and kustomization rendered once (bases through the overlays
that include them, Components under `components:`), several at a time, with the same findings whatever the
number of jobs; renders are counted by wrappers around the real helm and kubectl."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from tests.lint.render_repo import counting_tools, runs, write_render_repo
from tests.security.render_fixtures import lint, require


@pytest.fixture(scope="module")
def tools() -> None:
    require("helm")
    require("kustomize", "kubectl")


def _lint(repo: Path, tmp: Path, *args: str) -> tuple[dict[str, object], dict[str, int], str]:
    count = tmp / f"runs-{len(list(tmp.glob('runs-*')))}.txt"
    env = counting_tools(tmp / "bin", count)
    done = lint([".", "-o", "json", "--exit-zero", *args], repo, env)
    assert done.code in (0, 2), done.text  # 2: the broken overlay is an unreadable input
    return json.loads(done.out), runs(count), done.err


def test_each_chart_and_kustomization_is_rendered_once(tmp_path: Path, tools: None) -> None:
    repo = write_render_repo(tmp_path / "repo", overlays=3, crds=3, crd_kib=64, charts=2)
    report, counted, err = _lint(repo.root, tmp_path, "--verbose")
    assert counted == {"kustomize": repo.kustomize_runs, "helm": repo.helm_runs}
    dshm = Counter(f["file"] for f in report["findings"] if f["rule"] == "KG201")
    # every GPU workload once, at the file that declares it, whichever renders brought it in
    assert dshm == Counter(repo.gpu_sources), dshm
    keys = [(f["file"], f["line"], f["rule"], f["path"]) for f in report["findings"]]
    assert len(keys) == len(set(keys))
    # the shared base's workload comes through every overlay: no overlay is named
    manager = next(f for f in report["findings"] if f["rule"] == "KG201" and f["file"] == repo.gpu_sources[0])
    assert "[" not in manager["message"], manager["message"]
    # the Component nothing includes is built alone; its workload is named by it
    tuner = next(f for f in report["findings"] if f["file"] == "config/components/standalone/tuner.yaml")
    assert tuner["message"].endswith("[kustomization config/components/standalone]")
    # the broken overlay is reported with kustomize's whole cause, and the base only it includes is built itself
    broken = next(f for f in report["findings"] if f["rule"] == "KG001")
    assert broken["file"] == "config/legacy/broken/kustomization.yaml"
    assert "missing-patch.yaml" in broken["message"] and "no such file or directory" in broken["message"]
    for leaked in ("kubegpu-kustomize-", "command failed", "err=<", "E12", "/tmp/"):
        assert leaked not in broken["message"], broken["message"]
    lines = err.splitlines()
    assert "kubegpu: failed: kustomization config/legacy/broken in" in "\n".join(lines)
    assert any(line.startswith("kubegpu: rendered: kustomization config/legacy/base in") for line in lines)
    assert any(
        line.startswith("kubegpu: read through kustomization config/overlays/env-0")
        and line.endswith(": kustomization config/default")
        for line in lines
    ), err
    crd_cuts = [line for line in lines if "config/overlays/env-0 in" in line]
    assert crd_cuts and "3 object(s) of kinds no rule reads left out" in crd_cuts[0]
    assert "\r" not in err  # no progress line when standard error is not a terminal


def test_findings_are_the_same_whatever_the_jobs(tmp_path: Path, tools: None) -> None:
    repo = write_render_repo(tmp_path / "repo", overlays=4, crds=2, crd_kib=32, charts=3)
    one, counted_one, _ = _lint(repo.root, tmp_path, "--jobs", "1")
    four, counted_four, _ = _lint(repo.root, tmp_path, "--jobs", "4")
    assert one["findings"] == four["findings"]
    assert one["summary"] == four["summary"]
    assert counted_one == counted_four == {"kustomize": repo.kustomize_runs, "helm": repo.helm_runs}


def test_objects_no_rule_reads_are_counted_but_not_built(tmp_path: Path, tools: None) -> None:
    """The CRDs are cut to their header: still counted as objects read and listed as checked, never linted as
    pods (their schemas hold a pod's shape)."""
    repo = write_render_repo(tmp_path / "repo", overlays=1, crds=4, crd_kib=128, charts=0)
    report, _counted, _ = _lint(repo.root, tmp_path)
    summary = report["summary"]
    # overlay env-0: 4 CRDs, ClusterRole, ServiceAccount, ConfigMap, 2 Deployments; standalone: 1; legacy base: 1;
    # the plain sample: 1
    assert summary["documents"] == 12
    assert not [f for f in report["findings"] if "CustomResourceDefinition" in json.dumps(f["object"])]


def test_no_render_lints_plain_files_only(tmp_path: Path, tools: None) -> None:
    repo = write_render_repo(tmp_path / "repo", overlays=2, crds=1, crd_kib=8, charts=2)
    report, counted, _err = _lint(repo.root, tmp_path, "--no-render")
    assert counted == {"kustomize": 0, "helm": 0}
    assert {f["file"] for f in report["findings"]} == {"docs/samples/pod.yaml"}
    notices = report["summary"]["notices"]
    assert any("not rendered (--no-render)" in n and n.startswith(f"{2 + 9 + 2} ") for n in notices), notices


def test_a_run_of_one_kustomization_renders_it_even_when_an_overlay_includes_it(tmp_path: Path, tools: None) -> None:
    """`lint config/default/kustomization.yaml` (a file given: the git work tree is its root): nothing in the run
    includes the kustomization, so it is built itself."""
    repo = write_render_repo(tmp_path / "repo", overlays=2, crds=1, crd_kib=8, charts=0)
    count = tmp_path / "runs.txt"
    done = lint(
        ["config/default/kustomization.yaml", "-o", "json", "--exit-zero"],
        repo.root,
        counting_tools(tmp_path / "bin", count),
    )
    assert done.code == 0, done.text
    assert runs(count) == {"kustomize": 1, "helm": 0}
    assert {f["file"] for f in json.loads(done.out)["findings"]} == {"config/manager/manager.yaml"}


def test_the_progress_line_rewrites_itself_and_is_cleared() -> None:
    from io import StringIO

    from kubegpu.cli.lint import RenderProgress

    stream = StringIO()
    progress = RenderProgress(stream)
    progress(1, 3, "kustomization config/overlays/env-0")
    progress(2, 3, "chart charts/x\x1b]8;;evil\x07")
    progress.close()
    shown = stream.getvalue()
    assert shown.count("\r\x1b[2K") == 3
    assert "kubegpu: rendered 2/3: chart charts/x" in shown
    assert "\x07" not in shown  # names from the repository are printed escaped
    assert RenderProgress.on_terminal() is None  # pytest's stderr is no terminal


def test_the_whole_input_streamed_gives_what_loading_it_at_once_gives(
    tmp_path: Path, tools: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An autoscaler in a plain file reads the whole input (its scale target is rendered by a kustomization): the
    streamed run (objects without node trees, files one at a time) and the run that loads everything at once
    (what `fix` does) report the same findings."""
    from kubegpu.lint import LintConfig, lint_paths

    repo = write_render_repo(tmp_path / "repo", overlays=2, crds=2, crd_kib=16, charts=1)
    (repo.root / "docs" / "samples" / "hpa.yaml").write_text(
        "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\n"
        "metadata: {name: server, namespace: serving-system}\n"
        "spec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: model-server}\n"
        "  minReplicas: 0\n  maxReplicas: 4\n"
    )
    monkeypatch.chdir(repo.root)
    streamed = lint_paths(["."], LintConfig(), jobs=2, keep_documents=False)
    whole = lint_paths(["."], LintConfig(), jobs=1, keep_documents=True)

    def seen(result: object) -> list[tuple[str, int, str, str]]:
        return [(f.location.file, f.location.line, f.code, f.message) for f in result.findings]  # type: ignore[attr-defined]

    assert seen(streamed) == seen(whole)
    # the autoscaler's finding names the GPU Deployment that only the overlays render
    assert [f.code for f in streamed.findings if f.location.file == "docs/samples/hpa.yaml"] == ["KG403"]
    assert streamed.documents == whole.documents
