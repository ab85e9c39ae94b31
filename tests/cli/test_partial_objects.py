"""A kustomize-style patch fragment (a Deployment whose container names no image) is one thing for every command:
lint counts it as a partial object and does not lint it, admit names it and skips it, simulate skips and counts
it, gen refuses it naming its file and line, and the Python API skips it (kubegpu.workloads.partial)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kubegpu.cli.main import app
from kubegpu.manifests import load_text
from kubegpu.workloads.partial import partial_object

runner = CliRunner()

# What a kustomize strategic-merge patch holds: the container by name and only the fields it changes.
FRAGMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: vllm}
spec:
  template:
    spec:
      containers:
      - name: vllm
        resources:
          limits: {nvidia.com/gpu: 2}
"""

WHOLE_POD = """\
apiVersion: v1
kind: Pod
metadata: {name: trainer}
spec:
  containers:
  - name: trainer
    image: nvcr.io/nvidia/pytorch:25.01-py3
    resources:
      requests: {cpu: "8", memory: 64Gi, nvidia.com/gpu: 1}
      limits: {cpu: "8", memory: 64Gi, nvidia.com/gpu: 1}
"""

JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: finetune
  annotations: {kubegpu.io/duration: 1h}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: train
        image: nvcr.io/nvidia/pytorch:25.01-py3
        resources:
          limits: {cpu: "8", memory: 64Gi, nvidia.com/gpu: 1}
"""

JOB_FRAGMENT = """\
apiVersion: batch/v1
kind: Job
metadata: {name: finetune-patch}
spec:
  template:
    spec:
      containers:
      - name: train
        resources:
          limits: {nvidia.com/gpu: 4}
"""


@pytest.fixture
def mixed(tmp_path: Path) -> Path:
    path = tmp_path / "mixed.yaml"
    path.write_text(f"{WHOLE_POD}---\n{FRAGMENT}", encoding="utf-8")
    return path


def test_the_decision_is_made_once_in_the_manifests_layer() -> None:
    docs = load_text("mixed.yaml", f"{WHOLE_POD}---\n{FRAGMENT}").documents
    assert [partial_object(d) is None for d in docs] == [True, False]
    fragment = partial_object(docs[1])
    assert fragment is not None and (fragment.file, fragment.line) == ("mixed.yaml", 19)
    assert fragment.what == "Deployment/vllm: container 'vllm' has no image"
    # a custom resource's controller may fill the image in: not a fragment; an empty image is none
    custom = load_text("c.yaml", FRAGMENT.replace("apps/v1", "example.com/v1")).documents[0]
    assert partial_object(custom) is None
    blank = load_text("b.yaml", WHOLE_POD.replace("nvcr.io/nvidia/pytorch:25.01-py3", '" "')).documents[0]
    assert partial_object(blank) is not None


def test_lint_and_admit_agree_on_a_patch_fragment(mixed: Path) -> None:
    lint = runner.invoke(app, ["lint", str(mixed), "-o", "json"])
    assert lint.exit_code in (0, 1), lint.output
    report = json.loads(lint.stdout)
    assert report["summary"]["partial_objects"] == 1
    assert report["summary"]["pod_templates"] == 1  # the whole pod only
    assert all(f["line"] < 12 for f in report["findings"])  # nothing reported on the fragment
    admit = runner.invoke(app, ["admit", str(mixed), "--node", "dgx-h100", "-o", "json"])
    assert admit.exit_code == 0, admit.output
    assert [r["pod"] for r in json.loads(admit.stdout)] == ["trainer"]  # the same one pod
    notice = f"kubegpu: notice: {mixed}:19: Deployment/vllm: container 'vllm' has no image: a patch fragment"
    assert notice in admit.stderr


def test_admit_of_a_fragment_alone_is_no_error(tmp_path: Path) -> None:
    path = tmp_path / "patch.yaml"
    path.write_text(FRAGMENT, encoding="utf-8")
    admit = runner.invoke(app, ["admit", str(path), "--node", "dgx-h100"])
    assert admit.exit_code == 0, admit.output
    assert "pod vllm" not in admit.stdout and "not checked" in admit.stderr
    lint = runner.invoke(app, ["lint", str(path), "-o", "json"])
    assert lint.exit_code == 0 and json.loads(lint.stdout)["findings"] == []


def test_gen_refuses_a_fragment_naming_file_and_line(mixed: Path) -> None:
    result = runner.invoke(app, ["gen", "prepull", "--from", str(mixed)])
    assert result.exit_code == 2
    line = result.stderr.strip()
    assert "\n" not in line and f"{mixed}:19" in line
    assert "Deployment/vllm: container 'vllm' has no image: a partial object (a patch fragment)" in line


def test_simulate_skips_and_counts_a_fragment(tmp_path: Path) -> None:
    from kubegpu.sim.workload import read_job_manifests

    jobs = tmp_path / "jobs.yaml"
    jobs.write_text(f"{JOB}---\n{JOB_FRAGMENT}", encoding="utf-8")
    found, fragments = read_job_manifests([jobs])
    assert [j.name for j in found] == ["finetune"]
    assert [(f.kind, f.name, f.line) for f in fragments] == [("Job", "finetune-patch", 23)]
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text("nodes:\n  - {name: gpu8, cpu: 64, memory: 512Gi, gpus: 8, model: H100}\n", encoding="utf-8")
    args = ["simulate", "--nodes", str(cluster), "--pods", str(jobs), "--mode", "events", "-o", "json"]
    result = runner.invoke(app, [*args, "--policy", "most-allocated"])
    assert result.exit_code == 0, result.output
    assert '"completed_pods": 1' in result.stdout  # the whole Job only, not a 4-GPU fragment
    assert "Job/finetune-patch: container 'train' has no image: a patch fragment, not simulated" in result.stderr
    assert "1 partial object skipped" in result.stderr
    # lint agrees: one partial object, one pod template
    summary = json.loads(runner.invoke(app, ["lint", str(jobs), "-o", "json"]).stdout)["summary"]
    assert (summary["partial_objects"], summary["pod_templates"]) == (1, 1)


def test_python_api_admit_skips_a_fragment() -> None:
    from kubegpu import api

    assert [r.pod for r in api.admit(f"{WHOLE_POD}---\n{FRAGMENT}", "dgx-h100")] == ["trainer"]
    assert api.admit(FRAGMENT, "dgx-h100") == []
