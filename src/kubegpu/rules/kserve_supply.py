"""What KServe adds to a predictor's container before the pod exists: default resources and a ServingRuntime.

Follows kserve v0.15: the InferenceService webhook fills a framework predictor's (and a custom predictor's first
container's) missing cpu and memory requests and limits from `inferenceservice-config` (shipped as cpu 1 and
memory 2Gi for each; pkg/apis/serving/v1beta1/inference_service_defaults.go, setResourceRequirementDefaults), and
a `model:` predictor gets no such defaults: its container is the ServingRuntime's container (the one named by
`runtime:`, or the runtime chosen for its model format) with the predictor's fields merged over it, and the pod
takes the runtime's volumes. A runtime in the input is read; otherwise one of the ClusterServingRuntimes KServe
ships (config/runtimes: cpu 1 and memory 2Gi requests and limits each; the Hugging Face and vLLM servers mount a
memory-backed /dev/shm) is assumed where the name or model format picks it; any other runtime is unknown. Rules
read here what the written predictor leaves to KServe.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubegpu.errors import QuantityError
from kubegpu.manifests import ContainerRef, Document, PodTemplate, as_mapping, mapping_items
from kubegpu.manifests.resources import ResourceValue
from kubegpu.rules.base import RuleContext
from kubegpu.units import parse_quantity

RUNTIME_KINDS = ("ServingRuntime", "ClusterServingRuntime")
# The shipped inferenceservice-config `resource` defaults (cpu and memory, requests and limits alike).
DEFAULT_RESOURCES: Mapping[str, str] = {"cpu": "1", "memory": "2Gi"}
_FRAMEWORK_KEYS = frozenset(
    {"pytorch", "tensorflow", "triton", "sklearn", "xgboost", "onnx", "huggingface", "lightgbm", "pmml", "paddle"}
)
_SHM_PATH = "/dev/shm"
# The ClusterServingRuntimes KServe ships, by the model format (or framework key) that selects them, and
# whether each mounts a memory-backed /dev/shm (kserve config/runtimes).
_SHIPPED: Mapping[str, tuple[str, bool]] = {
    "huggingface": ("kserve-huggingfaceserver", True),
    "vllm": ("kserve-vllmserver", True),
    "tensorflow": ("kserve-tensorflow-serving", False),
    "pytorch": ("kserve-torchserve", False),
    "triton": ("kserve-tritonserver", False),
    "tensorrt": ("kserve-tritonserver", False),
    "onnx": ("kserve-tritonserver", False),
    "sklearn": ("kserve-sklearnserver", False),
    "xgboost": ("kserve-xgbserver", False),
    "lightgbm": ("kserve-lgbserver", False),
    "pmml": ("kserve-pmmlserver", False),
    "paddle": ("kserve-paddleserver", False),
}
_SHIPPED_NAMES: Mapping[str, bool] = dict(_SHIPPED.values())


@dataclass(frozen=True)
class Supply:
    """Who completes a KServe container, and what it adds for the keys the written container leaves out.

    `requests`/`limits` are None when the supplier is a ServingRuntime that is not in the input (unknown);
    `shm` says whether the supplier mounts a memory-backed /dev/shm (None: unknown).
    """

    source: str  # in words, after "KServe fills it from": "its default resources (...)", "ServingRuntime 'x'"
    requests: Mapping[str, ResourceValue] | None
    limits: Mapping[str, ResourceValue] | None
    shm: bool | None

    @property
    def known(self) -> bool:
        return self.requests is not None


def supply(template: PodTemplate, container: ContainerRef, ctx: RuleContext) -> Supply | None:
    """What KServe adds to `container` (a predictor, transformer or explainer container of an InferenceService)."""
    if template.kind != "InferenceService" or len(container.path) < 3 or container.path[0] != "spec":
        return None
    key = container.path[2]
    if key == "model":
        return _runtime_supply(template, container, ctx)
    defaults = {name: _value(name, raw, ()) for name, raw in DEFAULT_RESOURCES.items()}
    if key in _FRAMEWORK_KEYS:
        runtime, shm = _SHIPPED.get(str(key), ("", False))
        where = f" and its {runtime} runtime" if runtime else ""
        return Supply(f"its default resources (cpu 1, memory 2Gi){where}", defaults, defaults, shm)
    if container.path[2:] == ("containers", 0):
        return Supply("its default resources (cpu 1, memory 2Gi)", defaults, defaults, False)
    return None


def _value(name: str, raw: Any, path: tuple[str | int, ...]) -> ResourceValue:
    try:
        return ResourceValue(name, raw, path, parse_quantity(raw))
    except QuantityError as err:
        return ResourceValue(name, raw, path, None, str(err))


def _runtime_supply(template: PodTemplate, container: ContainerRef, ctx: RuleContext) -> Supply:
    runtime = _find_runtime(template, container, ctx)
    name = container.data.get("runtime")
    if runtime is None:
        model_format = str(as_mapping(container.data.get("modelFormat")).get("name") or "").lower()
        shipped = name if isinstance(name, str) and name else _SHIPPED.get(model_format, ("", False))[0]
        if shipped in _SHIPPED_NAMES:
            defaults = {k: _value(k, raw, ()) for k, raw in DEFAULT_RESOURCES.items()}
            return Supply(
                f"the ClusterServingRuntime '{shipped}' as KServe ships it", defaults, defaults, _SHIPPED_NAMES[shipped]
            )
        what = f"ServingRuntime '{name}'" if isinstance(name, str) and name else "the ServingRuntime KServe selects"
        return Supply(f"{what} (not in the input)", None, None, None)
    spec = as_mapping(runtime.data.get("spec"))
    containers = list(mapping_items(spec.get("containers")))
    main = next((c for c in containers if c.get("name") == "kserve-container"), containers[0] if containers else {})
    resources = as_mapping(main.get("resources"))
    sections = {
        section: {str(k): _value(str(k), v, ()) for k, v in as_mapping(resources.get(section)).items()}
        for section in ("requests", "limits")
    }
    memory = {
        str(v.get("name"))
        for v in mapping_items(spec.get("volumes"))
        if str(as_mapping(v.get("emptyDir")).get("medium", "")).lower() == "memory"
    }
    shm = any(
        str(m.get("mountPath", "")).rstrip("/") == _SHM_PATH and str(m.get("name")) in memory
        for m in mapping_items(main.get("volumeMounts"))
    )
    return Supply(f"{runtime.kind} '{runtime.ref.name}'", sections["requests"], sections["limits"], shm)


def _find_runtime(template: PodTemplate, container: ContainerRef, ctx: RuleContext) -> Document | None:
    """The runtime named by `runtime:` (a namespaced one first), else the only auto-selected one for the format."""
    name = container.data.get("runtime")
    namespace = template.document.ref.namespace
    runtimes = ctx.documents_of(*RUNTIME_KINDS)
    if isinstance(name, str) and name:
        named = [d for d in runtimes if d.metadata.get("name") == name]
        local = [d for d in named if d.kind == "ServingRuntime" and d.ref.namespace == namespace]
        cluster = [d for d in named if d.kind == "ClusterServingRuntime"]
        found = local or cluster
        return found[0] if found else None
    model_format = as_mapping(container.data.get("modelFormat")).get("name")
    if not isinstance(model_format, str):
        return None
    candidates = [
        d
        for d in runtimes
        if (d.kind == "ClusterServingRuntime" or d.ref.namespace == namespace)
        and any(
            f.get("autoSelect") is True and str(f.get("name", "")).lower() == model_format.lower()
            for f in mapping_items(as_mapping(d.data.get("spec")).get("supportedModelFormats"))
        )
    ]
    return candidates[0] if len(candidates) == 1 else None


def effective(
    own: Mapping[str, ResourceValue], supplied: Mapping[str, ResourceValue] | None
) -> Mapping[str, ResourceValue]:
    """The container's own values, with the supplier's for the keys it leaves out."""
    if not supplied:
        return own
    merged = dict(supplied)
    merged.update(own)
    return merged
