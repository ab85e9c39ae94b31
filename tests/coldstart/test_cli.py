"""`kubegpu coldstart`: the arithmetic it shows, its sources of sizes and rates, and its exit codes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from kubegpu.cli.main import app
from kubegpu.loadbench.shards import write_synthetic

runner = CliRunner()
POD = """\
apiVersion: v1
kind: Pod
metadata: {name: llama}
spec:
  runtimeClassName: RUNTIME
  initContainers:
  - name: fetch
    image: busybox:1.36
    command: [sh, -c, "true"]
  containers:
  - name: vllm
    image: vllm/vllm-openai:v0.6.3
    args: [--model, /models/meta-llama/Llama-3.1-70B-Instruct]
    resources:
      limits: {nvidia.com/gpu: 4}
    startupProbe:
      httpGet: {path: /health, port: 8000}
      periodSeconds: 10
      failureThreshold: 30
"""


def _pod(tmp_path: Path, runtime: str = "nvidia") -> Path:
    path = tmp_path / "pod.yaml"
    path.write_text(POD.replace("RUNTIME", runtime))
    return path


def _json(*args: str) -> tuple[int, list[dict[str, Any]]]:
    result = runner.invoke(app, ["coldstart", *args, "-o", "json"])
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, json.loads(result.stdout)


def test_terms_add_up_and_the_probe_is_judged(tmp_path: Path) -> None:
    code, [report] = _json(str(_pod(tmp_path)), "--image-size", "vllm/vllm-openai:v0.6.3=9G", "--image-size", "5M")
    terms = {t["term"]: t for t in report["terms"]}
    assert terms["image pull"]["seconds"] == pytest.approx((9e9 + 5e6) / 0.05e9, abs=0.1)
    assert not terms["image pull"]["under_probe"]
    assert terms["weights load"]["seconds"] == pytest.approx(141.107412992 / 0.31, abs=0.1)
    assert report["seconds_to_ready"] == pytest.approx(sum(t["seconds"] for t in terms.values()), abs=0.2)
    assert report["seconds_under_probe"] == pytest.approx(455.2 + 20, abs=0.1)
    assert report["killed_by_probe"] is True and code == 1
    assert report["suggested_startup_probe"] == {"initialDelaySeconds": 0, "periodSeconds": 10, "failureThreshold": 72}


def test_a_lazy_runtime_class_pulls_a_fraction(tmp_path: Path) -> None:
    _, [report] = _json(str(_pod(tmp_path, "runc-nydus")), "--image-size", "10G")
    pull = next(t for t in report["terms"] if t["term"] == "image pull")
    assert pull["seconds"] == pytest.approx(2 * 10e9 * 0.064 / 0.05e9, abs=0.1)
    assert "Nydus, lazy" in pull["arithmetic"]


def test_loadbench_result_and_model_folder(tmp_path: Path) -> None:
    bench = tmp_path / "bench.json"
    bench.write_text(json.dumps({"best": {"method": "read", "threads": 16, "gbps": 2.5}}))
    model = tmp_path / "model"
    write_synthetic(model, 3 << 20)
    size = sum(p.stat().st_size for p in model.glob("*.safetensors"))
    code, [report] = _json(
        str(_pod(tmp_path)), "--loadbench", str(bench), "--model-dir", str(model), "--init-seconds", "0"
    )
    load = next(t for t in report["terms"] if t["term"] == "weights load")
    assert load["seconds"] == pytest.approx(size / 2.5e9, abs=0.01)
    assert "loadbench (bench.json: read ×16)" in load["source"]
    assert code == 0 and report["killed_by_probe"] is False


@pytest.mark.parametrize("size", ["100G", "100GB"])
def test_sizes_as_people_write_them(tmp_path: Path, size: str) -> None:
    result = runner.invoke(
        app, ["coldstart", str(_pod(tmp_path)), "--model-size", size, "--load-gbps", "1", "-o", "json"]
    )
    assert result.exit_code == 0, result.output
    assert "100.00 GB" in runner.invoke(app, ["coldstart", str(_pod(tmp_path)), "--model-size", size]).output


def test_text_shows_the_arithmetic(tmp_path: Path) -> None:
    result = runner.invoke(app, ["coldstart", str(_pod(tmp_path)), "--model-size", "100G", "--load-gbps", "1"])
    assert result.exit_code == 0, result.output
    assert "weights load" in result.output and "100.00 GB / 1 GB/s" in result.output
    assert "= 300 s: long enough" in result.output
    assert "image size unknown, pull not counted" in result.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--model-size", "lots"], "--model-size"),
        (["--model-size", "140"], "--model-size: '140' has no unit, which is ambiguous: write 140G or 140GB"),
        (["--image-size", "9"], "--image-size: '9' has no unit"),
        (["--load-gbps", "0"], "--load-gbps must be more than 0"),
        (["--load-gbps", "1", "--loadbench", "x.json"], "not both"),
        (["--loadbench", "/no/such.json"], "cannot read"),
        (["--oci-layout", "/no/such/layout"], "not an OCI image layout"),
    ],
)
def test_bad_options_exit_2(tmp_path: Path, args: list[str], message: str) -> None:
    result = runner.invoke(app, ["coldstart", str(_pod(tmp_path)), *args])
    assert result.exit_code == 2 and message in result.output, result.output


def test_bad_manifests_exit_2(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("kind: Pod\nspec: [\n")
    result = runner.invoke(app, ["coldstart", str(broken)])
    assert result.exit_code == 2 and "broken.yaml:" in result.output
    cpu = tmp_path / "cpu.yaml"
    cpu.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    result = runner.invoke(app, ["coldstart", str(cpu)])
    assert result.exit_code == 2 and "no GPU container" in result.output
    result = runner.invoke(app, ["coldstart", str(tmp_path / "missing.yaml")])
    assert result.exit_code == 2 and "missing.yaml: no such file or directory" in result.output  # as lint says it


def test_a_real_loadbench_result_feeds_the_prediction(tmp_path: Path) -> None:
    bench = runner.invoke(
        app,
        [
            "loadbench",
            "--synthetic",
            "3Mi",
            "--dir",
            str(tmp_path / "m"),
            "--threads",
            "2",
            "--methods",
            "read",
            "--no-warm",
            "--no-gpu",
            "-o",
            "json",
        ],
    )
    assert bench.exit_code == 0, bench.output
    (tmp_path / "bench.json").write_text(bench.stdout)
    best = json.loads(bench.stdout)["best"]["gbps"]
    _, [report] = _json(str(_pod(tmp_path)), "--loadbench", str(tmp_path / "bench.json"))
    load = next(t for t in report["terms"] if t["term"] == "weights load")
    assert load["seconds"] == pytest.approx(141.107412992 / best, rel=0.01)


UNKNOWN_MODEL = """\
apiVersion: v1
kind: Pod
metadata: {name: private}
spec:
  containers:
  - name: vllm
    image: vllm/vllm-openai:v0.6.3
    args: [--model, /models/acme/private-model]
    resources:
      limits: {nvidia.com/gpu: 1}
"""

KSERVE_MODEL = """\
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata: {name: llama}
spec:
  predictor:
    model:
      modelFormat: {name: huggingface}
      runtime: RUNTIME
      storageUri: hf://meta-llama/Llama-3.1-8B-Instruct
      resources:
        limits: {nvidia.com/gpu: 1}
"""

RUNTIME = """\
---
apiVersion: serving.kserve.io/v1alpha1
kind: ServingRuntime
metadata: {name: house-hf}
spec:
  supportedModelFormats: [{name: huggingface, autoSelect: true}]
  containers:
  - name: kserve-container
    image: registry.example.com/house/hf-server:1.4
"""


def test_an_unknown_model_size_makes_the_total_a_floor(tmp_path: Path) -> None:
    path = tmp_path / "pod.yaml"
    path.write_text(UNKNOWN_MODEL)
    text = runner.invoke(app, ["coldstart", str(path), "--image-size", "9G"]).output
    assert "seconds to ready                        200.0 s  (at least: weights download and load not counted)" in text
    (entry,) = json.loads(runner.invoke(app, ["coldstart", str(path), "-o", "json"]).output)
    assert entry["complete"] is False
    assert entry["not_counted"] == ["image pull", "weights download and load"]


def test_a_kserve_model_predictor_is_kserves_container_with_its_runtimes_image(tmp_path: Path) -> None:
    path = tmp_path / "isvc.yaml"
    path.write_text(KSERVE_MODEL.replace("      runtime: RUNTIME\n", ""))
    unsized = runner.invoke(app, ["coldstart", str(path)]).output
    assert "container 'kserve-container' (KServe)" in unsized
    assert "pull not counted: the image of kserve-huggingfaceserver (give --image-size)" in unsized
    sized = runner.invoke(app, ["coldstart", str(path), "--image-size", "9G", "-o", "json"])
    (entry,) = json.loads(sized.output)
    assert entry["container"] == "kserve-container" and entry["complete"] is True
    assert entry["terms"][0]["term"] == "image pull"


def test_a_runtime_in_the_input_names_the_image_sized(tmp_path: Path) -> None:
    path = tmp_path / "isvc.yaml"
    path.write_text(KSERVE_MODEL.replace("RUNTIME", "house-hf") + RUNTIME)
    result = runner.invoke(
        app, ["coldstart", str(path), "--image-size", "registry.example.com/house/hf-server:1.4=4G", "-o", "json"]
    )
    (entry,) = json.loads(result.output)
    pull = entry["terms"][0]
    assert pull["term"] == "image pull" and pull["seconds"] == pytest.approx(80.0)
