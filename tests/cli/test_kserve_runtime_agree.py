"""A KServe `model:` predictor's container is its ServingRuntime's container with the predictor's fields merged
over it. When the runtime is in the input, lint, admit, gen, simulate's reader and the Python API all read the
same merged pod: the runtime is bound to the predictor when the input is expanded (workloads.expand)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from kubegpu.cli.main import app

runner = CliRunner()

RUNTIME = """\
apiVersion: serving.kserve.io/v1alpha1
kind: ServingRuntime
metadata: {name: vllm-large, namespace: llm}
spec:
  supportedModelFormats:
  - {name: vllm, autoSelect: true}
  containers:
  - name: kserve-container
    image: vllm/vllm-openai:v0.8.5
    resources:
      requests: {cpu: "16", memory: 64Gi}
      limits: {cpu: "CPU_LIMIT", memory: 64Gi}
    volumeMounts:
    - {name: dshm, mountPath: /dev/shm}
  volumes:
  - name: dshm
    emptyDir: {medium: Memory, sizeLimit: 8Gi}
"""

ISVC = """\
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata: {name: llama, namespace: llm}
spec:
  predictor:
    model:
      runtime: vllm-large
      modelFormat: {name: vllm}
      storageUri: pvc://models/llama-3-8b
      resources:
        limits: {nvidia.com/gpu: 1}
"""

KUBELET = """\
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cpuManagerPolicy: static
reservedSystemCPUs: "0-1"
topologyManagerPolicy: single-numa-node
"""


def _write(tmp_path: Path, cpu_limit: str) -> tuple[Path, Path]:
    manifest = tmp_path / "isvc.yaml"
    manifest.write_text(f"{RUNTIME.replace('CPU_LIMIT', cpu_limit)}---\n{ISVC}", encoding="utf-8")
    kubelet = tmp_path / "kubelet.yaml"
    kubelet.write_text(KUBELET, encoding="utf-8")
    return manifest, kubelet


def _lint(path: Path) -> Any:
    result = runner.invoke(app, ["lint", str(path), "--select", "KG101", "-o", "json"])
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)


def _admit(path: Path, kubelet: Path) -> dict[str, Any]:
    result = runner.invoke(
        app, ["admit", str(path), "--node", "dgx-h100", "--kubelet-config", str(kubelet), "-o", "json"]
    )
    assert result.exit_code in (0, 1), result.output
    rows = {r["pod"]: r for r in json.loads(result.stdout)}
    return dict(rows["llama-predictor"])


def test_a_runtime_in_the_input_decides_the_pod_for_lint_and_admit(tmp_path: Path) -> None:
    manifest, kubelet = _write(tmp_path, "16")
    assert _lint(manifest)["findings"] == []  # Guaranteed: the runtime's 16 CPUs and 64Gi, requests = limits
    row = _admit(manifest, kubelet)
    assert row["pod"] == "llama-predictor" and row["qos"] == "Guaranteed"
    (container,) = row["containers"]
    assert container["name"] == "kserve-container"  # the name KServe gives the predictor's container
    assert len(container["exclusive_cpus"]) == 16  # the runtime's CPUs, pinned
    assert sum(len(ids) for ids in container["devices"].values()) == 1  # the predictor's GPU


def test_a_burstable_runtime_is_burstable_for_lint_and_admit(tmp_path: Path) -> None:
    manifest, kubelet = _write(tmp_path, "32")
    findings = _lint(manifest)["findings"]
    assert [f["rule"] for f in findings] == ["KG101"]
    assert "ServingRuntime 'vllm-large'" in findings[0]["message"]
    row = _admit(manifest, kubelet)
    assert row["qos"] == "Burstable" and row["containers"][0]["exclusive_cpus"] == []


def test_gen_and_the_python_api_read_the_same_pod(tmp_path: Path) -> None:
    from kubegpu import api
    from kubegpu.generate.workload import load_workloads

    manifest, _ = _write(tmp_path, "16")
    text = manifest.read_text(encoding="utf-8")
    results = api.admit(text, "dgx-h100", {"cpuManagerPolicy": "static", "reservedSystemCPUs": "0-1"})
    # the predictor only, as the admit command: the runtime it uses makes no pods of its own
    assert {r.pod: r.qos for r in results} == {"llama-predictor": "Guaranteed"}
    workloads = {w.name: w for w in load_workloads([str(manifest)])}
    (ref,) = workloads["llama"].templates
    (container,) = workloads["llama"].pod_spec(ref)["containers"]
    assert container["resources"]["requests"] == {"cpu": "16", "memory": "64Gi"}
    assert container["resources"]["limits"] == {"nvidia.com/gpu": 1, "cpu": "16", "memory": "64Gi"}


@pytest.mark.parametrize("namespace", ["other", None])
def test_a_runtime_of_another_namespace_is_not_the_predictors(tmp_path: Path, namespace: str | None) -> None:
    manifest, kubelet = _write(tmp_path, "16")
    moved = RUNTIME.replace("namespace: llm", f"namespace: {namespace}" if namespace else "").replace(", }", "}")
    manifest.write_text(f"{moved.replace('CPU_LIMIT', '16')}---\n{ISVC}", encoding="utf-8")
    # the runtime KServe would use is not in the input: neither command pins 16 CPUs for it
    row = _admit(manifest, kubelet)
    assert row["qos"] != "Guaranteed" and row["containers"][0]["exclusive_cpus"] == []
    assert all("ServingRuntime 'vllm-large' (not in the input)" in f["message"] for f in _lint(manifest)["findings"])


def test_admit_admits_the_predictor_not_the_runtime_it_uses(tmp_path: Path) -> None:
    manifest, kubelet = _write(tmp_path, "16")
    result = runner.invoke(app, ["admit", str(manifest), "--node", "dgx-h100", "--kubelet-config", str(kubelet)])
    assert result.exit_code == 0, result.output
    pods = [line for line in result.stdout.splitlines() if line.startswith("pod ")]
    assert pods == ["pod llama-predictor: admitted (Guaranteed)"]
    notice = "ServingRuntime/vllm-large: a runtime, admitted as the pods of InferenceService/llama that uses it"
    assert notice in result.stderr
    alone = tmp_path / "runtime.yaml"  # given alone, the runtime is admitted as the pod a predictor would get
    alone.write_text(RUNTIME.replace("CPU_LIMIT", "16"), encoding="utf-8")
    result = runner.invoke(app, ["admit", str(alone), "--node", "dgx-h100", "--kubelet-config", str(kubelet)])
    assert "pod vllm-large: admitted (Guaranteed)" in result.stdout.splitlines()
