"""KServe: InferenceService (its components' pods, and what KServe fills into their containers) and
LLMInferenceService (its workloads' pods and LeaderWorkerSet groups).

Follows kserve v0.15: the InferenceService webhook fills a framework predictor's (and a custom predictor's first
container's) missing cpu and memory requests and limits from `inferenceservice-config`, shipped as cpu 1 and
memory 2Gi each (pkg/apis/serving/v1beta1/inference_service_defaults.go, setResourceRequirementDefaults). A
`model:` predictor gets no such defaults: its container is its ServingRuntime's container with the predictor's
fields merged over it, and the pod takes the runtime's volumes. Where the runtime is one KServe ships
(config/runtimes: cpu 1 and memory 2Gi requests and limits; the Hugging Face and vLLM servers mount a
memory-backed /dev/shm), its name or the model format picks it. A ServingRuntime or ClusterServingRuntime of the
input is bound to the predictor when the input is expanded (`workloads.expand`, as a TrainJob is bound to its
runtime) and wins over a shipped one; any other runtime is unknown. Every reader of a KServe pod (lint's pod
model and rules, `admit`, `gen`, `simulate`, the Python API) takes these facts from here, through the templates'
`fill`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from kubegpu.manifests.document import Document, FieldPath, as_mapping, get_path, is_mapping, mapping_items
from kubegpu.manifests.memo import recalled, remember
from kubegpu.manifests.template import ContainerFill, ContainerRef, PodTemplate, containers_of, int_field
from kubegpu.workloads import llmisvc
from kubegpu.workloads.kind import DocumentsOf, GangShape, WorkloadKind, always
from kubegpu.workloads.lws import EXCLUSIVE_TOPOLOGY

RUNTIME_KINDS = ("ServingRuntime", "ClusterServingRuntime")
_SHM_PATH = "/dev/shm"

# The shipped inferenceservice-config `resource` defaults (requests and limits alike).
DEFAULT_RESOURCES: Mapping[str, str] = {"cpu": "1", "memory": "2Gi"}
# KServe component fields whose value is a container (a model-server spec) rather than a pod spec.
_COMPONENTS = ("predictor", "transformer", "explainer")
# KServe framework fields of a component (each a container spec whose defaults KServe fills in).
_FRAMEWORKS = (
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
)
FRAMEWORK_KEYS = frozenset(_FRAMEWORKS)
_RUNTIME_KEYS = ("model", *_FRAMEWORKS, "alibi", "worker")
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


def kserve_fill(template: PodTemplate, container: ContainerRef) -> ContainerFill | None:
    """What KServe adds to `container`, a component container of an InferenceService (the templates' filler)."""
    if len(container.path) < 3 or container.path[0] != "spec":
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
            return ContainerFill(
                source, DEFAULT_RESOURCES, DEFAULT_RESOURCES, _SHIPPED_SHM[shipped], shipped, KSERVE_CONTAINER_NAME
            )
        what = f"ServingRuntime '{named}'" if named else "the ServingRuntime KServe selects"
        return ContainerFill(f"{what} (not in the input)", None, None, None, named or None, KSERVE_CONTAINER_NAME)
    if key in FRAMEWORK_KEYS:
        runtime, shm = SHIPPED_RUNTIMES.get(str(key), ("", False))
        where = f" and its {runtime} runtime" if runtime else ""
        return ContainerFill(
            f"its default resources (cpu 1, memory 2Gi){where}",
            DEFAULT_RESOURCES,
            DEFAULT_RESOURCES,
            shm,
            container_name=KSERVE_CONTAINER_NAME,
        )
    if container.path[2:] == ("containers", 0):
        return ContainerFill(
            "its default resources (cpu 1, memory 2Gi)",
            DEFAULT_RESOURCES,
            DEFAULT_RESOURCES,
            False,
            container_name=KSERVE_CONTAINER_NAME,
        )
    return None


def _bind(doc: Document, documents_of: DocumentsOf) -> None:
    """Bind each `model:` predictor of an InferenceService to its ServingRuntime when `documents_of(kind)` holds
    it: from then on KServe's fill for that container is the runtime's container resources and /dev/shm."""
    for template in _inference_service(doc):
        for container in template.containers:
            if container.path[2:3] == ("model",):
                runtime = find_runtime(template, container, documents_of)
                if runtime is not None:
                    remember(doc, ("kserve_runtime", container.path), runtime)


def bound_runtime(doc: Document, container: ContainerRef) -> Document | None:
    """The ServingRuntime bound to a `model:` predictor container (None: the input holds none for it)."""
    found: Document | None = recalled(doc, ("kserve_runtime", container.path))
    return found


def find_runtime(template: PodTemplate, container: ContainerRef, documents_of: DocumentsOf) -> Document | None:
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


def _runtime_fill(runtime: Document) -> ContainerFill:
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
    image = main.get("image")
    return ContainerFill(
        f"{runtime.kind} '{name}'",
        requests,
        limits,
        shm,
        name or None,
        KSERVE_CONTAINER_NAME,
        image if isinstance(image, str) and image else None,
    )


def _runtimes(doc: Document) -> Iterator[Document]:
    """The ServingRuntimes bound to the InferenceService's `model:` predictors."""
    for template in _inference_service(doc):
        for container in template.containers:
            if (served := bound_runtime(doc, container)) is not None:
                yield served


# --- InferenceService ------------------------------------------------------------------------------------------


def _inference_service(doc: Document) -> Iterator[PodTemplate]:
    """Each component is a pod: its own fields are the pod spec, and its model or framework key a container."""
    spec = as_mapping(doc.data.get("spec"))
    for component in _COMPONENTS:
        comp = spec.get(component)
        if not is_mapping(comp):
            continue
        path: FieldPath = ("spec", component)
        replicas = int_field(comp.get("minReplicas"), 1)
        containers = list(containers_of(comp, path))
        for key in _RUNTIME_KEYS:
            runtime = comp.get(key)
            if is_mapping(runtime) and key != "worker":
                containers.insert(0, ContainerRef((*path, key), runtime, "container"))
        yield PodTemplate(
            doc, path, comp, ("metadata",), doc.metadata, component, replicas, tuple(containers), filler=kserve_fill
        )
        worker = comp.get("workerSpec")
        if is_mapping(worker):
            wpath: FieldPath = (*path, "workerSpec")
            yield PodTemplate(
                doc,
                wpath,
                worker,
                ("metadata",),
                doc.metadata,
                f"{component}-worker",
                int_field(worker.get("pipelineParallelSize"), None),
                containers_of(worker, wpath),
                filler=kserve_fill,
            )


def _inference_service_gang(
    doc: Document, templates: tuple[PodTemplate, ...], gpu: tuple[PodTemplate, ...]
) -> GangShape | None:
    """A multi-node component (workerSpec): each model replica is a head and pipelineParallelSize - 1 workers."""
    workers = [t for t in templates if t.role.endswith("-worker")]
    if not workers:
        return None
    nodes = max(2, workers[0].replicas or 2)  # pipelineParallelSize = head + workers
    return GangShape(doc, templates, gpu, nodes, nodes, f"each model replica's {nodes} pods (head and workers)")


# --- LLMInferenceService ---------------------------------------------------------------------------------------


def llm_group_size(section: Mapping[str, object]) -> int | None:
    """Pods per LeaderWorkerSet group of an LLMInferenceService workload (its main spec or `prefill`).

    KServe pkg/apis/serving/v1alpha2/llm_inference_service_types_func.go @ aaac4e294dae2c7b1aa1886447793f3aa1c30912
    (ParallelismSpec.GetSize): data parallel (data or dataLocal set) gives max(data / dataLocal, 1), else
    pipeline; None when neither is set (the LeaderWorkerSet's default size, 1).
    """
    parallelism = as_mapping(section.get("parallelism"))
    data, local = parallelism.get("data"), parallelism.get("dataLocal")
    if (int_field(data, 0) or 0) > 0 or (int_field(local, 0) or 0) > 0:
        return max((int_field(data, 1) or 1) // max(int_field(local, 1) or 1, 1), 1)
    pipeline = int_field(parallelism.get("pipeline"), 0) or 0
    return pipeline if pipeline > 0 else None


def _llm_inference_service(doc: Document) -> Iterator[PodTemplate]:
    """`spec.template` (the leader, or the only pod) and `spec.worker` are pod specs; so are prefill's. With a worker,
    each replica is a LeaderWorkerSet group of llm_group_size pods: the leader and size - 1 workers (KServe
    pkg/controller/v1alpha2/llmisvc/workload_multi_node.go)."""
    spec = as_mapping(doc.data.get("spec"))
    replicas = int_field(spec.get("replicas"), 1)
    for base, role in (((), "main"), (("prefill",), "prefill")):
        section = as_mapping(get_path(spec, base)) if base else spec
        if base and not section:
            continue
        section_replicas = int_field(section.get("replicas"), replicas if not base else 1)
        size = llm_group_size(section) or 1
        for key in ("template", "worker"):
            pod = section.get(key)
            if is_mapping(pod):
                path: FieldPath = ("spec", *base, key)
                count = section_replicas
                if key == "worker" and count is not None:
                    count = count * max(size - 1, 1)
                yield PodTemplate(
                    doc,
                    path,
                    pod,
                    ("metadata",),
                    doc.metadata,
                    f"{role}-{key}" if base else key,
                    count,
                    containers_of(pod, path),
                    filler=llmisvc.fill,  # what its LLMInferenceServiceConfigs give its containers
                )


def _llm_gang(doc: Document, templates: tuple[PodTemplate, ...], gpu: tuple[PodTemplate, ...]) -> GangShape | None:
    """Each workload with a worker template (the main one, prefill) is a LeaderWorkerSet: a group of its size."""
    sizes: dict[str, int] = {}
    for template in gpu:
        if not template.role.endswith("worker"):
            continue
        section = as_mapping(get_path(doc.data, template.path[:-1]))
        sizes[template.role] = max(2, llm_group_size(section) or 2)  # a worker template means 2+ pods a group
    if not sizes:
        return None
    nodes = max(sizes.values())
    grouped = tuple(t for t in templates if t.path[:-1] in {u.path[:-1] for u in gpu if u.role in sizes})
    return GangShape(
        doc,
        grouped,
        tuple(t for t in gpu if t in grouped),
        nodes,
        nodes,
        f"each model replica's {nodes} pods (one LeaderWorkerSet group)",
    )


def _predictor_floor(data: Mapping[str, Any]) -> list[tuple[FieldPath, Any]]:
    """The predictor's minReplicas (KServe's default 1)."""
    predictor = as_mapping(data.get("spec")).get("predictor")
    return [(("spec", "predictor", "minReplicas"), predictor.get("minReplicas"))] if is_mapping(predictor) else []


INFERENCE_SERVICE = WorkloadKind(
    kinds=frozenset({"InferenceService"}),
    templates=_inference_service,
    gang=_inference_service_gang,
    needs_gang_admission=False,
    scheduler_settable=False,
    rebuilt=always,
    bind=_bind,
    runtimes=_runtimes,
    looked_up=frozenset(RUNTIME_KINDS),
    replica_floors=_predictor_floor,
)
LLM_INFERENCE_SERVICE = WorkloadKind(
    kinds=frozenset({"LLMInferenceService"}),
    templates=_llm_inference_service,
    gang=_llm_gang,
    bind=llmisvc.bind,
    runtimes=llmisvc.configs,
    looked_up=frozenset({llmisvc.CONFIG_KIND}),
    serving_group=True,
    # KServe copies an LLMInferenceService's leaderworkerset.sigs.k8s.io annotations to its LeaderWorkerSet.
    exclusive_topology=EXCLUSIVE_TOPOLOGY,
    placement_advice=f"annotate the LLMInferenceService with {EXCLUSIVE_TOPOLOGY[0]} on a rack/block label (KServe "
    "copies it to the LeaderWorkerSet), or use Kueue topology annotations on a Kueue-managed service or a "
    "required podAffinity on a rack/block label",
)
# A preset merged into the LLMInferenceServices that name it (or that KServe picks for their shape): checked merged.
LLM_INFERENCE_SERVICE_CONFIG = WorkloadKind(kinds=frozenset({llmisvc.CONFIG_KIND}), templates=llmisvc.no_pods)
