"""What KServe adds to an InferenceService container before its pod exists, where the input alone decides it.

Follows kserve v0.15: the InferenceService webhook fills a framework predictor's (and a custom predictor's first
container's) missing cpu and memory requests and limits from `inferenceservice-config`, shipped as cpu 1 and
memory 2Gi each (pkg/apis/serving/v1beta1/inference_service_defaults.go, setResourceRequirementDefaults). A
`model:` predictor gets no such defaults: its container is its ServingRuntime's container with the predictor's
fields merged over it, and the pod takes the runtime's volumes. Where the runtime is one KServe ships
(config/runtimes: cpu 1 and memory 2Gi requests and limits; the Hugging Face and vLLM servers mount a
memory-backed /dev/shm), its name or the model format picks it. A ServingRuntime or ClusterServingRuntime of the
input is bound to the predictor when the input is expanded (`manifests.expand`, as a TrainJob is bound to its
runtime) and wins over a shipped one; any other runtime is unknown. Every reader of a KServe pod (lint's pod
model and rules, `admit`, `gen`, `simulate`, the Python API) takes these facts from here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from kubegpu.manifests.document import Document, as_mapping, mapping_items
from kubegpu.manifests.memo import recalled, remember
from kubegpu.manifests.workloads import KSERVE_FRAMEWORK_KEYS, ContainerRef, PodTemplate, pod_templates

RUNTIME_KINDS = ("ServingRuntime", "ClusterServingRuntime")
_SHM_PATH = "/dev/shm"

# The shipped inferenceservice-config `resource` defaults (requests and limits alike).
DEFAULT_RESOURCES: Mapping[str, str] = {"cpu": "1", "memory": "2Gi"}
FRAMEWORK_KEYS = frozenset(KSERVE_FRAMEWORK_KEYS)
# The name KServe gives a component's container (kserve pkg/constants InferenceServiceContainerName).
KSERVE_CONTAINER_NAME = "kserve-container"
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
    """What KServe gives a container for the resources it leaves out, and whether it adds /dev/shm.

    `runtime` names the ServingRuntime a `model:` predictor uses; `requests` and `limits` are None when that
    runtime is neither in the input nor one KServe ships (unknown), and `shm` is None when unknown.
    """

    source: str  # in words, after "KServe fills in what it leaves out from": "its default resources (...)"
    requests: Mapping[str, object] | None
    limits: Mapping[str, object] | None
    shm: bool | None
    runtime: str | None = None

    @property
    def known(self) -> bool:
        return self.requests is not None


def kserve_fill(template: PodTemplate, container: ContainerRef) -> KServeFill | None:
    """What KServe adds to `container`, a component container of an InferenceService; None for anything else."""
    if template.kind != "InferenceService" or len(container.path) < 3 or container.path[0] != "spec":
        return None
    key = container.path[2]
    if key == "model":
        bound = bound_runtime(template.document, container)
        if bound is not None:
            return _runtime_fill(bound)
        name = container.data.get("runtime")
        model_format = str(as_mapping(container.data.get("modelFormat")).get("name") or "").lower()
        named = name if isinstance(name, str) and name else ""
        shipped = named or SHIPPED_RUNTIMES.get(model_format, ("", False))[0]
        if shipped in _SHIPPED_SHM:
            source = f"the ClusterServingRuntime '{shipped}' as KServe ships it"
            return KServeFill(source, DEFAULT_RESOURCES, DEFAULT_RESOURCES, _SHIPPED_SHM[shipped], shipped)
        what = f"ServingRuntime '{named}'" if named else "the ServingRuntime KServe selects"
        return KServeFill(f"{what} (not in the input)", None, None, None, named or None)
    if key in FRAMEWORK_KEYS:
        runtime, shm = SHIPPED_RUNTIMES.get(str(key), ("", False))
        where = f" and its {runtime} runtime" if runtime else ""
        return KServeFill(
            f"its default resources (cpu 1, memory 2Gi){where}", DEFAULT_RESOURCES, DEFAULT_RESOURCES, shm
        )
    if container.path[2:] == ("containers", 0):
        return KServeFill("its default resources (cpu 1, memory 2Gi)", DEFAULT_RESOURCES, DEFAULT_RESOURCES, False)
    return None


def filled_resources(
    own: Mapping[str, object], fill: KServeFill | None
) -> tuple[dict[str, object], dict[str, object]] | None:
    """The requests and limits of a container's `resources` after KServe fills in the ones it leaves out (None
    when nothing is filled)."""
    if fill is None or fill.requests is None or fill.limits is None:
        return None
    requests = dict(as_mapping(own.get("requests")))
    limits = dict(as_mapping(own.get("limits")))
    for name, value in fill.requests.items():
        requests.setdefault(name, value)
    for name, value in fill.limits.items():
        limits.setdefault(name, value)
    return requests, limits


def bind_runtimes(doc: Document, documents_of: Callable[[str], Iterable[Document]]) -> None:
    """Bind each `model:` predictor of an InferenceService to its ServingRuntime when `documents_of(kind)` holds
    it: from then on KServe's fill for that container is the runtime's container resources and /dev/shm."""
    if doc.kind != "InferenceService":
        return
    for template in pod_templates(doc):
        for container in template.containers:
            if container.path[2:3] == ("model",):
                runtime = find_runtime(template, container, documents_of)
                if runtime is not None:
                    remember(doc, ("kserve_runtime", container.path), runtime)


def bound_runtime(doc: Document, container: ContainerRef) -> Document | None:
    """The ServingRuntime bound to a `model:` predictor container (None: the input holds none for it)."""
    found: Document | None = recalled(doc, ("kserve_runtime", container.path))
    return found


def find_runtime(
    template: PodTemplate, container: ContainerRef, documents_of: Callable[[str], Iterable[Document]]
) -> Document | None:
    """The runtime named by `runtime:` (a ServingRuntime of the predictor's namespace first, then a
    ClusterServingRuntime), else the only one of the input that auto-selects the predictor's model format."""
    name = container.data.get("runtime")
    namespace = template.document.ref.namespace
    local_runtimes = [d for d in documents_of("ServingRuntime") if d.ref.namespace == namespace]
    cluster_runtimes = list(documents_of("ClusterServingRuntime"))
    if isinstance(name, str) and name:
        found = [d for d in (*local_runtimes, *cluster_runtimes) if d.metadata.get("name") == name]
        return found[0] if found else None
    model_format = as_mapping(container.data.get("modelFormat")).get("name")
    if not isinstance(model_format, str):
        return None
    candidates = [
        d
        for d in (*local_runtimes, *cluster_runtimes)
        if any(
            f.get("autoSelect") is True and str(f.get("name", "")).lower() == model_format.lower()
            for f in mapping_items(as_mapping(d.data.get("spec")).get("supportedModelFormats"))
        )
    ]
    return candidates[0] if len(candidates) == 1 else None


def _runtime_fill(runtime: Document) -> KServeFill:
    """The runtime's serving container (`kserve-container`, else its first) resources, and whether it mounts a
    memory-backed /dev/shm from the runtime's volumes."""
    spec = as_mapping(runtime.data.get("spec"))
    containers = list(mapping_items(spec.get("containers")))
    main = next((c for c in containers if c.get("name") == "kserve-container"), containers[0] if containers else {})
    resources = as_mapping(main.get("resources"))
    requests = {str(k): v for k, v in as_mapping(resources.get("requests")).items()}
    limits = {str(k): v for k, v in as_mapping(resources.get("limits")).items()}
    memory = {
        str(v.get("name"))
        for v in mapping_items(spec.get("volumes"))
        if str(as_mapping(v.get("emptyDir")).get("medium", "")).lower() == "memory"
    }
    shm = any(
        str(m.get("mountPath", "")).rstrip("/") == _SHM_PATH and str(m.get("name")) in memory
        for m in mapping_items(main.get("volumeMounts"))
    )
    name = runtime.ref.name
    return KServeFill(f"{runtime.kind} '{name}'", requests, limits, shm, name or None)
