"""NVIDIA NIM operator: NIMService (a Deployment, or a LeaderWorkerSet per replica when multi-node) and NIMCache
(the Job that caches a model), whose pods the operator builds from its own fields.

Follows NVIDIA/k8s-nim-operator api/apps/v1alpha1/nimservice_types.go @ f63f74d7ad22eaea7943cc640e545f4ccdbb8077:
a Deployment of spec.replicas pods (an LWS of multiNode.parallelism.pipeline pods per replica when multiNode is
set); the container "<name>-ctr" has image repository:tag, spec.resources as given plus one claim per
spec.draResources entry, the standard env (NIM_CACHE_PATH=/model-store first), an emptyDir Medium Memory at
/dev/shm sized by storage.sharedMemorySizeLimit, and the model store (NIMCache PVC, storage.pvc, hostPath or
emptyDir) at /model-store; sidecarContainers run beside it. nimcache_types.go
@ 0ce4f588e271ebb578f2d6ff87df27331d2703e1 and internal/controller (the caching Job): one pod running
source.ngc.modelPuller (or dataStore/hf modelPuller) with requests = limits = spec.resources cpu, memory and
nvidia.com/gpu: gpus.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from kubegpu.manifests.document import Document, as_mapping, get_path
from kubegpu.manifests.template import ContainerRef, PodTemplate, int_field
from kubegpu.workloads.kind import GangShape, WorkloadKind, always
from kubegpu.workloads.vllm import DEFAULT_GPU


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
        DEFAULT_GPU: resources.get("gpus") if resources.get("gpus") is not None else 0,
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


def _service_gang(doc: Document, templates: tuple[PodTemplate, ...], gpu: tuple[PodTemplate, ...]) -> GangShape | None:
    """multiNode: a LeaderWorkerSet of parallelism.pipeline pods per model replica."""
    nodes = int_field(get_path(doc.data, ("spec", "multiNode", "parallelism", "pipeline")), 1) or 1
    if nodes < 2:
        return None
    return GangShape(
        doc,
        templates,
        gpu,
        nodes,
        nodes,
        f"each model replica's {nodes} pods (the LeaderWorkerSet the NIM operator creates)",
    )


NIM_SERVICE = WorkloadKind(
    kinds=frozenset({"NIMService"}),
    templates=_nim_service,
    gang=_service_gang,
    synthesised=always,
    operator_pods=True,
)
NIM_CACHE = WorkloadKind(kinds=frozenset({"NIMCache"}), templates=_nim_cache, synthesised=always, operator_pods=True)
