"""vLLM production-stack: VLLMRuntime, one Deployment whose pods the operator builds from its own fields.

Follows vllm-project/production-stack operator/api/v1alpha1/vllmruntime_types.go @
18f0b20625e370e5da90d31833c9170f85aebb51 and operator/internal/controller/vllmruntime_controller.go @
0f1e82954972d01e57f4c7293bec6c39b517eb79 (deploymentForVLLMRuntime, buildSidecarContainer): one Deployment of
spec.deploymentConfig.replicas pods; the container "vllm" gets cpu/memory/gpu as requests = limits, image registry
+ "/" + name, pullPolicy default IfNotPresent; an enabled sidecar gets cpu 0.5 / memory 128Mi / 0 GPUs by default;
storageConfig mounts a PVC.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from kubegpu.manifests.document import Document, FieldPath, as_mapping, get_path
from kubegpu.manifests.template import ContainerRef, PodTemplate, int_field
from kubegpu.workloads.kind import WorkloadKind, always

DEFAULT_GPU = "nvidia.com/gpu"


def _vllm_resources(config: Mapping[str, Any], sidecar: bool) -> dict[str, Any]:
    gpu_type = str(config.get("gpuType") or DEFAULT_GPU)
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


VLLM_RUNTIME = WorkloadKind(
    kinds=frozenset({"VLLMRuntime"}), templates=_vllm_runtime, synthesised=always, operator_pods=True
)
