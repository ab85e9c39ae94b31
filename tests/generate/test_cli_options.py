"""One check per `kubegpu gen` option: the value given shows up where it belongs in the output."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from kubegpu.cli.main import app

DATA = Path(__file__).parent / "data"
JOB = str(DATA / "train-job.yaml")
INF = str(DATA / "inference.yaml")
KUEUE = ["kueue", "--gpus-per-node", "8", "--nodes", "2", "--cpus-per-node", "100",
         "--memory-per-node", "1Ti"]  # fmt: skip


def docs(*args: str) -> list[dict[str, Any]]:
    result = CliRunner().invoke(app, ["gen", *args])
    assert result.exit_code == 0, result.stderr
    return [d for d in yaml.safe_load_all(result.stdout) if d is not None]


def kind(found: list[dict[str, Any]], name: str) -> dict[str, Any]:
    return next(d for d in found if isinstance(d, dict) and d.get("kind") == name)


def patch_ops(found: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [op for d in found if isinstance(d, list) for op in d]


def fit(d: list[dict[str, Any]]) -> dict[str, Any]:
    return d[0]["profiles"][1]["pluginConfig"][0]["args"]["scoringStrategy"]


CASES: list[tuple[list[str], Callable[[list[Any]], bool]]] = [
    (["scheduler", "--cpu-weight", "3"], lambda d: fit(d)["resources"][1]["weight"] == 3),
    (["scheduler", "--memory-weight", "4"], lambda d: fit(d)["resources"][2]["weight"] == 4),
    (
        ["scheduler", "--scheduler-name", "packer"],
        lambda d: d[0]["profiles"][1]["schedulerName"] == "packer",
    ),
    (
        ["scheduler", "--gpu-resource", "amd.com/gpu"],
        lambda d: fit(d)["resources"][0]["name"] == "amd.com/gpu",
    ),
    (
        ["scheduler", "--configmap", "--namespace", "sched"],
        lambda d: d[0]["metadata"]["namespace"] == "sched",
    ),
    (
        [*KUEUE, "--flavor", "h100"],
        lambda d: kind(d, "ResourceFlavor")["metadata"]["name"] == "h100",
    ),
    (
        [*KUEUE, "--cluster-queue", "cq"],
        lambda d: kind(d, "LocalQueue")["spec"]["clusterQueue"] == "cq",
    ),
    (
        [*KUEUE, "--local-queue", "lq", "--namespace", "team"],
        lambda d: kind(d, "LocalQueue")["metadata"] == {"name": "lq", "namespace": "team"},
    ),
    (
        [*KUEUE, "--gpu-resource", "amd.com/gpu"],
        lambda d: "amd.com/gpu" in kind(d, "ClusterQueue")["spec"]["resourceGroups"][0]["coveredResources"],
    ),
    (
        [*KUEUE, "--gpu-taint", "dedicated"],
        lambda d: kind(d, "ResourceFlavor")["spec"]["tolerations"][0]["key"] == "dedicated",
    ),
    (
        ["volcano", "--queue", "research"],
        lambda d: kind(d, "Queue")["metadata"]["name"] == "research",
    ),
    (
        ["volcano", "--binpack-weight", "7", "--gpu-weight", "9"],
        lambda d: (
            "binpack.weight: 7" in kind(d, "ConfigMap")["data"]["volcano-scheduler.conf"]
            and "binpack.resources.nvidia.com/gpu: 9" in kind(d, "ConfigMap")["data"]["volcano-scheduler.conf"]
        ),
    ),
    (
        ["volcano", "--for", str(DATA / "mixed.yaml"), "--name", "finetune"],
        lambda d: kind(d, "PodGroup")["metadata"]["name"] == "finetune-pg",
    ),
    (
        ["kai", "--gpus", "8", "--queue", "nlp", "--parent", "org"],
        lambda d: [q["metadata"]["name"] for q in d if q.get("kind") == "Queue"] == ["org", "nlp"],
    ),
    (
        ["kai", "--gpus", "8", "--strategy", "spread"],
        lambda d: kind(d, "SchedulingShard")["spec"]["placementStrategy"]["gpu"] == "spread",
    ),
    (
        ["computedomain", "--for", JOB, "--domain-name", "rack-a"],
        lambda d: kind(d, "ComputeDomain")["metadata"]["name"] == "rack-a",
    ),
    (
        ["prepull", "--from", JOB, "--name", "warm", "--namespace", "infra"],
        lambda d: d[0]["metadata"]["name"] == "warm" and d[0]["metadata"]["namespace"] == "infra",
    ),
    (
        ["prepull", "--from", JOB, "--noop", "/bin/true"],
        lambda d: d[0]["spec"]["template"]["spec"]["initContainers"][0]["command"] == ["/bin/true"],
    ),
    (
        ["prepull", "--from", JOB, "--gpu-node-label", "gpu=yes"],
        lambda d: "gpu" in str(d[0]["spec"]["template"]["spec"]["affinity"]),
    ),
    (
        [
            "model-cache",
            "--model",
            "m",
            "--source",
            "hf://a/b",
            "--size",
            "1Gi",
            "--namespace",
            "serving",
        ],
        lambda d: d[0]["metadata"]["namespace"] == "serving",
    ),
    (
        [
            "model-cache",
            "--model",
            "m",
            "--source",
            "hf://a/b",
            "--size",
            "1Gi",
            "--hf-token-secret",
            "hf",
        ],
        lambda d: "HF_TOKEN" in str(d[0]),
    ),
    (
        [
            "model-cache",
            "--model",
            "m",
            "--source",
            "hf://a/b",
            "--size",
            "1Gi",
            "--for",
            INF,
            "--mount-path",
            "/weights",
        ],
        lambda d: any(op.get("value", {}) and "/weights" in str(op["value"]) for op in patch_ops(d)),
    ),
    (
        ["fixes", "--for", INF, "--only", "scheduler", "--scheduler-name", "packer"],
        lambda d: patch_ops(d)[0]["value"] == "packer",
    ),
    (
        ["fixes", "--for", INF, "--only", "dshm", "--size", "3Gi"],
        lambda d: patch_ops(d)[0]["value"][0]["emptyDir"]["sizeLimit"] == "3Gi",
    ),
    (
        [
            "kubelet",
            "--node",
            "dgx-h100",
            "--kube-reserved-memory",
            "3Gi",
            "--system-reserved-memory",
            "1Gi",
        ],
        lambda d: d[0]["reservedMemory"][0]["limits"]["memory"] == "4196Mi",
    ),
    (
        ["kubelet", "--node", "dgx-h100", "--reserve-cores", "4"],
        lambda d: d[0]["reservedSystemCPUs"] == "0-3,112-115",
    ),
    (["lazy-pull", "--snapshotter", "stargz", "--containerd", "1"], lambda d: True),
    (
        [
            "mirror",
            "--mirror",
            "https://m",
            "--public",
            "--skip-upstream",
            "--ca",
            "/ca.pem",
            "--dial-timeout",
            "1s",
            "--registry",
            "quay.io",
        ],
        lambda d: True,
    ),
]


@pytest.mark.parametrize(("args", "check"), CASES, ids=[" ".join(a[:3]) + " " + a[-2] for a, _ in CASES])
def test_option(args: list[str], check: Callable[[list[Any]], bool]) -> None:
    if args[0] in ("lazy-pull", "mirror"):  # TOML: checked in test_runtime_gen; here: runs, exit 0
        result = CliRunner().invoke(app, ["gen", *args])
        assert result.exit_code == 0, result.stderr
        if args[0] == "mirror":
            assert 'capabilities = ["pull"]' in result.stdout and 'dial_timeout = "1s"' in result.stdout
        else:
            assert '[plugins."io.containerd.grpc.v1.cri".containerd]' in result.stdout
        return
    assert check(docs(*args))
