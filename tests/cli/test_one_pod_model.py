"""Two pods on which the commands used to disagree: lint, admit, simulate, audit and the webhook now agree.

- A GPU pod with `spec.resources: {}`: with PodLevelResources (on since 1.34) the empty pod-level block alone
  decides the QoS class, BestEffort; lint reported it, admit called it Guaranteed and pinned 8 CPUs.
- A Job whose 8-CPU init container runs before its 8-CPU app container needs 8 CPUs, not 16; the simulator
  summed both and left it pending on a 12-CPU node.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from kubegpu.cli.main import app
from kubegpu.webhook.review import WebhookConfig, review

runner = CliRunner()

GPU_POD = """\
apiVersion: v1
kind: Pod
metadata: {name: trainer, namespace: ml}
spec:
  resources: {}
  containers:
  - name: trainer
    image: nvcr.io/nvidia/pytorch:25.01-py3
    resources:
      requests: {cpu: "8", memory: 64Gi, nvidia.com/gpu: 1}
      limits: {cpu: "8", memory: 64Gi, nvidia.com/gpu: 1}
"""

INIT_JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: prep-train
  annotations: {kubegpu.io/duration: 1h}
spec:
  template:
    spec:
      restartPolicy: Never
      initContainers:
      - name: prepare
        image: busybox:1.36
        resources:
          requests: {cpu: "8", memory: 16Gi}
          limits: {cpu: "8", memory: 16Gi}
      containers:
      - name: train
        image: nvcr.io/nvidia/pytorch:25.01-py3
        resources:
          requests: {cpu: "8", memory: 16Gi, nvidia.com/gpu: 1}
          limits: {cpu: "8", memory: 16Gi, nvidia.com/gpu: 1}
"""

STATIC_KUBELET = """\
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cpuManagerPolicy: static
reservedSystemCPUs: "0-1"
topologyManagerPolicy: single-numa-node
"""


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    out = {}
    for name, text in (
        ("pod.yaml", GPU_POD),
        ("job.yaml", INIT_JOB),
        ("kubelet.yaml", STATIC_KUBELET),
        ("cluster.yaml", "nodes:\n  - {name: gpu12, cpu: 12, memory: 128Gi, gpus: 1, model: H100}\n"),
    ):
        (tmp_path / name).write_text(text, encoding="utf-8")
        out[name] = tmp_path / name
    return out


def test_empty_pod_level_resources_lint_and_admit_agree(files: dict[str, Path]) -> None:
    lint = runner.invoke(app, ["lint", str(files["pod.yaml"]), "--select", "KG101", "-o", "json"])
    findings = json.loads(lint.stdout)["findings"]
    assert [(f["rule"], f["path"]) for f in findings] == [("KG101", "spec.resources")]
    assert "BestEffort" in findings[0]["message"]
    admit = runner.invoke(
        app,
        [
            "admit",
            str(files["pod.yaml"]),
            "--node",
            "dgx-h100",
            "--kubelet-config",
            str(files["kubelet.yaml"]),
            "-o",
            "json",
        ],
    )
    row = json.loads(admit.stdout)[0]
    assert row["admitted"] and row["qos"] == "BestEffort"
    assert [c["exclusive_cpus"] for c in row["containers"]] == [[]]  # a BestEffort pod gets no pinned CPUs


def test_empty_pod_level_resources_webhook_agrees() -> None:
    body = {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "u",
            "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "operation": "CREATE",
            "namespace": "ml",
            "object": yaml.safe_load(GPU_POD),
        },
    }
    warnings = review(json.dumps(body), "validate", WebhookConfig()).response["response"].get("warnings", [])
    assert any("KG101" in w and "BestEffort" in w for w in warnings)


def test_init_container_is_a_maximum_in_the_simulator(files: dict[str, Path]) -> None:
    result = runner.invoke(
        app,
        [
            "simulate",
            "--nodes",
            str(files["cluster.yaml"]),
            "--pods",
            str(files["job.yaml"]),
            "--mode",
            "events",
            "--policy",
            "most-allocated",
            "-o",
            "json",
        ],
    )
    assert result.exit_code == 0, result.output
    text = result.stdout
    assert '"completed_pods": 1' in text and '"pending_pods": 0' in text
