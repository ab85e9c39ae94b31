"""Properties of the mutating answer on generated pods: it applies, is idempotent, is scoped."""

from __future__ import annotations

import base64
import json
from typing import Any

import jsonpatch
from hypothesis import given, settings
from hypothesis import strategies as st

from kubegpu.lint import lint_text
from kubegpu.webhook import WebhookConfig, review
from kubegpu.webhook.review import may_use_accelerators

CONFIG = WebhookConfig()
quantity = st.sampled_from(["1", "2", "4", "500m", "8Gi", "16Gi", "64Gi", "100Mi"])
gpu = st.sampled_from(["0", "1", "2", "8"])


@st.composite
def containers(draw: st.DrawFn, index: int) -> dict[str, Any]:
    resources: dict[str, Any] = {}
    for section in ("requests", "limits"):
        if draw(st.booleans()):
            values: dict[str, Any] = {}
            if draw(st.booleans()):
                values["cpu"] = draw(quantity)
            if draw(st.booleans()):
                values["memory"] = draw(quantity)
            if draw(st.booleans()):
                values["nvidia.com/gpu"] = draw(gpu)
            resources[section] = values
    container: dict[str, Any] = {"name": f"c{index}", "image": "example/image:1"}
    if draw(st.booleans()):
        container["resources"] = resources
    if draw(st.booleans()):
        container["volumeMounts"] = [{"name": "data", "mountPath": "/data"}]
    return container


@st.composite
def pods(draw: st.DrawFn) -> dict[str, Any]:
    n = draw(st.integers(1, 3))
    spec: dict[str, Any] = {"containers": [draw(containers(i)) for i in range(n)]}
    if draw(st.booleans()):
        spec["volumes"] = [{"name": "data", "emptyDir": {}}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ml"}, "spec": spec}


def _review(pod: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "u",
            "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "namespace": "ml",
            "operation": "CREATE",
            "object": pod,
        },
    }


def _ops(pod: dict[str, Any]) -> list[dict[str, Any]]:
    inner = review(_review(pod), "mutate", CONFIG).response["response"]
    assert inner["allowed"] is True
    if "patch" not in inner:
        return []
    ops: list[dict[str, Any]] = json.loads(base64.b64decode(inner["patch"]))
    return ops


def _uses_gpu(pod: dict[str, Any]) -> bool:
    for container in pod["spec"]["containers"]:
        for section in (container.get("resources") or {}).values():
            if str(section.get("nvidia.com/gpu", "0")) != "0":
                return True
    return False


@settings(max_examples=120, deadline=None)
@given(pods())
def test_patch_applies_and_a_second_review_has_nothing_to_add(pod: dict[str, Any]) -> None:
    ops = _ops(pod)
    if not _uses_gpu(pod):
        assert ops == []  # pods without accelerators are never touched
        return
    patched = jsonpatch.apply_patch(pod, ops)  # raises if the patch does not apply
    assert _ops(patched) == []  # idempotent: every safe fix is already in
    # only additions: nothing the author wrote is removed or replaced
    assert all(op["op"] == "add" for op in ops)
    for before, after in zip(pod["spec"]["containers"], patched["spec"]["containers"], strict=True):
        for section, values in (before.get("resources") or {}).items():
            for name, value in values.items():
                assert after["resources"][section][name] == value
    for volume in pod["spec"].get("volumes", []):
        assert volume in patched["spec"]["volumes"]


@settings(max_examples=120, deadline=None)
@given(
    pods(),
    st.sampled_from([{}, {"gpu-fraction": "0.5"}, {"example.com/gpu-memory": "4096"}, {"team": "ml"}]),
    st.booleans(),
)
def test_pre_check_never_skips_a_gpu_pod(pod: dict[str, Any], annotations: dict[str, str], claim: bool) -> None:
    """The cheap text pre-check is sound: whatever the engine calls a GPU pod passes it."""
    pod["metadata"]["annotations"] = annotations
    if claim:
        pod["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": "one-gpu"}]
    text = json.dumps(pod)
    is_gpu = lint_text("p.json", text).gpu_templates > 0
    assert may_use_accelerators(text, CONFIG) or not is_gpu
