"""`kubegpu gen fixes` and `kubegpu fix --unsafe-fixes` give one answer.

For the fixtures under tests/ and examples/ and for derandomized workloads, the bundle `gen fixes` writes is
applied the way kustomize applies a JSON6902 patch (jsonpatch on the manifest's object; `kubectl kustomize`
also when present), `kubegpu fix --unsafe-fixes` is run on the same file, and the two results must give every
pod template the same /dev/shm size, the same container resources and the same QoS class by the one pod model.
A patched workload that was valid stays valid against the Kubernetes OpenAPI schema.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jsonpatch
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import kubegpu.manifests.pod as podmodel
from kubegpu.cli.main import app
from kubegpu.errors import InputError
from kubegpu.generate import fixes, workload
from kubegpu.generate.output import write_generated
from kubegpu.generate.validate import SchemaViolation, validate_object, validate_workload
from kubegpu.manifests import load_text
from kubegpu.manifests.objects import read_objects
from kubegpu.manifests.resources import template_pod
from kubegpu.units import parse_quantity
from kubegpu.workloads import pod_templates

ROOT = Path(__file__).resolve().parents[2]
DEFAULT = ["dshm", "qos", "pull-policy"]
FIXTURES = sorted(
    [
        *(ROOT / "tests" / "generate" / "data").glob("*.yaml"),
        *(ROOT / "examples").glob("*.yaml"),
        *(ROOT / "tests" / "fix" / "fixtures").rglob("*.yaml"),
    ]
)


def _shm(template: Any) -> tuple[int | str | None, ...]:
    """Per container, the size of the memory-backed emptyDir at /dev/shm (bytes; 'unsized'), or None."""
    volumes = {v.get("name"): v for v in template.spec.get("volumes") or () if isinstance(v, Mapping)}
    out: list[int | str | None] = []
    for container in template.containers:
        mounts = [m for m in container.data.get("volumeMounts") or () if isinstance(m, Mapping)]
        name = next((m.get("name") for m in mounts if m.get("mountPath") == "/dev/shm"), None)
        empty_dir = (volumes.get(name) or {}).get("emptyDir")
        if not isinstance(empty_dir, Mapping) or empty_dir.get("medium") != "Memory":
            out.append(None)
        elif empty_dir.get("sizeLimit") is None:
            out.append("unsized")
        else:
            out.append(parse_quantity(empty_dir["sizeLimit"]).ceil)
    return tuple(out)


def _facts(obj: Mapping[str, Any]) -> list[tuple[Any, ...]]:
    """What both commands must agree on, per pod template: /dev/shm, resources of every container, QoS."""
    docs = load_text("o.json", json.dumps(obj)).documents
    facts = []
    for template in pod_templates(docs[0]):
        resources = tuple(json.dumps(c.data.get("resources"), sort_keys=True) for c in template.containers)
        facts.append((template.path, _shm(template), resources, podmodel.qos_class(template_pod(template))))
    return facts


def _gen_applied(item: workload.Workload, out: Path) -> Mapping[str, Any]:
    """The workload after the bundle `gen fixes` writes, applied as kustomize applies its JSON6902 patch."""
    try:
        result = fixes.generate(item, DEFAULT, fixes.FixOptions(), out)
    except InputError:
        return item.obj  # nothing to fix: no bundle
    write_generated(result.generated, out)
    kustomization = yaml.safe_load((out / "kustomization.yaml").read_text())
    ops = yaml.safe_load((out / kustomization["patches"][0]["path"]).read_text())
    patched: Mapping[str, Any] = jsonpatch.apply_patch(dict(item.obj), ops)
    assert patched == result.patched
    for obj in result.generated.objects():  # the Kustomization
        validate_object(obj)
    try:
        validate_workload(item.obj)
    except SchemaViolation:
        return patched  # an invalid input (a bad quantity) stays invalid
    validate_workload(patched)  # a valid workload stays valid: the Kubernetes OpenAPI schema (or its CRD's)
    return patched


def _fixed_objects(path: Path, tmp: Path) -> list[Mapping[str, Any]]:
    """The objects of `path` after `kubegpu fix --unsafe-fixes` (run on a copy)."""
    copy = tmp / path.name
    copy.write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    result = CliRunner().invoke(app, ["fix", "--unsafe-fixes", "--exit-zero", str(copy)])
    assert result.exit_code == 0, result.output
    return [d.data for d in read_objects(str(copy))]


def _check_file(path: Path, tmp: Path) -> int:
    """Compare both commands on every workload of `path`; how many workloads were compared."""
    items = workload.load_workloads([str(path)])
    fixed = {(o.get("kind"), (o.get("metadata") or {}).get("name")): o for o in _fixed_objects(path, tmp)}
    for n, item in enumerate(items):
        out = tmp / f"bundle{n}"
        out.mkdir()
        by_gen = _gen_applied(item, out)
        by_fix = fixed[(item.kind, item.name or None)]
        assert _facts(by_gen) == _facts(by_fix), f"{path.name}: {item.kind}/{item.name}"
    return len(items)


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: str(p.relative_to(ROOT)))
def test_fixtures_give_one_answer(path: Path, tmp_path: Path) -> None:
    try:
        items = workload.load_workloads([str(path)])
    except InputError:
        pytest.skip("not a manifest kubegpu reads (a broken-input fixture)")
    if not items or len({(w.kind, w.name) for w in items}) < len(items):
        pytest.skip("no workload, or two workloads of one kind and name (cannot be paired)")
    assert _check_file(path, tmp_path) == len(items)


def test_the_fixtures_cover_fixed_workloads() -> None:
    """The fixture comparison is not vacuous: some of them get a /dev/shm and a QoS fix from both commands."""
    fixed = 0
    for path in FIXTURES:
        try:
            items = workload.load_workloads([str(path)])
        except InputError:
            continue
        for item in items:
            try:
                fixes.generate(item, DEFAULT, fixes.FixOptions())
                fixed += 1
            except InputError:
                pass
    assert fixed >= 5


_CPU = st.sampled_from([None, "250m", "500m", "1", "3", "3500m", "8", "bad"])
_MEMORY = st.sampled_from([None, "64Mi", "100Mi", "129Mi", "130Mi", "256Mi", "1Gi", "3Gi", "64Gi", "100G"])


@st.composite
def _resources(draw: Any, gpus: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for section in ("requests", "limits"):
        values = {k: v for k, v in (("cpu", draw(_CPU)), ("memory", draw(_MEMORY))) if v is not None}
        if gpus:
            values["nvidia.com/gpu"] = gpus
        if values:
            out[section] = values
    return out


@st.composite
def _workloads(draw: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    volumes: list[dict[str, Any]] = []
    shm = draw(st.sampled_from(["none", "disk", "memory", "memory-sized", "memory-small", "host"]))
    volume = {
        "none": None,
        "disk": {"name": "shm", "emptyDir": {}},
        "memory": {"name": "shm", "emptyDir": {"medium": "Memory"}},
        "memory-sized": {"name": "shm", "emptyDir": {"medium": "Memory", "sizeLimit": "2Gi"}},
        "memory-small": {"name": "shm", "emptyDir": {"medium": "Memory", "sizeLimit": "32Mi"}},
        "host": {"name": "shm", "hostPath": {"path": "/dev/shm"}},
    }[shm]
    if volume is not None:
        volumes.append(volume)
    init = []
    for i in range(draw(st.integers(0, 1))):
        container: dict[str, Any] = {"name": f"init{i}", "image": "busybox:1.36"}
        if draw(st.booleans()):
            container["restartPolicy"] = "Always"
        if draw(st.booleans()):
            container["resources"] = draw(_resources(0))
        init.append(container)
    if init:
        spec["initContainers"] = init
    containers = []
    for i in range(draw(st.integers(1, 3))):
        gpus = draw(st.sampled_from([0, 1, 2, 8])) if i else draw(st.sampled_from([1, 2, 8]))
        container = {
            "name": f"c{i}",
            "image": draw(st.sampled_from(["nvcr.io/nvidia/pytorch:24.05-py3", "vllm/vllm-openai:latest"])),
            "resources": draw(_resources(gpus)),
        }
        policy = draw(st.sampled_from([None, "Always", "IfNotPresent"]))
        if policy:
            container["imagePullPolicy"] = policy
        if volume is not None and draw(st.booleans()):
            container["volumeMounts"] = [{"name": "shm", "mountPath": "/dev/shm"}]
        containers.append(container)
    spec["containers"] = containers
    if volumes:
        spec["volumes"] = volumes
    kind = draw(st.sampled_from(["Pod", "Deployment", "Job"]))
    if kind == "Pod":
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "w"}, "spec": spec}
    template = {"metadata": {"labels": {"app": "w"}}, "spec": spec}
    if kind == "Job":
        spec["restartPolicy"] = "Never"
        return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "w"}, "spec": {"template": template}}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "w"},
        "spec": {"selector": {"matchLabels": {"app": "w"}}, "template": template},
    }


@settings(max_examples=100, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(obj=_workloads())
def test_generated_workloads_give_one_answer(obj: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> None:
    tmp = tmp_path_factory.mktemp("w")
    path = tmp / "in" / "w.yaml"
    path.parent.mkdir()
    path.write_text(yaml.safe_dump(obj, sort_keys=False), encoding="utf-8")
    assert _check_file(path, tmp) == 1


KUSTOMIZED = sorted([*(ROOT / "tests" / "generate" / "data").glob("*.yaml"), *(ROOT / "examples").glob("*.yaml")])


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed (kubectl kustomize)")
@pytest.mark.parametrize("path", KUSTOMIZED, ids=lambda p: str(p.relative_to(ROOT)))
def test_kubectl_kustomize_builds_what_kubegpu_fix_writes(path: Path, tmp_path: Path) -> None:
    """The bundle as kustomize itself builds it (where kubectl is installed) gives the answer of `kubegpu fix`."""
    try:
        items = workload.load_workloads([str(path)])
    except InputError:
        pytest.skip("not a manifest kubegpu reads (a broken-input fixture)")
    fixed = {(o.get("kind"), (o.get("metadata") or {}).get("name")): o for o in _fixed_objects(path, tmp_path)}
    built = 0
    for n, item in enumerate(items):
        out = tmp_path / f"bundle{n}"
        try:
            result = fixes.generate(item, DEFAULT, fixes.FixOptions(), out)
        except InputError:
            continue
        write_generated(result.generated, out)
        run = subprocess.run(
            ["kubectl", "kustomize", "--load-restrictor", "LoadRestrictionsNone", str(out)],
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        )
        same = [
            o for o in yaml.safe_load_all(run.stdout) if (o["kind"], o["metadata"]["name"]) == (item.kind, item.name)
        ]
        assert _facts(same[0]) == _facts(fixed[(item.kind, item.name)]), f"{path.name}: {item.kind}/{item.name}"
        built += 1
    if not built:
        pytest.skip("no workload here needs a fix")
