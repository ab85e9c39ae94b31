"""An LLMInferenceService is read merged with its LLMInferenceServiceConfig presets as KServe merges them
(kserve pkg/controller/v1alpha2/llmisvc/config_merge.go @ aaac4e294dae): which presets, in which order, and what
the merged pod gives each container."""

from __future__ import annotations

from kubegpu.lint.config import LintConfig
from kubegpu.lint.engine import lint_text
from kubegpu.manifests import load_text
from kubegpu.workloads import llmisvc, pod_templates
from kubegpu.workloads.expand import bind_runtimes, by_kind

_SERVICE = """apiVersion: serving.kserve.io/v1alpha2
kind: LLMInferenceService
metadata: {name: svc, namespace: ns}
spec:
  model: {uri: "hf://org/model"}
"""
_MAIN = """    containers:
    - name: main
      resources:
        limits: {cpu: "4", memory: 32Gi, nvidia.com/gpu: "1"}
        requests: {cpu: "4", memory: 32Gi, nvidia.com/gpu: "1"}
"""


def _kg201(text: str) -> list[tuple[str, str]]:
    result = lint_text("svc.yaml", text, LintConfig(select=("KG201",)))
    return [(f.severity.value, f.message) for f in result.findings]


def test_the_well_known_preset_follows_the_shape() -> None:
    assert llmisvc.well_known({}) == ["kserve-config-llm-template"]
    assert llmisvc.well_known({"worker": {}, "parallelism": {"data": 8, "dataLocal": 8}}) == [
        "kserve-config-llm-worker-data-parallel"
    ]
    assert llmisvc.well_known({"worker": {}, "parallelism": {"pipeline": 2}}) == [
        "kserve-config-llm-worker-pipeline-parallel"
    ]
    assert llmisvc.well_known({"worker": {}}) == []  # neither data nor pipeline parallel: no preset
    assert llmisvc.well_known({"prefill": {"worker": {}, "parallelism": {"data": 2}}}) == [
        "kserve-config-llm-prefill-worker-data-parallel",
        "kserve-config-llm-decode-template",
    ]


def test_a_service_alone_takes_the_shipped_preset_and_its_dev_shm() -> None:
    assert _kg201(_SERVICE + "  template:\n" + _MAIN) == []
    workers = _SERVICE + "  parallelism: {data: 16, dataLocal: 8}\n  template:\n" + _MAIN + "  worker:\n" + _MAIN
    assert _kg201(workers) == []


def test_a_preset_kserve_does_not_ship_is_unknown() -> None:
    text = _SERVICE + "  parallelism: {pipeline: 2}\n  template:\n" + _MAIN + "  worker:\n" + _MAIN
    found = _kg201(text)
    assert found and {severity for severity, _ in found} == {"info"}
    assert "kserve-config-llm-worker-pipeline-parallel" in found[0][1]


def test_base_refs_merge_after_the_well_known_preset_and_the_service_last() -> None:
    preset = """---
apiVersion: serving.kserve.io/v1alpha2
kind: LLMInferenceServiceConfig
metadata: {name: kserve-config-llm-template, namespace: kserve}
spec:
  template:
    containers:
    - name: main
      image: example/server:1
      resources:
        limits: {cpu: "8", memory: 64Gi}
"""
    no_shm = """---
apiVersion: serving.kserve.io/v1alpha2
kind: LLMInferenceServiceConfig
metadata: {name: bare, namespace: ns}
spec:
  template:
    containers:
    - name: main
      image: example/server:2
"""
    # the preset in the input mounts no /dev/shm, so the service lacks it; a baseRef cannot take a volume away
    text = _SERVICE + "  baseRefs: [{name: bare}]\n  template:\n" + _MAIN + preset + no_shm
    assert [severity for severity, _ in _kg201(text)] == ["warning"]
    documents = load_text("svc.yaml", text).documents
    bind_runtimes(documents, by_kind(documents))
    service = documents[0]
    assert [p.name for p in llmisvc.presets(service)] == ["kserve-config-llm-template", "bare"]
    template = next(iter(pod_templates(service)))
    fill = template.fill(template.containers[0])
    assert fill is not None and fill.limits == {"cpu": "8", "memory": "64Gi"}  # what the service leaves out
    assert fill.shm is False
    assert llmisvc.configs(service) == (documents[1], documents[2])
    assert list(pod_templates(documents[1])) == []  # a preset makes no pods of its own
