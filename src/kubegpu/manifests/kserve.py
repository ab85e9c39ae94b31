"""What KServe adds to an InferenceService container before its pod exists, where the input alone decides it.

Follows kserve v0.15: the InferenceService webhook fills a framework predictor's (and a custom predictor's first
container's) missing cpu and memory requests and limits from `inferenceservice-config`, shipped as cpu 1 and
memory 2Gi each (pkg/apis/serving/v1beta1/inference_service_defaults.go, setResourceRequirementDefaults). A
`model:` predictor gets no such defaults: its container is its ServingRuntime's container with the predictor's
fields merged over it, and the pod takes the runtime's volumes. Where the runtime is one KServe ships
(config/runtimes: cpu 1 and memory 2Gi requests and limits; the Hugging Face and vLLM servers mount a
memory-backed /dev/shm), its name or the model format picks it; any other runtime is read by the rules from the
input (`rules/kserve_supply.py`) or is unknown. Every reader of a KServe pod (lint's pod model, `admit`'s pod
spec, the rules) takes these facts from here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kubegpu.manifests.document import as_mapping
from kubegpu.manifests.workloads import ContainerRef, PodTemplate

# The shipped inferenceservice-config `resource` defaults (requests and limits alike).
DEFAULT_RESOURCES: Mapping[str, str] = {"cpu": "1", "memory": "2Gi"}
FRAMEWORK_KEYS = frozenset(
    {
        "pytorch",
        "tensorflow",
        "triton",
        "sklearn",
        "xgboost",
        "onnx",
        "huggingface",
        "lightgbm",
        "pmml",
        "paddle",
        "art",
    }
)
# The ClusterServingRuntimes KServe ships, by the model format (or framework key) that selects them, and whether
# each mounts a memory-backed /dev/shm. Their container resources are DEFAULT_RESOURCES.
SHIPPED_RUNTIMES: Mapping[str, tuple[str, bool]] = {
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
_SHIPPED_SHM: Mapping[str, bool] = dict(SHIPPED_RUNTIMES.values())


@dataclass(frozen=True)
class KServeFill:
    """What KServe gives a container for the cpu and memory it leaves out, and whether it adds /dev/shm.

    `runtime` names the ServingRuntime a `model:` predictor uses when the input alone cannot say what it holds
    (then `resources` is None: a rule may find it in the input); `shm` is None when unknown.
    """

    source: str  # in words, after "KServe fills in what it leaves out from": "its default resources (...)"
    resources: Mapping[str, str] | None  # the same values for requests and limits
    shm: bool | None
    runtime: str | None = None


def kserve_fill(template: PodTemplate, container: ContainerRef) -> KServeFill | None:
    """What KServe adds to `container`, a component container of an InferenceService; None for anything else."""
    if template.kind != "InferenceService" or len(container.path) < 3 or container.path[0] != "spec":
        return None
    key = container.path[2]
    if key == "model":
        name = container.data.get("runtime")
        model_format = str(as_mapping(container.data.get("modelFormat")).get("name") or "").lower()
        named = name if isinstance(name, str) and name else ""
        shipped = named or SHIPPED_RUNTIMES.get(model_format, ("", False))[0]
        if shipped in _SHIPPED_SHM:
            source = f"the ClusterServingRuntime '{shipped}' as KServe ships it"
            return KServeFill(source, DEFAULT_RESOURCES, _SHIPPED_SHM[shipped], shipped)
        what = f"ServingRuntime '{named}'" if named else "the ServingRuntime KServe selects"
        return KServeFill(f"{what} (not in the input)", None, None, named or None)
    if key in FRAMEWORK_KEYS:
        runtime, shm = SHIPPED_RUNTIMES.get(str(key), ("", False))
        where = f" and its {runtime} runtime" if runtime else ""
        return KServeFill(f"its default resources (cpu 1, memory 2Gi){where}", DEFAULT_RESOURCES, shm)
    if container.path[2:] == ("containers", 0):
        return KServeFill("its default resources (cpu 1, memory 2Gi)", DEFAULT_RESOURCES, False)
    return None


def filled_resources(
    own: Mapping[str, object], fill: KServeFill | None
) -> tuple[dict[str, object], dict[str, object]] | None:
    """The requests and limits of a container's `resources` after KServe fills the cpu and memory it leaves out
    (None when nothing is filled)."""
    if fill is None or fill.resources is None:
        return None
    requests = dict(as_mapping(own.get("requests")))
    limits = dict(as_mapping(own.get("limits")))
    for name, value in fill.resources.items():
        requests.setdefault(name, value)
        limits.setdefault(name, value)
    return requests, limits
