"""Every command sees one pod: lint's rules, kubelet admission, the scheduler, the simulator's workload reader
and its admission, the audit parser and the webhook agree on a pod's requests, QoS class and GPU containers.

Random pod specs: app and init containers, sidecars (restartPolicy: Always), pod-level resources (absent,
empty or partial), partial requests and limits, accelerators, DRA claims, KAI GPU-sharing annotations.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubegpu.kubelet import PodRequest
from kubegpu.kubelet import qos_class as kubelet_qos
from kubegpu.lint import LintConfig
from kubegpu.live.audit import _guaranteed as audit_guaranteed
from kubegpu.live.parse import parse_pod
from kubegpu.manifests import Document, load_text
from kubegpu.manifests import pod as podmodel
from kubegpu.manifests.resources import template_gpu_containers, template_pod, uses_accelerators
from kubegpu.ruleapi import Severity
from kubegpu.rules.qos import qos_class as lint_qos
from kubegpu.scheduler.gang import Binding
from kubegpu.scheduler.resources import resource_request_of
from kubegpu.sim.simulation import _Kubelets
from kubegpu.sim.workload import jobs_from_manifest
from kubegpu.webhook.review import WebhookConfig, review
from kubegpu.workloads import pod_templates

_CPU = st.one_of(st.integers(0, 16).map(str), st.integers(0, 16000).map(lambda m: f"{m}m"))
_MEMORY = st.one_of(st.integers(0, 64).map(lambda g: f"{g}Gi"), st.integers(0, 4096).map(lambda m: f"{m}Mi"))
_ACCELERATOR = st.sampled_from(["nvidia.com/gpu", "amd.com/gpu", "nvidia.com/mig-1g.10gb", "google.com/tpu"])


@st.composite
def _resources(draw: st.DrawFn, accelerators: bool) -> dict[str, Any]:
    """A container's resources: any of cpu and memory in requests and/or limits, an accelerator (request equal
    to the limit, or the limit alone, as the API server requires), maybe a DRA claim."""
    out: dict[str, Any] = {}
    requests: dict[str, str] = {}
    limits: dict[str, str] = {}
    for name, values in (("cpu", _CPU), ("memory", _MEMORY)):
        where = draw(st.sampled_from(["none", "request", "limit", "both", "equal"]))
        if where in ("request", "both"):
            requests[name] = draw(values)
        if where in ("limit", "both"):
            limits[name] = draw(values)
        if where == "equal":
            requests[name] = limits[name] = draw(values)
    if accelerators and draw(st.booleans()):
        name = draw(_ACCELERATOR)
        count = str(draw(st.integers(0, 8)))
        limits[name] = count
        if draw(st.booleans()):
            requests[name] = count
    if requests:
        out["requests"] = requests
    if limits:
        out["limits"] = limits
    if accelerators and draw(st.integers(0, 5)) == 0:
        out["claims"] = [{"name": "gpu"}]
    return out


@st.composite
def pods(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, str]]:
    """A pod spec and the pod's annotations."""
    n_apps = draw(st.integers(1, 3))
    n_inits = draw(st.integers(0, 3))
    spec: dict[str, Any] = {
        "initContainers": [
            {
                "name": f"init-{i}",
                "image": "busybox",
                **({"restartPolicy": "Always"} if draw(st.booleans()) else {}),
                "resources": draw(_resources(accelerators=True)),
            }
            for i in range(n_inits)
        ],
        "containers": [
            {"name": f"app-{i}", "image": "trainer", "resources": draw(_resources(accelerators=True))}
            for i in range(n_apps)
        ],
    }
    if not spec["initContainers"]:
        del spec["initContainers"]
    level = draw(st.sampled_from(["absent", "absent", "empty", "partial"]))
    if level == "empty":
        spec["resources"] = {}
    elif level == "partial":
        spec["resources"] = draw(_resources(accelerators=False))
    if draw(st.integers(0, 4)) == 0:
        spec["overhead"] = {"cpu": "250m", "memory": "120Mi"}
    if draw(st.integers(0, 4)) == 0:
        spec["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]
    annotations: dict[str, str] = {}
    if draw(st.integers(0, 4)) == 0:
        annotations["gpu-fraction"] = "0.5"
        names = [c["name"] for c in spec.get("initContainers", []) + spec["containers"]]
        if draw(st.booleans()):
            annotations["gpu-fraction-container-name"] = draw(st.sampled_from(names))
    return spec, annotations


def _pod_object(spec: dict[str, Any], annotations: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "team", **({"annotations": annotations} if annotations else {})},
        "spec": spec,
    }


def _settings(examples: int) -> settings:
    """Derandomized (the same examples on every run), no deadline (two shared cores), no example database."""
    return settings(
        max_examples=examples,
        derandomize=True,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


@_settings(1200)
@given(pods())
def test_every_consumer_sees_the_same_requests_qos_and_gpu_containers(
    drawn: tuple[dict[str, Any], dict[str, str]],
) -> None:
    spec, annotations = drawn
    model = podmodel.read_pod_spec(spec, annotations)
    requests = podmodel.canonical_amounts(podmodel.pod_requests(model))
    qos = podmodel.qos_class(model)
    gpu_names = [c.name for c in podmodel.gpu_containers(model)]
    devices = podmodel.device_count(model)
    obj = _pod_object(spec, annotations)

    # lint's rules (the template read from YAML text, with positions)
    template = next(pod_templates(load_text("pod.json", json.dumps(obj)).documents[0]))
    assert podmodel.canonical_amounts(podmodel.pod_requests(template_pod(template))) == requests
    assert lint_qos(template) == qos
    assert [c.name for c in template_gpu_containers(template)] == gpu_names
    assert uses_accelerators(template) == podmodel.uses_accelerators(model)

    # kubelet admission
    kubelet_pod = PodRequest.from_pod_spec("p", spec)
    assert {r: kubelet_pod.effective(r) for r in requests} == requests
    assert kubelet_qos(kubelet_pod) == qos

    # scheduler
    assert dict(resource_request_of(model).requests) == requests

    # simulator: the workload reader, and the pod its kubelets admit
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "j"},
        "spec": {"template": {"metadata": {"annotations": annotations}, "spec": spec}},
    }
    gpu_pod = jobs_from_manifest(Document("job.yaml", 0, job), "job.yaml")[0].pods[0]
    assert gpu_pod.cpu_milli == max(requests.get("cpu", 0), 1)
    assert gpu_pod.memory_bytes == requests.get("memory", 0)
    assert gpu_pod.gpu_count == devices
    admitted = _Kubelets.request(Binding(gpu_pod, 0, ()), "nvidia.com/gpu")
    assert kubelet_qos(admitted) == qos
    assert {r: admitted.effective(r) for r in requests} == requests

    # audit
    live = parse_pod(obj)
    assert dict(live.requests) == requests
    assert audit_guaranteed(live) == (qos == podmodel.GUARANTEED)
    assert live.spec is not None
    assert [c.name for c in podmodel.gpu_containers(live.spec)] == gpu_names


_WEBHOOK = WebhookConfig(lint=LintConfig(select=("KG101",)), deny_severity=Severity.WARNING)


@_settings(400)
@given(pods())
def test_the_webhook_and_lint_agree_with_the_model(drawn: tuple[dict[str, Any], dict[str, str]]) -> None:
    """The webhook reviews a pod as a GPU pod exactly when the model says it uses accelerators, and denies
    it for gpu-pod-not-guaranteed (at warning) exactly when the model's QoS class is not Guaranteed."""
    spec, annotations = drawn
    model = podmodel.read_pod_spec(spec, annotations)
    body = {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "u",
            "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "operation": "CREATE",
            "namespace": "team",
            "object": _pod_object(spec, annotations),
        },
    }
    decision = review(json.dumps(body), "validate", _WEBHOOK)
    if not podmodel.uses_accelerators(model):
        assert decision.skipped == "no accelerators"
        return
    assert not decision.skipped
    assert decision.denied == (podmodel.qos_class(model) != podmodel.GUARANTEED)
