"""Every workload kubegpu generates meets the restricted Pod Security Standard where its job allows: this test
says, workload by workload, which checks it fails and why it must (a hostPath the probe reads, a folder only
root may write). The checker (pss.py) is first run on upstream's own v1.35 pass and fail fixtures."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from kubegpu.cli.main import app
from kubegpu.generate.validate import validate_object
from tests.security.pss import BASELINE, CHECKS, OVERRIDES, RESTRICTED, violations

DATA = Path(__file__).parent / "data"
GENERATE_DATA = Path(__file__).parent.parent / "generate" / "data"
CHART = Path(__file__).resolve().parents[2] / "charts" / "kubegpu-webhook"
FIXTURES = json.loads((DATA / "pss-v1.35.json").read_text())


# ------------------------------------------------------------------------------------- the checker, on upstream's


def _merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch."""
    if not isinstance(patch, dict):
        return patch
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = _merge_patch(out.get(key), value)
    return out


def _fixtures() -> Iterator[Any]:
    for level, body in FIXTURES["levels"].items():
        yield pytest.param(level, "base", "pass", body["base"], id=f"{level}-base")
        for case in body["cases"]:
            pod = _merge_patch(body["base"], case["patch"])
            yield pytest.param(level, case["name"], case["expect"], pod, id=f"{level}-{case['expect']}-{case['name']}")


_ID_BY_NAME = {check.lower(): check for check in CHECKS}


@pytest.mark.parametrize(("level", "name", "expect", "pod"), list(_fixtures()))
def test_the_checker_agrees_with_upstream_fixtures(level: str, name: str, expect: str, pod: dict[str, Any]) -> None:
    found = violations(pod["spec"], pod.get("metadata") or {}, level)
    if expect == "pass":
        assert found == {}
        return
    check = _ID_BY_NAME[re.sub(r"\d+$", "", name)]
    if level == RESTRICTED:  # a baseline check the restricted profile replaces reports under its replacement
        check = next((strict for strict, loose in OVERRIDES.items() if loose == check), check)
    assert check in found, found


def test_every_upstream_check_has_fixtures() -> None:
    names = {
        re.sub(r"\d+$", "", c["name"])
        for body in FIXTURES["levels"].values()
        for c in body["cases"]
        if c["expect"] == "fail"
    }
    assert {_ID_BY_NAME[n] for n in names} == set(CHECKS)


# -------------------------------------------------------------------------------------- what kubegpu generates

HOST_PATH_PROBE = "the node's /sys, read-only (recursively where the runtime can): the probe reads the CPUs, NUMA"
HOST_PATH_CACHE = "the model cache on the node's disk: the point of a node-local cache"
ROOT_STAGER = "the stager writes a folder that is root's (a hostPath the kubelet creates, or a new claim)"

# Workload -> (how it is generated, {check it fails: why}). Everything not listed meets the profile.
WORKLOADS: Mapping[str, tuple[tuple[str, ...], Mapping[str, str]]] = {
    "gen prepull": (("prepull", "--from", str(GENERATE_DATA / "train-job.yaml")), {}),
    "gen probe-daemonset": (
        ("probe-daemonset", "--image", "registry.example.com/kubegpu:1"),
        {"hostPathVolumes": HOST_PATH_PROBE, "restrictedVolumes": HOST_PATH_PROBE},
    ),
    "gen probe-job": (("probe-job", "--image", "registry.example.com/kubegpu:1"), {}),
    "gen loadbench-job --pvc": (("loadbench-job", "--pvc", "models", "--node", "gpu-1", "--gpus", "1"), {}),
    "gen loadbench-job --host-path": (
        ("loadbench-job", "--host-path", "/var/lib/kubegpu/models", "--node", "gpu-1"),
        {"hostPathVolumes": HOST_PATH_CACHE, "restrictedVolumes": HOST_PATH_CACHE},
    ),
    "gen model-cache (node-local)": (
        ("model-cache", "--model", "m", "--source", "hf://org/m", "--size", "5Gi"),
        {"hostPathVolumes": HOST_PATH_CACHE, "restrictedVolumes": HOST_PATH_CACHE, "runAsNonRoot": ROOT_STAGER},
    ),
    "gen model-cache --mode shared": (
        ("model-cache", "--model", "m", "--source", "s3://bucket-a/m", "--size", "5Gi", "--mode", "shared"),
        {"runAsNonRoot": ROOT_STAGER},
    ),
    "gen audit-rbac --job": (("audit-rbac", "--job"), {}),
    "gen webhook": (("webhook", "--image", "registry.example.com/kubegpu:1"), {}),
}


WORKLOAD_KINDS = ("Deployment", "DaemonSet", "StatefulSet", "Job")


def _documents(args: tuple[str, ...]) -> list[Any]:
    result = CliRunner().invoke(app, ["gen", *args])
    assert result.exit_code == 0, result.output
    return [doc for doc in yaml.safe_load_all(result.stdout) if doc is not None]


def _generated(args: tuple[str, ...]) -> list[dict[str, Any]]:
    """The objects `kubegpu gen ARGS` prints (a bundle's JSON6902 patches left out)."""
    return [doc for doc in _documents(args) if isinstance(doc, dict)]


def _pods(objects: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """(Kind/name, pod metadata, pod spec) of each workload among `objects`."""
    return [
        (
            f"{obj['kind']}/{obj['metadata']['name']}",
            obj["spec"]["template"].get("metadata") or {},
            obj["spec"]["template"]["spec"],
        )
        for obj in objects
        if obj.get("kind") in WORKLOAD_KINDS
    ]


def _expected(needs: Mapping[str, str], level: str) -> set[str]:
    if level == BASELINE:
        return {check for check in needs if CHECKS[check][0] == BASELINE}
    return {check for check in needs if check not in OVERRIDES.values()}


@pytest.mark.parametrize("workload", list(WORKLOADS))
def test_generated_workloads_meet_the_restricted_profile_but_for_what_their_job_needs(workload: str) -> None:
    args, needs = WORKLOADS[workload]
    objects = _generated(args)
    pods = _pods(objects)
    assert pods, f"{workload} generated no workload"
    for obj in objects:
        if obj.get("kind") in WORKLOAD_KINDS:
            validate_object(obj)  # the new fields are real: Kubernetes 1.35's schemas
    for level in (BASELINE, RESTRICTED):
        found = {check for _, metadata, spec in pods for check in violations(spec, metadata, level)}
        assert found == _expected(needs, level), (workload, level, [violations(s, m, level) for _, m, s in pods])


def test_the_container_model_cache_adds_to_an_inference_pod_is_restricted_on_its_own() -> None:
    """`gen model-cache --for` adds an init container to the user's pod: whatever that pod is, the container
    meets the restricted profile by its own securityContext (the pod's own settings are the user's)."""
    documents = _documents(
        (
            "model-cache",
            "--model",
            "m",
            "--source",
            "hf://org/m",
            "--size",
            "5Gi",
            "--for",
            str(GENERATE_DATA / "inference.yaml"),
        )
    )
    operations = [op for doc in documents if isinstance(doc, list) for op in doc]
    added = [
        item
        for op in operations
        if isinstance(op.get("value"), list)
        for item in op["value"]
        if isinstance(item, dict) and item.get("name") == "wait-for-weights"
    ]
    assert added
    assert violations({"containers": added}, {}, RESTRICTED) == {}
    mounts = [m for c in added for m in c["volumeMounts"]]
    assert all(m["readOnly"] is True and m["recursiveReadOnly"] == "IfPossible" for m in mounts)


def test_read_only_host_mounts_are_recursively_read_only() -> None:
    """Every read-only mount of a hostPath volume in what kubegpu generates asks for a recursively read-only
    mount (VolumeMount.recursiveReadOnly, v1.30+): which needs readOnly: true and no mount propagation."""
    seen = 0
    for args, _ in WORKLOADS.values():
        for _, _, spec in _pods(_generated(args)):
            host = {v["name"] for v in spec.get("volumes") or () if "hostPath" in v}
            for container in [*(spec.get("initContainers") or ()), *spec["containers"]]:
                for mount in container.get("volumeMounts") or ():
                    if mount["name"] in host and mount.get("readOnly"):
                        seen += 1
                        assert mount.get("recursiveReadOnly") == "IfPossible", (args, mount)
                        assert mount.get("mountPropagation") in (None, "None")
    assert seen >= 2


@pytest.mark.skipif(shutil.which("helm") is None, reason="helm is not installed")
def test_the_webhook_chart_meets_the_restricted_profile() -> None:
    done = subprocess.run(
        ["helm", "template", "kubegpu-webhook", str(CHART), "--namespace", "kubegpu-system"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    pods = _pods([doc for doc in yaml.safe_load_all(done.stdout) if isinstance(doc, dict)])
    assert [name for name, _, _ in pods] == ["Deployment/kubegpu-webhook"]
    for _, metadata, spec in pods:
        assert violations(spec, metadata, RESTRICTED) == {}
