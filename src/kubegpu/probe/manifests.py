"""Manifests that run `kubegpu probe` on every GPU node (DaemonSet) or inside a GPU pod (Job).

Kubernetes v1.35 apps/v1 DaemonSet and batch/v1 Job; GPU node labels as the NVIDIA GPU feature
discovery (nvidia.com/gpu.present) and Node Feature Discovery (feature.node.kubernetes.io/
pci-<class>_<vendor>.present by default, pci-<vendor>.present as the GPU operators configure it)
publish them; tolerations for the nvidia.com/gpu and amd.com/gpu taints GPU pools carry.
"""

from __future__ import annotations

from typing import Any

from kubegpu import DEFAULT_IMAGE
from kubegpu.errors import InputError
from kubegpu.manifests.podsecurity import read_only_mount, restricted_context
from kubegpu.units.quantity import parse_quantity

APP_LABEL = "app.kubernetes.io/name"
NAME = "kubegpu-probe"

#: Node labels that mark a GPU node; any one of them is enough (one node selector term each).
GPU_NODE_LABELS = (
    "nvidia.com/gpu.present",
    "feature.node.kubernetes.io/pci-10de.present",
    "feature.node.kubernetes.io/pci-0302_10de.present",
    "feature.node.kubernetes.io/pci-0300_10de.present",
    "feature.node.kubernetes.io/pci-1002.present",
    "feature.node.kubernetes.io/pci-1200_1002.present",
    "feature.node.kubernetes.io/pci-0380_1002.present",
)

GPU_TOLERATIONS = (
    {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "amd.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
)


def _node_name_env() -> list[dict[str, Any]]:
    return [{"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}]


def probe_daemonset(
    image: str = DEFAULT_IMAGE, namespace: str = "kubegpu", pause_image: str = "registry.k8s.io/pause:3.10"
) -> dict[str, Any]:
    """A DaemonSet whose init container prints each GPU node's profile (JSON) to its log.

    Collect with `kubectl logs -n NS -l app.kubernetes.io/name=kubegpu-probe -c probe --prefix`.
    The main container only pauses, so the pod stays and is not restarted in a loop.
    """
    _check_image(image)
    labels = {APP_LABEL: NAME, "app.kubernetes.io/component": "node-probe"}
    probe = {
        "name": "probe",
        "image": image,
        "command": [
            "kubegpu",
            "probe",
            "--sysfs-root",
            "/host/sys",
            "--name",
            "$(NODE_NAME)",
            "-o",
            "json",
        ],
        "env": _node_name_env(),
        "resources": {
            "requests": {"cpu": "10m", "memory": "32Mi"},
            "limits": {"cpu": "200m", "memory": "128Mi"},
        },
        "securityContext": restricted_context(),
        # the one thing beyond the restricted profile: the node's /sys, read-only (submounts included)
        "volumeMounts": [read_only_mount("host-sys", "/host/sys", host=True)],
    }
    pause = {
        "name": "pause",
        "image": pause_image,
        "resources": {
            "requests": {"cpu": "1m", "memory": "8Mi"},
            "limits": {"cpu": "10m", "memory": "16Mi"},
        },
        "securityContext": restricted_context(),
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": NAME, "namespace": namespace, "labels": dict(labels)},
        "spec": {
            "selector": {"matchLabels": {APP_LABEL: NAME}},
            "template": {
                "metadata": {"labels": dict(labels)},
                "spec": {
                    "affinity": {
                        "nodeAffinity": {
                            "requiredDuringSchedulingIgnoredDuringExecution": {
                                "nodeSelectorTerms": [
                                    {"matchExpressions": [{"key": key, "operator": "In", "values": ["true"]}]}
                                    for key in GPU_NODE_LABELS
                                ]
                            }
                        }
                    },
                    "tolerations": [dict(t) for t in GPU_TOLERATIONS],
                    "automountServiceAccountToken": False,
                    "initContainers": [probe],
                    "containers": [pause],
                    "volumes": [{"name": "host-sys", "hostPath": {"path": "/sys", "type": "Directory"}}],
                },
            },
        },
    }


def probe_job(
    image: str = DEFAULT_IMAGE,
    namespace: str = "kubegpu",
    gpus: int = 1,
    cpus: str = "4",
    memory: str = "16Gi",
    shm: str = "1Gi",
    resource_name: str = "nvidia.com/gpu",
) -> dict[str, Any]:
    """A Job whose pod asks for GPUs like a training pod (Guaranteed QoS, integer CPUs, an
    in-memory /dev/shm) and runs `kubegpu probe --check` in it; exit 0/1/2 = pass/warn/fail."""
    _check_image(image)
    if gpus < 1:
        raise InputError(f"--gpus must be at least 1, not {gpus}")
    for label, value in (("--cpus", cpus), ("--memory", memory), ("--shm", shm)):
        try:
            parse_quantity(value)
        except InputError as err:
            raise InputError(f"{label}: {err.message}") from err
    limits = {"cpu": cpus, "memory": memory, resource_name: str(gpus)}
    container = {
        "name": "probe",
        "image": image,
        "command": [
            "kubegpu",
            "probe",
            "--check",
            "--min-shm",
            shm,
            "--name",
            "$(NODE_NAME)",
            "-o",
            "json",
        ],
        "env": _node_name_env(),
        "resources": {"requests": dict(limits), "limits": dict(limits)},
        "securityContext": restricted_context(),
        "volumeMounts": [{"name": "dshm", "mountPath": "/dev/shm"}],
    }
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": f"{NAME}-check", "namespace": namespace, "labels": {APP_LABEL: NAME}},
        "spec": {
            "backoffLimit": 0,
            "ttlSecondsAfterFinished": 3600,
            "template": {
                "metadata": {"labels": {APP_LABEL: NAME, "app.kubernetes.io/component": "pod-check"}},
                "spec": {
                    "restartPolicy": "Never",
                    "automountServiceAccountToken": False,
                    "tolerations": [dict(t) for t in GPU_TOLERATIONS],
                    "containers": [container],
                    "volumes": [{"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": shm}}],
                },
            },
        },
    }


def _check_image(image: str) -> None:
    if not image or any(ch.isspace() for ch in image):
        raise InputError(f"--image must be a container image reference, not {image!r}")
