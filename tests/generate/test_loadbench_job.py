"""`gen loadbench-job`: a valid, lint-clean Job pinned to a node that loads the cache read-only."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from kubegpu.cli.main import app
from kubegpu.errors import InputError
from kubegpu.generate.loadbench_job import DEFAULT_IMAGE, HOSTNAME_LABEL, LoadbenchJobOptions, generate
from kubegpu.generate.output import render_documents
from kubegpu.generate.validate import validate_object
from kubegpu.lint import lint_text

CASES: dict[str, LoadbenchJobOptions] = {
    "pvc-node": LoadbenchJobOptions(pvc="llama-weights", node="gpu-7"),
    "hostpath-selector-gpu": LoadbenchJobOptions(
        host_path="/var/lib/kubegpu/models",
        gpus=1,
        node_selector=(("nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"),),
        model_path="Llama-3.1-8B",
        mount_path="/cache",
    ),
}


def _job(options: LoadbenchJobOptions) -> dict[str, Any]:
    [obj] = generate(options).objects()
    return dict(obj)


@pytest.mark.parametrize("name", sorted(CASES))
def test_job_validates_and_lints_clean(name: str) -> None:
    result = generate(CASES[name])
    for obj in result.objects():
        validate_object(obj)
    text = render_documents(list(result.documents))
    assert {f.code for f in lint_text(f"{name}.yaml", text).findings} == set()


def test_pinned_read_only_and_runs_loadbench_json() -> None:
    job = _job(CASES["pvc-node"])
    pod = job["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {HOSTNAME_LABEL: "gpu-7"} and "nodeName" not in pod
    [container] = pod["containers"]
    assert container["image"] == DEFAULT_IMAGE
    assert container["volumeMounts"] == [{"name": "model-cache", "mountPath": "/models", "readOnly": True}]
    assert pod["volumes"] == [
        {"name": "model-cache", "persistentVolumeClaim": {"claimName": "llama-weights", "readOnly": True}}
    ]
    assert container["command"][:5] == ["kubegpu", "loadbench", "/models", "--output", "json"]
    assert "--no-gpu" in container["command"]
    assert container["resources"]["requests"] == container["resources"]["limits"]


def test_host_path_model_folder_and_gpu_stage() -> None:
    job = _job(CASES["hostpath-selector-gpu"])
    pod = job["spec"]["template"]["spec"]
    [container] = pod["containers"]
    assert container["command"][2] == "/cache/Llama-3.1-8B" and "--no-gpu" not in container["command"]
    assert container["resources"]["limits"]["nvidia.com/gpu"] == "1"
    assert pod["volumes"][0]["hostPath"] == {"path": "/var/lib/kubegpu/models", "type": "Directory"}
    assert pod["nodeSelector"] == {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}


def test_the_command_in_the_job_parses() -> None:
    """`kubegpu loadbench` accepts the Job's arguments: it gets past option parsing to the missing folder."""
    job = _job(CASES["pvc-node"])
    command = job["spec"]["template"]["spec"]["containers"][0]["command"]
    result = CliRunner().invoke(app, [*command[1:2], "/no/such/models", *command[3:]])
    assert result.exit_code == 2 and "no such file or folder" in result.output  # past option parsing


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (LoadbenchJobOptions(node="n"), "exactly one of --pvc"),
        (LoadbenchJobOptions(pvc="a", host_path="/b", node="n"), "exactly one of --pvc"),
        (LoadbenchJobOptions(pvc="a"), "pin the Job"),
        (LoadbenchJobOptions(host_path="relative", node="n"), "absolute"),
        (LoadbenchJobOptions(pvc="Bad_Name", node="n"), "claim name"),
        (LoadbenchJobOptions(pvc="a", node_selector=(("bad key!", "v"),)), "label key"),
        (LoadbenchJobOptions(pvc="a", node="n", model_path="../etc"), "relative to the mount"),
        (LoadbenchJobOptions(pvc="a", node="n", threads="4,0"), "--threads"),
        (LoadbenchJobOptions(pvc="a", node="n", cpus="many"), "--cpus"),
        (LoadbenchJobOptions(pvc="a", node="n", image="has space"), "--image"),
        (LoadbenchJobOptions(pvc="a", node="n", budget_seconds=1), "--budget-seconds"),
    ],
)
def test_bad_options(options: LoadbenchJobOptions, message: str) -> None:
    with pytest.raises(InputError, match=message):
        generate(options)


def test_cli_prints_valid_yaml_and_errors_in_one_line() -> None:
    result = CliRunner().invoke(
        app,
        ["gen", "loadbench-job", "--pvc", "w", "--node", "n1", "--validate", "--image", "registry.example/kubegpu:1.2"],
    )
    assert result.exit_code == 0, result.output
    [doc] = [d for d in yaml.safe_load_all(result.stdout) if d]
    assert doc["spec"]["template"]["spec"]["containers"][0]["image"] == "registry.example/kubegpu:1.2"
    bad = CliRunner().invoke(app, ["gen", "loadbench-job", "--pvc", "w", "--node-selector", "novalue"])
    assert bad.exit_code == 2 and "KEY=VALUE" in bad.output
