"""What KServe fills into an InferenceService container (kserve v0.15), as the pod model and admit's pod spec
read it: inferenceservice-config's default cpu and memory for framework and custom predictors, the shipped
runtime's for a model predictor whose format picks one, nothing for a runtime the input cannot see."""

from __future__ import annotations

import pytest

import kubegpu.manifests.pod as podmodel
from kubegpu.manifests import load_text, pod_spec
from kubegpu.manifests.resources import template_pod
from kubegpu.workloads import pod_templates
from kubegpu.workloads.kserve import kserve_fill


def _template(predictor: str):  # type: ignore[no-untyped-def]
    text = (
        "apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\nmetadata: {name: m}\n"
        f"spec:\n  predictor:\n{predictor}"
    )
    (doc,) = load_text("isvc.yaml", text).documents
    (template,) = pod_templates(doc)
    return template


@pytest.mark.parametrize(
    ("predictor", "qos", "requests"),
    [
        # a GPU limit alone: the webhook gives cpu 1 and memory 2Gi to requests and limits alike
        (
            "    tensorflow:\n      resources: {limits: {nvidia.com/gpu: 1}}\n",
            "Guaranteed",
            {"cpu": "1", "memory": "2Gi"},
        ),
        # limits alone: the requests are KServe's defaults, not the limits
        (
            "    pytorch:\n      resources: {limits: {cpu: 4, memory: 16Gi, nvidia.com/gpu: 1}}\n",
            "Burstable",
            {"cpu": "1", "memory": "2Gi"},
        ),
        # a custom predictor's first container is defaulted too
        (
            "    containers:\n    - name: c\n      image: x:1.0\n      resources: {limits: {nvidia.com/gpu: 1}}\n",
            "Guaranteed",
            {"cpu": "1", "memory": "2Gi"},
        ),
        # a model predictor on the shipped Hugging Face runtime takes that runtime's cpu and memory
        (
            "    model:\n      modelFormat: {name: huggingface}\n      resources: {limits: {nvidia.com/gpu: 1}}\n",
            "Guaranteed",
            {"cpu": "1", "memory": "2Gi"},
        ),
        # a runtime KServe does not ship, not in the input: nothing is filled in
        (
            "    model:\n      modelFormat: {name: nim}\n      runtime: nim-rt\n"
            "      resources: {limits: {nvidia.com/gpu: 1}}\n",
            "BestEffort",
            {},
        ),
    ],
)
def test_pod_model_and_pod_spec_agree_on_what_kserve_fills(predictor: str, qos: str, requests: dict[str, str]) -> None:
    template = _template(predictor)
    assert podmodel.qos_class(template_pod(template)) == qos
    (container,) = pod_spec(template)["containers"]
    got = {k: str(v) for k, v in container.get("resources", {}).get("requests", {}).items() if k != "nvidia.com/gpu"}
    assert got == requests


def test_the_shipped_hugging_face_runtime_mounts_dev_shm_and_torchserve_does_not() -> None:
    hf = _template("    model:\n      modelFormat: {name: huggingface}\n")
    torch = _template("    pytorch:\n      storageUri: gs://b/m\n")
    assert kserve_fill(hf, hf.containers[0]).shm is True  # type: ignore[union-attr]
    assert kserve_fill(torch, torch.containers[0]).shm is False  # type: ignore[union-attr]
