"""Pod templates of operators' custom resources, and a generic search for pod specs in any other kind.

Each mapping rebuilds the pod the operator creates from the custom resource's own fields; it names the
repository, file and commit it follows. Kinds without a mapping are searched generically (`generic_templates`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from enum import StrEnum
from typing import Any

from kubegpu.manifests.document import Document, FieldPath, as_mapping, get_path
from kubegpu.manifests.workloads import ContainerRef, PodTemplate, containers_of, int_field, pod_templates, template_at

_DEFAULT_GPU = "nvidia.com/gpu"

# Kinds whose pods we rebuild from operator-specific fields (the pod spec is synthesised, so fixes that edit
# pod-spec paths do not apply to them).
SYNTHESISED_KINDS = frozenset({"VLLMRuntime", "NIMService", "NIMCache", "DynamoGraphDeployment"})
# Kinds mapped here whose templates are real PodTemplateSpecs at real paths.
MAPPED_KINDS = frozenset({*SYNTHESISED_KINDS, "HyperPodPyTorchJob"})

# Kinds kubegpu.manifests.workloads reads by name (Kubernetes, batch, Kubeflow, Ray, KServe, Argo, ...).
BUILT_IN_WORKLOAD_KINDS = frozenset(
    {
        "Pod",
        "PodTemplate",
        "Deployment",
        "StatefulSet",
        "ReplicaSet",
        "ReplicationController",
        "DaemonSet",
        "Job",
        "CronJob",
        "JobSet",
        "TrainingRuntime",
        "ClusterTrainingRuntime",
        "TrainJob",
        "LeaderWorkerSet",
        "PyTorchJob",
        "JAXJob",
        "TFJob",
        "MPIJob",
        "XGBoostJob",
        "PaddleJob",
        "MXJob",
        "RayCluster",
        "RayJob",
        "RayService",
        "InferenceService",
        "LLMInferenceService",
        "Workflow",
        "WorkflowTemplate",
        "ClusterWorkflowTemplate",
        "CronWorkflow",
        "AppWrapper",
    }
)
# API groups of Kubernetes itself and of well-known add-ons whose other kinds never hold pods.
_NO_POD_GROUPS = frozenset(
    {
        "",
        "v1",
        "apps",
        "batch",
        "rbac.authorization.k8s.io",
        "networking.k8s.io",
        "storage.k8s.io",
        "policy",
        "autoscaling",
        "apiextensions.k8s.io",
        "admissionregistration.k8s.io",
        "scheduling.k8s.io",
        "coordination.k8s.io",
        "discovery.k8s.io",
        "node.k8s.io",
        "certificates.k8s.io",
        "resource.k8s.io",
        "flowcontrol.apiserver.k8s.io",
        "kubelet.config.k8s.io",
        "kubescheduler.config.k8s.io",
        "kueue.x-k8s.io",
        "scheduling.volcano.sh",
        "scheduling.x-k8s.io",
        "scheduling.sigs.k8s.io",
        "scheduling.run.ai",
        "keda.sh",
        "monitoring.coreos.com",
        "cert-manager.io",
        "gateway.networking.k8s.io",
        "nvidia.com",
        "nfd.k8s-sigs.io",
    }
)
# Pod-less kinds of groups that also hold workloads.
_NO_POD_KINDS = frozenset(
    {
        "ServingRuntime",
        "ClusterServingRuntime",
        "InferenceGraph",
        "TrainedModel",
        "ClusterPolicy",
        "NVIDIADriver",
        "ScaledObject",
        "HorizontalPodAutoscaler",
        "PodGroup",
        "Queue",
        "ClusterQueue",
        "LocalQueue",
        "ResourceFlavor",
    }
)
_MAX_DEPTH = 16


class Coverage(StrEnum):
    """How `lint` read an object: by a known mapping, generically, not at all, or it holds no pods."""

    KNOWN = "known mapping"
    GENERIC = "read generically"
    NOT_CHECKED = "not checked"
    NO_PODS = "holds no pods"


def coverage(doc: Document) -> Coverage:
    """How this object's pods were found (the lint summary counts objects per class)."""
    group = doc.api_version.split("/")[0] if "/" in doc.api_version else ""
    if (
        doc.kind in BUILT_IN_WORKLOAD_KINDS
        or doc.kind in MAPPED_KINDS
        or (doc.kind == "Service" and group == "serving.knative.dev")
    ):
        return Coverage.KNOWN
    if any(True for _ in pod_templates(doc)):
        return Coverage.GENERIC
    if group in _NO_POD_GROUPS or doc.kind in _NO_POD_KINDS or doc.kind.endswith("List"):
        return Coverage.NO_PODS
    return Coverage.NOT_CHECKED


def generic_note(doc: Document) -> str:
    """The words a finding on a generically read object carries."""
    return f"{doc.kind} has no known mapping: its pod spec was found by a generic search"


def custom_templates(doc: Document) -> Iterator[PodTemplate]:
    """The pod templates of a kind kubegpu.manifests.workloads does not know by name."""
    kind = doc.kind
    if kind == "VLLMRuntime":
        yield from _vllm_runtime(doc)
    elif kind == "NIMService":
        yield from _nim_service(doc)
    elif kind == "NIMCache":
        yield from _nim_cache(doc)
    elif kind == "DynamoGraphDeployment":
        yield from _dynamo_graph(doc)
    elif kind == "HyperPodPyTorchJob":
        yield from _hyperpod_pytorch_job(doc)
    else:
        yield from generic_templates(doc)


# --- vLLM production-stack -------------------------------------------------------------------------------------
# vllm-project/production-stack operator/api/v1alpha1/vllmruntime_types.go @ 18f0b20625e370e5da90d31833c9170f85aebb51
# and operator/internal/controller/vllmruntime_controller.go @ 0f1e82954972d01e57f4c7293bec6c39b517eb79
# (deploymentForVLLMRuntime, buildSidecarContainer): one Deployment of spec.deploymentConfig.replicas pods; the
# container "vllm" gets cpu/memory/gpu as requests = limits, image registry + "/" + name, pullPolicy default
# IfNotPresent; an enabled sidecar gets cpu 0.5 / memory 128Mi / 0 GPUs by default; storageConfig mounts a PVC.


def _vllm_resources(config: Mapping[str, Any], sidecar: bool) -> dict[str, Any]:
    gpu_type = str(config.get("gpuType") or _DEFAULT_GPU)
    values: dict[str, Any] = {}
    cpu, memory, gpu = config.get("cpu"), config.get("memory"), config.get("gpu")
    values["cpu"] = cpu if cpu not in (None, "") else ("0.5" if sidecar else None)
    values["memory"] = memory if memory not in (None, "") else ("128Mi" if sidecar else None)
    values[gpu_type] = gpu if gpu not in (None, "") else ("0" if sidecar else None)
    kept = {k: v for k, v in values.items() if v is not None}
    return {"requests": dict(kept), "limits": dict(kept)} if kept else {}


def _image(spec: Mapping[str, Any]) -> str | None:
    name = spec.get("name")
    if not name:
        return None
    registry = spec.get("registry")
    return f"{registry}/{name}" if registry else str(name)


def _vllm_runtime(doc: Document) -> Iterator[PodTemplate]:
    base: FieldPath = ("spec", "deploymentConfig")
    config = as_mapping(get_path(doc.data, base))
    spec = as_mapping(doc.data.get("spec"))
    image = as_mapping(config.get("image"))
    main: dict[str, Any] = {
        "name": "vllm",
        "image": _image(image),
        "imagePullPolicy": image.get("pullPolicy") or "IfNotPresent",
        "command": ["/opt/venv/bin/vllm", "serve"],
        "args": [str(as_mapping(spec.get("model")).get("modelURL") or "")],
        "resources": _vllm_resources(as_mapping(config.get("resources")), sidecar=False),
    }
    volumes: list[dict[str, Any]] = []
    storage = as_mapping(spec.get("storageConfig"))
    if storage.get("enabled") is True:
        volume = str(storage.get("volumeName") or "pvc-storage")
        volumes.append({"name": volume, "persistentVolumeClaim": {"claimName": doc.ref.name}})
        main["volumeMounts"] = [{"name": volume, "mountPath": str(storage.get("mountPath") or "/data")}]
    env = as_mapping(spec.get("vllmConfig")).get("env")
    if isinstance(env, list):
        main["env"] = env
    refs = [ContainerRef(base, main, "container")]
    sidecar = as_mapping(config.get("sidecarConfig"))
    if sidecar.get("enabled") is True:
        side_image = as_mapping(sidecar.get("image"))
        refs.append(
            ContainerRef(
                (*base, "sidecarConfig"),
                {
                    "name": str(sidecar.get("name") or "sidecar"),
                    "image": _image(side_image),
                    "imagePullPolicy": side_image.get("pullPolicy") or "IfNotPresent",
                    "resources": _vllm_resources(as_mapping(sidecar.get("resources")), sidecar=True),
                },
                "container",
            )
        )
    pod = {"containers": [r.data for r in refs], "volumes": volumes, "tolerations": config.get("toleration") or []}
    yield PodTemplate(
        doc,
        base,
        pod,
        ("metadata",),
        doc.metadata,
        "",
        int_field(config.get("replicas"), 1),
        tuple(refs),
        (*base, "volumes"),
    )


# --- NVIDIA NIM operator ---------------------------------------------------------------------------------------
# NVIDIA/k8s-nim-operator api/apps/v1alpha1/nimservice_types.go @ f63f74d7ad22eaea7943cc640e545f4ccdbb8077:
# a Deployment of spec.replicas pods (an LWS of multiNode.parallelism.pipeline pods per replica when multiNode is
# set); the container "<name>-ctr" has image repository:tag, spec.resources as given plus one claim per
# spec.draResources entry, the standard env (NIM_CACHE_PATH=/model-store first), an emptyDir Medium Memory at
# /dev/shm sized by storage.sharedMemorySizeLimit, and the model store (NIMCache PVC, storage.pvc, hostPath or
# emptyDir) at /model-store; sidecarContainers run beside it. nimcache_types.go
# @ 0ce4f588e271ebb578f2d6ff87df27331d2703e1 and internal/controller (the caching Job): one pod running
# source.ngc.modelPuller (or dataStore/hf modelPuller) with requests = limits = spec.resources cpu, memory and
# nvidia.com/gpu: gpus.


def _nim_image(image: Mapping[str, Any]) -> str | None:
    repository, tag = image.get("repository"), image.get("tag")
    return f"{repository}:{tag}" if repository and tag else (str(repository) if repository else None)


def _nim_service(doc: Document) -> Iterator[PodTemplate]:
    spec = as_mapping(doc.data.get("spec"))
    image = as_mapping(spec.get("image"))
    resources = dict(as_mapping(spec.get("resources")))
    dra = spec.get("draResources")
    if isinstance(dra, list) and dra:
        resources["claims"] = [{"name": f"dra-{i}"} for i in range(len(dra))]
    env = [{"name": "NIM_CACHE_PATH", "value": "/model-store"}, *(spec.get("env") or [])]
    container: dict[str, Any] = {
        "name": f"{doc.ref.name}-ctr",
        "image": _nim_image(image),
        "imagePullPolicy": image.get("pullPolicy"),
        "command": spec.get("command"),
        "args": spec.get("args"),
        "env": env,
        "resources": resources,
        "volumeMounts": [
            {"name": "model-store", "mountPath": "/model-store"},
            {"name": "dshm", "mountPath": "/dev/shm"},
        ],
    }
    container = {k: v for k, v in container.items() if v is not None}
    storage = as_mapping(spec.get("storage"))
    read_only = storage.get("readOnly") is True
    if storage.get("hostPath"):
        store: dict[str, Any] = {"name": "model-store", "hostPath": {"path": str(storage.get("hostPath"))}}
    elif isinstance(storage.get("emptyDir"), Mapping):
        store = {"name": "model-store", "emptyDir": dict(as_mapping(storage.get("emptyDir")))}
    else:
        claim = (
            as_mapping(storage.get("pvc")).get("name")
            or as_mapping(storage.get("nimCache")).get("name")
            or f"{doc.ref.name}-pvc"
        )
        store = {"name": "model-store", "persistentVolumeClaim": {"claimName": str(claim), "readOnly": read_only}}
    shm: dict[str, Any] = {"medium": "Memory"}
    if storage.get("sharedMemorySizeLimit") is not None:
        shm["sizeLimit"] = storage["sharedMemorySizeLimit"]
    refs = [ContainerRef(("spec",), container, "container")]
    sidecars = spec.get("sidecarContainers")
    for i, raw in enumerate(sidecars if isinstance(sidecars, list) else []):
        side = as_mapping(raw)
        refs.append(
            ContainerRef(
                ("spec", "sidecarContainers", i),
                {
                    "name": side.get("name"),
                    "image": _nim_image(as_mapping(side.get("image"))),
                    "imagePullPolicy": as_mapping(side.get("image")).get("pullPolicy"),
                    "command": side.get("command"),
                    "args": side.get("args"),
                    "env": side.get("env"),
                },
                "container",
            )
        )
    pod = {
        "containers": [r.data for r in refs],
        "volumes": [{"name": "dshm", "emptyDir": shm}, store],
        "nodeSelector": spec.get("nodeSelector") or {},
        "tolerations": spec.get("tolerations") or [],
        "affinity": spec.get("affinity") or {},
        "schedulerName": spec.get("schedulerName") or "default-scheduler",
    }
    scale = as_mapping(spec.get("scale"))
    replicas = int_field(spec.get("replicas"), 1)
    if scale.get("enabled") is True:
        replicas = int_field(as_mapping(scale.get("hpa")).get("minReplicas"), 1)
    nodes = int_field(as_mapping(as_mapping(spec.get("multiNode")).get("parallelism")).get("pipeline"), 1) or 1
    metadata = {"labels": spec.get("labels") or {}, "annotations": spec.get("annotations") or {}}
    yield PodTemplate(
        doc,
        ("spec",),
        pod,
        ("spec",),
        metadata,
        "",
        None if replicas is None else replicas * nodes,
        tuple(refs),
        ("spec", "storage"),
    )


def _nim_cache(doc: Document) -> Iterator[PodTemplate]:
    spec = as_mapping(doc.data.get("spec"))
    source = as_mapping(spec.get("source"))
    puller = next(
        (
            as_mapping(source.get(key)).get("modelPuller")
            for key in ("ngc", "dataStore", "hf")
            if as_mapping(source.get(key)).get("modelPuller")
        ),
        None,
    )
    resources = as_mapping(spec.get("resources"))
    values = {
        "cpu": resources.get("cpu"),
        "memory": resources.get("memory"),
        _DEFAULT_GPU: resources.get("gpus") if resources.get("gpus") is not None else 0,
    }
    kept = {k: v for k, v in values.items() if v not in (None, "")}
    container = {
        "name": "nim-cache-ctr",
        "image": puller,
        "resources": {"requests": kept, "limits": dict(kept)},
        "env": [{"name": "NIM_CACHE_PATH", "value": "/model-store"}],
        "volumeMounts": [{"name": "nim-cache-volume", "mountPath": "/model-store"}],
    }
    pod = {
        "containers": [container],
        "nodeSelector": spec.get("gpuSelectors") or {},
        "tolerations": spec.get("tolerations") or [],
        "volumes": [{"name": "nim-cache-volume", "persistentVolumeClaim": {"claimName": f"{doc.ref.name}-pvc"}}],
    }
    yield PodTemplate(
        doc,
        ("spec",),
        pod,
        None,
        {},
        "model caching job",
        1,
        (ContainerRef(("spec", "resources"), container, "container"),),
        ("spec", "storage"),
    )


# --- NVIDIA Dynamo ---------------------------------------------------------------------------------------------
# ai-dynamo/dynamo deploy/cloud/operator/api/v1alpha1/dynamocomponentdeployment_types.go
# @ 020073063688f0288505ac584654b1802822cdb0 (DynamoComponentDeploymentSharedSpec: resources, replicas,
# extraPodSpec with mainContainer, sharedMemory, multinode.nodeCount) and api/dynamo/common (ResourceItem cpu,
# memory, gpu): spec.services maps each service name to one of these. Pods per service = replicas x nodeCount;
# /dev/shm is a memory-backed emptyDir of sharedMemory.size (operator default 8Gi) unless sharedMemory.disabled.


def _dynamo_items(item: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in ("cpu", "memory"):
        if item.get(key) not in (None, ""):
            out[key] = item[key]
    if item.get("gpu") not in (None, ""):
        out[str(item.get("gpuType") or _DEFAULT_GPU)] = item["gpu"]
    custom = item.get("custom")
    if isinstance(custom, Mapping):
        out.update({str(k): v for k, v in custom.items()})
    return out


def _dynamo_graph(doc: Document) -> Iterator[PodTemplate]:
    services = as_mapping(get_path(doc.data, ("spec", "services")))
    for name, raw in services.items():
        service = as_mapping(raw)
        base: FieldPath = ("spec", "services", str(name))
        extra = as_mapping(service.get("extraPodSpec"))
        main = dict(as_mapping(extra.get("mainContainer")))
        resources = as_mapping(service.get("resources"))
        requests = _dynamo_items(as_mapping(resources.get("requests")))
        limits = _dynamo_items(as_mapping(resources.get("limits")))
        if requests or limits:
            main["resources"] = {"requests": requests, "limits": limits}
        main.setdefault("name", "main")
        mounts = list(main.get("volumeMounts") or [])
        pod: dict[str, Any] = {k: v for k, v in extra.items() if k != "mainContainer"}
        volumes = list(pod.get("volumes") or [])
        shm = as_mapping(service.get("sharedMemory"))
        if shm.get("disabled") is not True:
            volumes.append(
                {"name": "shared-memory", "emptyDir": {"medium": "Memory", "sizeLimit": shm.get("size") or "8Gi"}}
            )
            mounts.append({"name": "shared-memory", "mountPath": "/dev/shm"})
        main["volumeMounts"] = mounts
        pod["volumes"] = volumes
        refs = [
            ContainerRef(
                (*base, "extraPodSpec", "mainContainer") if extra.get("mainContainer") else base, main, "container"
            )
        ]
        refs.extend(containers_of(extra, (*base, "extraPodSpec")))
        pod["containers"] = [main, *(r.data for r in refs[1:] if r.kind == "container")]
        replicas = int_field(service.get("replicas"), 1)
        nodes = int_field(as_mapping(service.get("multinode")).get("nodeCount"), 1) or 1
        metadata = as_mapping(service.get("extraPodMetadata"))
        yield PodTemplate(
            doc,
            base,
            pod,
            (*base, "extraPodMetadata"),
            metadata,
            str(name),
            None if replicas is None else replicas * nodes,
            tuple(refs),
            (*base, "extraPodSpec", "volumes"),
        )


# --- SageMaker HyperPod ----------------------------------------------------------------------------------------
# HyperPodPyTorchJob (sagemaker.amazonaws.com/v1) as documented in aws/sagemaker-hyperpod-cli
# (doc/sdk/training/hyperpod_pytorch_job.rst and its config hyperpod_pytorch_job_unified_config) and AWS's
# task-governance sample: spec.replicaSpecs is a list of {name, replicas, spares, template}, template a
# PodTemplateSpec; spec.nprocPerNode processes per pod.


def _hyperpod_pytorch_job(doc: Document) -> Iterator[PodTemplate]:
    specs = get_path(doc.data, ("spec", "replicaSpecs"))
    if not isinstance(specs, list):
        return
    for i, raw in enumerate(specs):
        replica = as_mapping(raw)
        role, replicas = str(replica.get("name") or f"replicas-{i}"), int_field(replica.get("replicas"), 1)
        yield from template_at(doc, ("spec", "replicaSpecs", i, "template"), role, replicas)


# --- any other kind --------------------------------------------------------------------------------------------


def _is_pod_spec(value: Mapping[str, Any]) -> bool:
    items = value.get("containers")
    return (
        isinstance(items, list)
        and bool(items)
        and all(isinstance(c, Mapping) and ("image" in c or "name" in c) for c in items)
    )


def generic_templates(doc: Document) -> Iterator[PodTemplate]:
    """Every pod spec (a mapping with a `containers` list) under spec at any depth, outermost first.

    A pod spec under a `spec` key whose parent holds `metadata` is a PodTemplateSpec (its labels apply); the
    count of pods is a sibling `replicas` of the template (or of the pod spec), else unknown.
    """
    spec = doc.data.get("spec")
    if isinstance(spec, Mapping):
        yield from _walk(doc, spec, ("spec",), doc.data, "", 0)


def _walk(
    doc: Document, node: Mapping[str, Any], path: FieldPath, parent: Mapping[str, Any], role: str, depth: int
) -> Iterator[PodTemplate]:
    if depth > _MAX_DEPTH:
        return
    if _is_pod_spec(node):
        yield _generic_template(doc, node, path, parent, role)
        return
    for key, value in node.items():
        if key in ("status", "metadata"):
            continue
        child_role = role if key in ("spec", "template", "podSpec", "podTemplate") else str(key)
        if isinstance(value, Mapping):
            yield from _walk(doc, value, (*path, str(key)), node, child_role, depth + 1)
        elif isinstance(value, list):
            for i, item in enumerate(value):
                if isinstance(item, Mapping):
                    name = item.get("name") or item.get("groupName") or f"{key}-{i}"
                    yield from _walk(doc, item, (*path, str(key), i), node, str(name), depth + 1)


def _generic_template(
    doc: Document, pod: Mapping[str, Any], path: FieldPath, parent: Mapping[str, Any], role: str
) -> PodTemplate:
    metadata_path: FieldPath | None = None
    metadata: Mapping[str, Any] = {}
    if path and path[-1] == "spec" and isinstance(parent.get("metadata"), Mapping):
        metadata_path = (*path[:-1], "metadata")
        metadata = as_mapping(parent.get("metadata"))
    owner = as_mapping(get_path(doc.data, path[:-2])) if len(path) > 2 and path[-1] == "spec" else parent
    holder = next((m for m in (owner, parent, pod) if "replicas" in m), {})
    replicas = int_field(holder.get("replicas"), None)
    return PodTemplate(doc, path, pod, metadata_path, metadata, role, replicas, containers_of(pod, path))
