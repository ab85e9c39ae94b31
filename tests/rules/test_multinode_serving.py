"""Multi-host serving groups (Dynamo multinode services, LLMInferenceService workers): case table and job shapes."""

from __future__ import annotations

from typing import Any

import pytest

from kubegpu.manifests import load_text
from kubegpu.manifests.resources import DEFAULT_ACCELERATOR_RESOURCES
from kubegpu.ruleapi import RuleContext
from kubegpu.rules.gang import gang_verdict, job_shape
from kubegpu.workloads import pod_templates
from kubegpu.workloads.kserve import llm_group_size
from tests.rules.kg_cases import case_ids, load_table, run_case

TABLE = load_table("multinode_serving.yaml")


@pytest.mark.parametrize("case", TABLE["cases"], ids=case_ids(TABLE))
def test_case(case: dict[str, Any]) -> None:
    run_case(TABLE, case)


@pytest.mark.parametrize(
    ("parallelism", "size"),
    [
        ({}, None),
        ({"tensor": 8}, None),
        ({"pipeline": 2}, 2),
        ({"data": 16, "dataLocal": 8}, 2),
        ({"data": 16}, 16),
        ({"dataLocal": 8}, 1),
        ({"data": 4, "dataLocal": 8}, 1),
        ({"data": 16, "dataLocal": 8, "pipeline": 4}, 2),  # data parallelism decides first
    ],
)
def test_group_size_follows_kserve(parallelism: dict[str, int], size: int | None) -> None:
    assert llm_group_size({"parallelism": parallelism}) == size


def _shape(text: str) -> Any:
    doc = load_text("x.yaml", text).documents[0]
    ctx = RuleContext(options={}, all_documents=(doc,), accelerator_resources=DEFAULT_ACCELERATOR_RESOURCES)
    return doc, ctx, job_shape(doc, ctx)


def test_prefill_has_its_own_replicas_and_group_size() -> None:
    doc, _ctx, shape = _shape(
        "apiVersion: serving.kserve.io/v1alpha1\nkind: LLMInferenceService\nmetadata: {name: pd}\nspec:\n"
        "  replicas: 3\n  parallelism: {data: 16, dataLocal: 8}\n"
        "  template: {containers: [{name: m, image: 'x:1', resources: {limits: {nvidia.com/gpu: 8}}}]}\n"
        "  worker: {containers: [{name: m, image: 'x:1', resources: {limits: {nvidia.com/gpu: 8}}}]}\n"
        "  prefill:\n    parallelism: {data: 32, dataLocal: 8}\n"
        "    template: {containers: [{name: m, image: 'x:1', resources: {limits: {nvidia.com/gpu: 8}}}]}\n"
        "    worker: {containers: [{name: m, image: 'x:1', resources: {limits: {nvidia.com/gpu: 8}}}]}\n"
    )
    counts = {t.role: t.replicas for t in pod_templates(doc)}
    assert counts == {"template": 3, "worker": 3, "prefill-template": 1, "prefill-worker": 3}
    assert shape is not None and shape.unit_pods == 4  # the largest group: prefill's 32 / 8


def test_the_dynamo_operator_gangs_multinode_services() -> None:
    text = (
        "apiVersion: nvidia.com/v1alpha1\nkind: DynamoGraphDeployment\nmetadata: {name: d{annotations}}\nspec:\n"
        "  services:\n    W:\n      replicas: 2\n      multinode: {nodeCount: 3}\n"
        "      resources: {limits: {gpu: '8'}}\n      extraPodSpec: {mainContainer: {image: 'x:1'}}\n"
    )
    _doc, ctx, shape = _shape(text.replace("{annotations}", ""))
    assert shape is not None and shape.unit_pods == 3 and shape.roles() == "W"
    assert gang_verdict(shape, ctx).mechanism == "the Dynamo operator (Grove PodGang)"
    _doc, ctx, shape = _shape(text.replace("{annotations}", ", annotations: {nvidia.com/enable-grove: 'false'}"))
    assert shape is not None and "Volcano" in str(gang_verdict(shape, ctx).mechanism)
