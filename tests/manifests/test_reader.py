"""Every command that reads manifests takes files, folders and `-` alike, through lint's walk and renders."""

from __future__ import annotations

import io
import os
import shutil
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kubegpu.cli.main import app
from kubegpu.errors import InputError
from kubegpu.manifests.reader import read_inputs
from tests.paths import REPO_ROOT

PLATFORM = REPO_ROOT / "tests" / "fixtures" / "repos" / "platform"
runner = CliRunner()
POD = """\
apiVersion: v1
kind: Pod
metadata: {name: NAME}
spec:
  containers:
  - name: server
    image: registry.example.com/NAME:1.0
    resources: {limits: {nvidia.com/gpu: 1}}
"""


def _pod(path: Path, name: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(POD.replace("NAME", name))
    return path


def test_a_folder_is_walked_as_lint_walks_it(tmp_path: Path) -> None:
    _pod(tmp_path / "k8s" / "a.yaml", "a")
    _pod(tmp_path / "k8s" / "team" / "b.yaml", "b")
    _pod(tmp_path / "k8s" / "node_modules" / "c.yaml", "c")  # a tool folder: not walked
    (tmp_path / "k8s" / "values.yaml").write_text("replicas: 2\n")  # not an object: passed over
    _pod(tmp_path / "k8s" / ".hidden" / "d.yaml", "d")  # a hidden folder: not walked
    inputs = read_inputs([str(tmp_path / "k8s")])
    assert [d.ref.name for d in inputs.documents] == ["a", "b"]
    assert all(f.walked for f in inputs.files)


def test_a_link_out_of_the_folder_is_not_followed(tmp_path: Path) -> None:
    outside = _pod(tmp_path / "secret" / "pod.yaml", "outside")
    _pod(tmp_path / "k8s" / "a.yaml", "a")
    os.symlink(outside, tmp_path / "k8s" / "out.yaml")
    inputs = read_inputs([str(tmp_path / "k8s")])
    assert [d.ref.name for d in inputs.documents] == ["a"]
    assert any("symbolic link was not followed" in n for n in inputs.notices)


def test_a_file_named_alone_must_hold_objects(tmp_path: Path) -> None:
    (tmp_path / "x.yaml").write_text("kind: Pod\nmetadata: {name: x}\n")
    with pytest.raises(InputError) as err:
        read_inputs([str(tmp_path / "x.yaml")])
    assert "x.yaml" in str(err.value)
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="no manifest found in"):
        read_inputs([str(tmp_path / "empty")])


def test_standard_input(monkeypatch: pytest.MonkeyPatch) -> None:
    stdin = io.TextIOWrapper(io.BytesIO(POD.replace("NAME", "piped").encode()))
    monkeypatch.setattr(sys, "stdin", stdin)
    assert [d.ref.name for d in read_inputs(["-"]).documents] == ["piped"]


def test_gen_prepull_from_a_folder(tmp_path: Path) -> None:
    _pod(tmp_path / "k8s" / "a.yaml", "a")
    _pod(tmp_path / "k8s" / "b.yaml", "b")
    result = runner.invoke(app, ["gen", "prepull", "--from", str(tmp_path / "k8s")])
    assert result.exit_code == 0, result.output
    assert "registry.example.com/a:1.0" in result.stdout and "registry.example.com/b:1.0" in result.stdout


def test_coldstart_and_simulate_read_a_folder(tmp_path: Path) -> None:
    from kubegpu.sim.workload import read_job_manifests

    _pod(tmp_path / "k8s" / "a.yaml", "a")
    cold = runner.invoke(app, ["coldstart", str(tmp_path / "k8s"), "-o", "json"])
    assert cold.exit_code == 0, cold.output
    shutil.copy(REPO_ROOT / "examples" / "train-pytorchjob.yaml", tmp_path / "k8s" / "train.yaml")
    jobs, _ = read_job_manifests([tmp_path / "k8s"])
    assert [job.name for job in jobs] == ["llama-finetune"]


def test_a_chart_in_a_folder_is_rendered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if shutil.which("helm") is None:
        pytest.skip("helm is not installed")
    copy = tmp_path / "platform"
    shutil.copytree(PLATFORM, copy)
    monkeypatch.chdir(copy)
    result = runner.invoke(app, ["gen", "prepull", "--from", "charts"])
    assert result.exit_code == 0, result.output
    assert "image" in result.stdout


def test_a_base_is_read_through_the_overlay_that_includes_it(tmp_path: Path) -> None:
    if shutil.which("kustomize") is None and shutil.which("kubectl") is None:
        pytest.skip("neither kustomize nor kubectl is installed")
    base = _pod(tmp_path / "k8s" / "base" / "pod.yaml", "train").parent
    (base / "kustomization.yaml").write_text("resources: [pod.yaml]\n")
    overlay = tmp_path / "k8s" / "overlay"
    overlay.mkdir()
    (overlay / "kustomization.yaml").write_text("resources: [../base]\nnamePrefix: prod-\n")
    inputs = read_inputs([str(tmp_path / "k8s")])
    assert [d.ref.name for d in inputs.documents] == ["prod-train"]  # rendered once, as lint renders it
