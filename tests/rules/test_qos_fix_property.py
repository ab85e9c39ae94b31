"""Property test: when gpu-pod-not-guaranteed (KG101) applies its fix, the fixed pod is Guaranteed by the one QoS
model (kubegpu.manifests.pod, kubernetes v1.35 ComputePodQOS), whatever mix of init containers, restartable
sidecars and app containers, missing, zero, equal or unequal requests and limits, and pod-level resources."""

from __future__ import annotations

from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kubegpu.manifests.pod as podmodel
from kubegpu.fix import FixOptions, fix_text
from kubegpu.lint import Finding, LintConfig, lint_text

_CPU = st.sampled_from([None, "0", "250m", "500m", "1", "2", "3500m", "4", "8", "bad-cpu"])
_MEMORY = st.sampled_from([None, "0", "64Mi", "512Mi", "1Gi", "1024Mi", "2Gi", "8Gi", "lots"])


@st.composite
def _resources(draw: Any, gpu: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for section in ("requests", "limits"):
        values = {k: v for k, v in (("cpu", draw(_CPU)), ("memory", draw(_MEMORY))) if v is not None}
        if gpu:
            values["nvidia.com/gpu"] = "1"
        if values or draw(st.booleans()):
            out[section] = values
    return out


@st.composite
def _pods(draw: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    init = []
    for i in range(draw(st.integers(0, 2))):
        container: dict[str, Any] = {"name": f"init{i}", "image": "busybox:1.36"}
        if draw(st.booleans()):
            container["restartPolicy"] = "Always"  # a sidecar
        if draw(st.integers(0, 5)) > 0:
            container["resources"] = draw(_resources(False))
        init.append(container)
    if init:
        spec["initContainers"] = init
    apps = [{"name": "train", "image": "nvcr.io/nvidia/pytorch:24.05-py3", "resources": draw(_resources(True))}]
    for i in range(draw(st.integers(0, 2))):
        app: dict[str, Any] = {"name": f"side{i}", "image": "fluent/fluent-bit:3.0.4"}
        if draw(st.integers(0, 5)) > 0:
            app["resources"] = draw(_resources(False))
        apps.append(app)
    spec["containers"] = apps
    if draw(st.integers(0, 5)) == 0:
        spec["resources"] = draw(_resources(False))  # pod-level resources
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec}


_CONFIG = LintConfig(select=("KG101",))


def _lint(name: str, text: str) -> list[Finding]:
    return lint_text(name, text, _CONFIG).findings


def _qos(text: str) -> str:
    spec = yaml.safe_load(text)["spec"]
    return podmodel.qos_class(podmodel.read_pod_spec(spec, strict=False))


@settings(max_examples=300, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(_pods(), st.booleans())
def test_a_pod_the_guaranteed_fix_was_applied_to_is_guaranteed(pod: dict[str, Any], text_edits: bool) -> None:
    text = yaml.safe_dump(pod, sort_keys=False)
    before = [f for f in _lint("p.yaml", text) if f.severity.value != "info"]
    if _qos(text) == podmodel.GUARANTEED:
        assert not before, [f.message for f in before]
    outcome = fix_text("p.yaml", text, _lint, FixOptions(unsafe=True, text_edits=text_edits))
    assert outcome.error is None
    if any(a.code == "KG101" for a in outcome.applied):
        assert _qos(outcome.fixed) == podmodel.GUARANTEED, outcome.fixed
        # Every container that broke Guaranteed QoS was fixed: nothing of KG101 remains but the pod-level info.
        assert all(r.severity == "info" for r in outcome.remaining if r.code == "KG101"), outcome.remaining
    for rest in outcome.remaining:
        if rest.code == "KG101" and rest.severity != "info":
            assert _qos(outcome.fixed) != podmodel.GUARANTEED
            assert rest.reason == "no automatic fix", rest
