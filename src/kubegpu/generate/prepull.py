"""`gen prepull --from MANIFESTS`: a DaemonSet that pulls every GPU image onto every GPU node early.

Runs only on GPU nodes and tolerates what the GPU workloads tolerate (the usual mistake is a
pre-puller that never lands on tainted GPU nodes); each image gets a no-op init container with
tiny, Guaranteed resources, and a pause container keeps the pod (and its images) in place. Every container
meets the restricted Pod Security Standard: a no-op needs no privilege, whatever the image.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubegpu.errors import InputError
from kubegpu.generate.output import Generated, Note, OutFile, YamlDoc
from kubegpu.generate.workload import Workload, containers, is_gpu_pod
from kubegpu.manifests.podsecurity import restricted_context

PAUSE_IMAGE = "registry.k8s.io/pause:3.10"
TINY = {"cpu": "10m", "memory": "16Mi"}


@dataclass(frozen=True)
class PrepullOptions:
    """What `gen prepull` was asked for."""

    name: str = "gpu-image-prepull"
    namespace: str | None = None
    gpu_node_label: tuple[str, str] = ("nvidia.com/gpu.present", "true")
    noop_command: tuple[str, ...] = ("sh", "-c", "true")
    extra_tolerations: tuple[Mapping[str, Any], ...] = field(
        default_factory=lambda: ({"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},)
    )


def _container_name(image: str, used: set[str]) -> str:
    base = image.rsplit("/", 1)[-1].split("@", 1)[0].split(":", 1)[0]
    base = re.sub(r"[^a-z0-9-]", "-", base.lower()).strip("-")[:50] or "image"
    name, n = f"pull-{base}", 2
    while name in used:
        name, n = f"pull-{base}-{n}", n + 1
    used.add(name)
    return name


def _key(toleration: Mapping[str, Any]) -> tuple[str, ...]:
    return tuple(str(toleration.get(k, "")) for k in ("key", "operator", "value", "effect"))


def collect(workloads: Sequence[Workload]) -> tuple[list[str], list[Mapping[str, Any]], list[str]]:
    """Images, tolerations and pull secrets of every GPU pod template, in first-seen order."""
    images: list[str] = []
    tolerations: dict[tuple[str, ...], Mapping[str, Any]] = {}
    secrets: list[str] = []
    for workload in workloads:
        for ref in workload.templates:
            spec = workload.pod_spec(ref)
            if not is_gpu_pod(spec):
                continue
            for container in containers(spec, init=True) + containers(spec):
                image = container.get("image")
                if isinstance(image, str) and image and image not in images:
                    images.append(image)
            for tol in spec.get("tolerations") or ():
                if isinstance(tol, Mapping):
                    plain = {k: v for k, v in tol.items() if k != "tolerationSeconds"}
                    tolerations.setdefault(_key(plain), plain)
            for secret in spec.get("imagePullSecrets") or ():
                name = (secret or {}).get("name")
                if name and name not in secrets:
                    secrets.append(str(name))
    return images, list(tolerations.values()), secrets


def generate(workloads: Sequence[Workload], options: PrepullOptions) -> Generated:
    images, tolerations, secrets = collect(workloads)
    if not images:
        raise InputError("no GPU workload (a container requesting <vendor>/gpu) in the manifests")
    seen = {_key(t) for t in tolerations}
    tolerations.extend(dict(t) for t in options.extra_tolerations if _key(t) not in seen)
    namespaces = {w.namespace or "default" for w in workloads}
    namespace = options.namespace or (namespaces.pop() if len(namespaces) == 1 else "default")
    used: set[str] = set()
    init = [
        {
            "name": _container_name(image, used),
            "image": image,
            "imagePullPolicy": "IfNotPresent",
            "command": list(options.noop_command),
            "resources": {"requests": dict(TINY), "limits": dict(TINY)},
            "securityContext": restricted_context(),
        }
        for image in images
    ]
    labels = {"app.kubernetes.io/name": options.name}
    key, value = options.gpu_node_label
    pod_spec: dict[str, Any] = {
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": [{"key": key, "operator": "In", "values": [value]}]}]
                }
            }
        },
        "tolerations": tolerations,
        "initContainers": init,
        "containers": [
            {
                "name": "pause",
                "image": PAUSE_IMAGE,
                "imagePullPolicy": "IfNotPresent",
                "resources": {"requests": dict(TINY), "limits": dict(TINY)},
                "securityContext": restricted_context(),
            }
        ],
        "automountServiceAccountToken": False,
        "terminationGracePeriodSeconds": 0,
    }
    if secrets:
        pod_spec["imagePullSecrets"] = [{"name": s} for s in secrets]
    ds = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": options.name, "namespace": namespace, "labels": dict(labels)},
        "spec": {
            "selector": {"matchLabels": dict(labels)},
            "template": {"metadata": {"labels": dict(labels)}, "spec": pod_spec},
        },
    }
    spec = ("spec", "template", "spec")
    notes = [
        Note(
            (*spec, "affinity"),
            f"GPU nodes only ({key}={value}, set by GPU Feature Discovery): a 10-30 GB image\n"
            "on a CPU node is wasted disk and bandwidth.",
        ),
        Note(
            (*spec, "tolerations"),
            "Every toleration the GPU workloads carry, plus the usual GPU taint: GPU nodes\n"
            "are tainted, and a pre-puller that does not tolerate the taint never runs there.",
        ),
        Note(
            (*spec, "initContainers"),
            f"One per image ({len(images)}): the kubelet pulls it, runs a no-op and moves on.\n"
            "The command needs a shell in the image; for distroless images pass --noop.",
        ),
        Note(
            (*spec, "containers", 0),
            "pause keeps the pod, so the images count as in use and image GC keeps them.",
        ),
        Note(
            (*spec, "initContainers", 0, "resources"),
            "10m CPU, 16Mi: requests = limits (Guaranteed) and small enough to fit beside\na node full of GPU pods.",
        ),
        Note(
            (*spec, "initContainers", 0, "securityContext"),
            "The restricted Pod Security Standard: the no-op runs as an unprivileged user\n"
            "(65534) with no capabilities, whatever user the image names.",
        ),
    ]
    if secrets:
        notes.append(
            Note(
                (*spec, "imagePullSecrets"),
                f"The workloads' pull secrets; they must exist in namespace {namespace}.",
            )
        )
    header = (
        f"Pre-pulls {len(images)} GPU image(s) from {len(workloads)} workload(s) onto every GPU node.",
        "Re-run after changing image tags; the DaemonSet rolls and pulls the new ones.",
    )
    return Generated((OutFile("prepull.yaml", (YamlDoc(ds, header=header, notes=tuple(notes)),)),))
