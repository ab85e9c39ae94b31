"""The pure admission function on recorded AdmissionReviews: pod shapes, skips, malformed input."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import jsonpatch
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubegpu.lint import LintConfig, Safety, Severity, lint_text
from kubegpu.webhook import MalformedReview, WebhookConfig, review

REVIEWS = Path(__file__).parent / "reviews"
CONFIG = WebhookConfig()


def load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((REVIEWS / name).read_text())
    return data


def patch_of(response: dict[str, Any]) -> list[dict[str, Any]]:
    inner = response["response"]
    if "patch" not in inner:
        return []
    assert inner["patchType"] == "JSONPatch"
    ops: list[dict[str, Any]] = json.loads(base64.b64decode(inner["patch"]))
    return ops


@pytest.mark.parametrize(
    "name, rules, paths",
    [
        # GPU requested without a limit (KG104) and no /dev/shm (KG201): both fixes are safe.
        (
            "gpu-request-no-limit.json",
            ("KG201", "KG104"),
            ["/spec/volumes", "/spec/containers/0/volumeMounts", "/spec/containers/0/resources/limits/nvidia.com~1gpu"],
        ),
        ("gpu-limits-only-no-shm.json", ("KG201",), ["/spec/volumes", "/spec/containers/0/volumeMounts"]),
        # only requests: the limits map is created first (RFC 6902 needs the parent), then the GPU
        # limit; no memory limit, so no /dev/shm size can be derived and KG201 has no fix
        (
            "gpu-requests-only.json",
            ("KG104",),
            ["/spec/containers/0/resources/limits", "/spec/containers/0/resources/limits/nvidia.com~1gpu"],
        ),
        # existing volumes and mounts: the patch appends ("-"), never replaces the user's lists
        ("gpu-existing-volumes.json", ("KG201",), ["/spec/containers/0/volumeMounts/-", "/spec/volumes/-"]),
        # two GPU containers and a CPU sidecar: both GPU containers get the mount, the proxy does not
        (
            "gpu-multi-container-sidecar.json",
            ("KG201", "KG104"),
            [
                "/spec/volumes",
                "/spec/containers/0/volumeMounts",
                "/spec/containers/1/volumeMounts",
                "/spec/containers/1/resources/limits/nvidia.com~1gpu",
            ],
        ),
    ],
)
def test_gpu_pods_get_their_safe_fixes(name: str, rules: tuple[str, ...], paths: list[str]) -> None:
    data = load(name)
    decision = review(json.dumps(data).encode(), "mutate", CONFIG)
    # applied in the fix engine's order (line, then rule code; the request's JSON is one line)
    assert decision.patched and decision.rules == tuple(sorted(rules))
    ops = patch_of(decision.response)
    assert sorted(op["path"] for op in ops) == sorted(paths)
    assert decision.response["response"]["uid"] == data["request"]["uid"]
    assert decision.response["response"]["allowed"] is True
    # the patch applies to the pod as sent, and the patched pod has no safe fix left to apply
    patched = jsonpatch.apply_patch(data["request"]["object"], ops)
    left = lint_text("patched.json", json.dumps(patched), LintConfig()).findings
    assert not [f for f in left if f.fix is not None and f.fix.safety is Safety.SAFE]
    # the user's own entries are still there
    original = data["request"]["object"]["spec"]
    for volume in original.get("volumes", []):
        assert volume in patched["spec"]["volumes"]


def test_dev_shm_size_is_half_the_memory_limit() -> None:
    ops = patch_of(review(load("gpu-limits-only-no-shm.json"), "mutate", CONFIG).response)
    volumes = next(op for op in ops if op["path"] == "/spec/volumes")["value"]
    # memory limit 32Gi -> sizeLimit 16Gi, memory-backed
    assert volumes == [{"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "16Gi"}}]


@pytest.mark.parametrize(
    "name, skipped",
    [
        ("cpu-only.json", "no accelerators"),
        ("gpu-kube-system.json", "namespace excluded"),
        ("gpu-update.json", "not a create"),
        ("deployment.json", "not a pod"),
        ("gpu-good.json", ""),
        ("gpu-ignored-by-annotation.json", ""),
    ],
)
@pytest.mark.parametrize("mode", ["mutate", "validate"])
def test_pods_left_alone(name: str, skipped: str, mode: str) -> None:
    decision = review(load(name), mode, CONFIG)  # type: ignore[arg-type]
    inner = decision.response["response"]
    assert inner["allowed"] is True and "patch" not in inner
    assert decision.skipped == skipped and not decision.patched and not decision.denied


def test_configured_namespace_exclusion() -> None:
    config = WebhookConfig(excluded_namespaces=frozenset({"ml"}))
    decision = review(load("gpu-request-no-limit.json"), "mutate", config)
    assert decision.skipped == "namespace excluded" and not decision.patched
    # kube-system stays excluded whatever the configuration says
    assert WebhookConfig(excluded_namespaces=frozenset()).excluded("kube-system")


def test_validating_denies_with_rule_names() -> None:
    decision = review(load("gpu-request-no-limit.json"), "validate", CONFIG)
    inner = decision.response["response"]
    assert decision.denied and inner["allowed"] is False
    assert inner["status"]["code"] == 403
    assert inner["status"]["message"].startswith(
        "kubegpu denied pod ml/trainer: 1 finding(s) at or above error (KG104 gpu-request-limit-mismatch)"
    )
    # at warning level the missing /dev/shm (KG201, a warning) denies too
    strict = WebhookConfig(deny_severity=Severity.WARNING)
    decision = review(load("gpu-limits-only-no-shm.json"), "validate", strict)
    assert decision.denied and "KG201 dshm-missing" in decision.response["response"]["status"]["message"]
    # below the threshold the findings come back as warnings, and the pod is allowed
    lenient = review(load("gpu-limits-only-no-shm.json"), "validate", CONFIG).response["response"]
    assert lenient["allowed"] is True
    assert any(w.startswith("kubegpu KG201 dshm-missing") for w in lenient["warnings"])


@pytest.mark.parametrize(
    "body, message",
    [
        (b"not json", "body is not JSON"),
        (b"[]", "body is not a JSON object"),
        (
            b'{"apiVersion": "admission.k8s.io/v1beta1", "kind": "AdmissionReview", "request": {}}',
            "expected kind AdmissionReview",
        ),
        (b'{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"}', "no 'request'"),
        (b'{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {}}', "no 'uid'"),
        (
            b'{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {"uid": "u",'
            b' "kind": {"group": "", "version": "v1", "kind": "Pod"}, "operation": "CREATE"}}',
            "request.object",
        ),
        (b"\xff\xfe", "body is not JSON"),
    ],
)
def test_malformed_reviews_raise_one_error(body: bytes, message: str) -> None:
    with pytest.raises(MalformedReview, match=message):
        review(body, "mutate", CONFIG)


def test_lone_surrogate_is_malformed() -> None:
    body = (REVIEWS / "gpu-request-no-limit.json").read_text().replace('"trainer"', '"tr\\ud800ainer"', 1)
    with pytest.raises(MalformedReview, match="not valid Unicode"):
        review(body.encode(), "mutate", CONFIG)


def test_garbage_inside_the_pod_is_not_a_crash() -> None:
    data = load("gpu-request-no-limit.json")
    data["request"]["object"]["spec"]["containers"][0]["resources"] = {
        "requests": {"nvidia.com/gpu": "lots"},
        "limits": "nope",
    }
    decision = review(data, "mutate", CONFIG)
    assert decision.response["response"]["allowed"] is True


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=12,
)


@settings(max_examples=80, deadline=None)
@given(json_values)
def test_any_json_object_as_pod_never_crashes(obj: object) -> None:
    """Whatever sits in request.object, the answer is a review response or MalformedReview."""
    data = load("gpu-request-no-limit.json")
    data["request"]["object"] = obj
    try:
        decision = review(data, "mutate", CONFIG)
    except MalformedReview:
        assert not isinstance(obj, dict)
        return
    assert decision.response["response"]["uid"] == "0b9e1c6a-0001"
