"""API objects for defrag's tests, shaped as `kubectl get -o json` prints them."""

from __future__ import annotations

from typing import Any

from kubegpu.live.model import ClusterSnapshot
from kubegpu.live.snapshot import build_snapshot

PRODUCT = "nvidia.com/gpu.product"
RACK = "cloud.provider.com/topology-rack"
LISTED = ("PodDisruptionBudget", "PriorityClass", "PersistentVolumeClaim", "PersistentVolume")


def node(name: str, gpus: int = 8, cpu: str = "96", memory: str = "1024Gi", rack: str = "r1") -> dict[str, Any]:
    resources = {"cpu": cpu, "memory": memory, "pods": "110", "nvidia.com/gpu": str(gpus)}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {PRODUCT: "NVIDIA-H100-80GB-HBM3", RACK: rack}},
        "status": {
            "allocatable": resources,
            "capacity": resources,
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def pod(
    name: str,
    gpus: int,
    on: str | None,
    *,
    namespace: str = "ml",
    cpu: str = "8",
    memory: str = "64Gi",
    owner: str | None = "ReplicaSet",
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    priority: int | None = None,
    volumes: list[dict[str, Any]] | None = None,
    ready: bool = True,
) -> dict[str, Any]:
    """A pod of one container; running on `on` (Ready) or pending when `on` is None."""
    requests = {"cpu": cpu, "memory": memory}
    limits: dict[str, str] = {}
    if gpus:
        requests["nvidia.com/gpu"] = str(gpus)
        limits["nvidia.com/gpu"] = str(gpus)
    metadata: dict[str, Any] = {"name": name, "namespace": namespace, "uid": f"uid-{namespace}-{name}"}
    metadata["labels"] = {"app": name.rsplit("-", 1)[0], **(labels or {})}
    if annotations:
        metadata["annotations"] = annotations
    if owner:
        metadata["ownerReferences"] = [
            {"apiVersion": "apps/v1", "kind": owner, "name": f"{name}-owner", "uid": "u", "controller": True}
        ]
    spec: dict[str, Any] = {
        "containers": [
            {"name": "main", "image": "registry.example/train:1", "resources": {"requests": requests, "limits": limits}}
        ]
    }
    if on:
        spec["nodeName"] = on
    if priority is not None:
        spec["priority"] = priority
    if volumes:
        spec["volumes"] = volumes
    status: dict[str, Any] = {"phase": "Running" if on else "Pending"}
    if on:
        status["conditions"] = [{"type": "Ready", "status": "True" if ready else "False"}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec, "status": status}


def budget(
    name: str,
    app: str,
    *,
    min_available: int | str | None = None,
    max_unavailable: int | str | None = None,
    namespace: str = "ml",
    allowed: int | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {"selector": {"matchLabels": {"app": app}}}
    if min_available is not None:
        spec["minAvailable"] = min_available
    if max_unavailable is not None:
        spec["maxUnavailable"] = max_unavailable
    obj: dict[str, Any] = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": namespace, "generation": 1},
        "spec": spec,
    }
    if allowed is not None:
        obj["status"] = {
            "observedGeneration": 1,
            "disruptionsAllowed": allowed,
            "currentHealthy": 2,
            "desiredHealthy": 2 - allowed,
            "expectedPods": 2,
        }
    return obj


def snapshot(objects: list[dict[str, Any]], kubelet_configs: dict[str, Any] | None = None) -> ClusterSnapshot:
    return build_snapshot(((o, "<test>") for o in objects), kubelet_configs=kubelet_configs, listed=LISTED)


def guide(nodes: int = 8) -> list[dict[str, Any]]:
    """The GPU guide's example: `nodes` nodes of 8 GPUs, each running three 2-GPU pods (2 GPUs free on each),
    and an 8-GPU job waiting."""
    objects: list[dict[str, Any]] = []
    for i in range(nodes):
        objects.append(node(f"gpu-{i}", rack=f"r{i // 4}"))
        for j in range(3):
            objects.append(pod(f"infer-{i}-{j}", 2, f"gpu-{i}"))
    objects.append(pod("train-0", 8, None, owner="Job", cpu="32", memory="256Gi"))
    return objects
