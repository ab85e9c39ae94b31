"""What must be made placeable: a waiting pod (with the rest of its pod group), a pending Kueue Workload's pods,
or a gang given on the command line (`--gang 4x8`: four pods of eight GPUs each).

A gang given by size takes the CPU and memory per GPU, the accelerator resource, the tolerations and the QoS of
the most common waiting GPU pod (else of the most common running one), unless flags give them.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import kubegpu.manifests.pod as podmodel
from kubegpu.defrag.gangs import group_name, pod_group
from kubegpu.defrag.priority import default_priority, pod_priority, priority_of_class
from kubegpu.errors import InputError
from kubegpu.live.fit import GPU_PRODUCT_LABEL
from kubegpu.live.model import ClusterSnapshot, PodInfo, PodShape, Toleration
from kubegpu.live.parse import parse_pod_spec, pod_shape, shape_of
from kubegpu.manifests.accelerators import DEFAULT_REGISTRY, AcceleratorRegistry
from kubegpu.manifests.pod import GUARANTEED, qos_class
from kubegpu.units.quantity import format_bytes

DEFAULT_RESOURCE = "nvidia.com/gpu"
MAX_GANG_PODS = 4096
MAX_GPUS_PER_POD = 64
_GANG = re.compile(r"^\s*(\d+)\s*[xX×]\s*(\d+)\s*$")


@dataclass(frozen=True)
class TargetPod:
    """One pod to place: its name, requests (canonical units), constraints and pod model."""

    name: str
    requests: Mapping[str, int]
    shape: PodShape
    spec: podmodel.Pod

    @property
    def gpus(self) -> int:
        return self.shape.gpus


@dataclass(frozen=True)
class Target:
    """The pods that must all find room, their priority, and how they were chosen."""

    what: str
    pods: tuple[TargetPod, ...]
    priority: int
    notes: tuple[str, ...] = ()

    @property
    def gpus(self) -> int:
        return sum(p.gpus for p in self.pods)


def quantity(resource: str, value: int) -> str:
    """A canonical amount as a Kubernetes quantity: millicores as `500m` or `4`, memory in binary units."""
    if resource == "cpu":
        return str(value // 1000) if value % 1000 == 0 else f"{value}m"
    if resource == "memory" or resource.startswith("hugepages-") or resource == "ephemeral-storage":
        return format_bytes(value)
    return str(value)


def parse_gang(text: str) -> tuple[int, int]:
    """`4x8` -> (4 pods, 8 GPUs each)."""
    match = _GANG.match(text)
    if not match:
        raise InputError(f"--gang {text!r}: write PODSxGPUS, e.g. 4x8 for four pods of eight GPUs each")
    pods, gpus = int(match.group(1)), int(match.group(2))
    if not 1 <= pods <= MAX_GANG_PODS or not 1 <= gpus <= MAX_GPUS_PER_POD:
        raise InputError(f"--gang {text!r}: 1 to {MAX_GANG_PODS} pods of 1 to {MAX_GPUS_PER_POD} GPUs each")
    return pods, gpus


def _target_pod(name: str, pod: PodInfo, registry: AcceleratorRegistry) -> TargetPod:
    shape = pod_shape(pod, registry)
    if shape is None or pod.spec is None:
        raise InputError(f"pod {pod.key} requests no accelerator: defrag makes room for GPU pods")
    return TargetPod(name, dict(pod.requests), shape, pod.spec)


def _synthetic(
    name: str,
    requests: Mapping[str, int],
    guaranteed: bool,
    tolerations: tuple[Toleration, ...],
    selector: Mapping[str, str],
    registry: AcceleratorRegistry,
) -> TargetPod:
    """A pod of one container with these requests (limits too when Guaranteed; an accelerator's always)."""
    amounts = {r: quantity(r, v) for r, v in requests.items() if v > 0}
    limits = amounts if guaranteed else {r: q for r, q in amounts.items() if registry.is_accelerator(r)}
    spec: dict[str, Any] = {"containers": [{"name": "main", "resources": {"requests": amounts, "limits": limits}}]}
    _, canonical, model = parse_pod_spec(spec, f"pod {name}", "<defrag>")
    shape = shape_of(canonical, selector, tolerations, (), registry)
    if shape is None:
        raise InputError(f"{name} requests no accelerator")
    return TargetPod(name, canonical, shape, model)


def _pending_group(snapshot: ClusterSnapshot, pod: PodInfo, key: str) -> list[PodInfo]:
    return sorted((p for p in snapshot.pods if p.pending and pod_group(p) == key), key=lambda p: p.key)


def target_for(snapshot: ClusterSnapshot, key: str, registry: AcceleratorRegistry = DEFAULT_REGISTRY) -> Target:
    """The waiting pod `namespace/name` with the other waiting pods of its pod group, or the pods of the pending
    Kueue Workload of that name."""
    namespace, slash, name = key.partition("/")
    if not slash or not namespace or not name:
        raise InputError(f"--for {key!r}: write NAMESPACE/NAME")
    classes = snapshot.priority_classes
    pod = next((p for p in snapshot.pods if p.namespace == namespace and p.name == name), None)
    if pod is not None:
        if not pod.pending:
            where = f"runs on {pod.node_name}" if pod.node_name else f"is {pod.phase}"
            raise InputError(f"pod {key} is not waiting: it {where}")
        group = pod_group(pod)
        waiting = _pending_group(snapshot, pod, group) if group else [pod]
        pods = tuple(_target_pod(p.key, p, registry) for p in waiting)
        priority = min(pod_priority(p, classes) for p in waiting)  # no pod above any of them is evicted
        if group and len(waiting) > 1:
            return Target(
                f"{group_name(group)} ({len(waiting)} waiting pods)",
                pods,
                priority,
                (f"pod {key} waits with the rest of its group: all {len(waiting)} waiting pods are placed together",),
            )
        return Target(f"pod {key}", pods, priority)
    workload = next((w for w in snapshot.kueue_workloads if w.namespace == namespace and w.name == name), None)
    if workload is None:
        raise InputError(f"--for {key}: no such pod or Kueue Workload in the snapshot")
    if not workload.pending:
        raise InputError(f"Kueue Workload {key} is not pending (admitted or finished)")
    members: list[TargetPod] = []
    for pod_set in workload.pod_sets:
        if pod_set.shape is None:
            continue
        shape = pod_set.shape
        requests = {"cpu": shape.cpu_millis, "memory": shape.memory_bytes, shape.gpu_resource: shape.gpus}
        for i in range(max(0, pod_set.count)):
            member = _synthetic(
                f"{key}/{pod_set.name}-{i}",
                requests,
                False,
                shape.tolerations,
                dict(shape.node_selector),
                registry,
            )
            members.append(TargetPod(member.name, member.requests, shape, member.spec))
    if not members:
        raise InputError(f"Kueue Workload {key} has no pod set that requests an accelerator")
    priority = workload.priority if workload.priority is not None else default_priority(classes)
    return Target(f"Kueue Workload {key} ({len(members)} pods)", tuple(members), priority)


def _typical(snapshot: ClusterSnapshot, registry: AcceleratorRegistry) -> tuple[PodInfo | None, str]:
    """The most common waiting GPU pod shape (else running), one pod of it, and which kind it was."""
    for waiting in (True, False):
        pods = [p for p in snapshot.pods if not p.terminal and p.pending == waiting and p.accelerators(registry)]
        if pods:
            counts = Counter(pod_shape(p, registry) for p in pods)
            shape = counts.most_common(1)[0][0]
            return next(p for p in pods if pod_shape(p, registry) == shape), "waiting" if waiting else "running"
    return None, ""


@dataclass(frozen=True)
class GangRequest:
    """`--gang` and the flags that shape its pods (None: taken from the typical GPU pod)."""

    pods: int
    gpus: int
    cpu_millis: int | None = None
    memory_bytes: int | None = None
    resource: str | None = None
    gpu_product: str | None = None
    priority_class: str | None = None


def gang_target(
    snapshot: ClusterSnapshot, request: GangRequest, registry: AcceleratorRegistry = DEFAULT_REGISTRY
) -> Target:
    """`request.pods` pods of `request.gpus` GPUs each, shaped like the typical GPU pod unless flags say."""
    typical, kind = _typical(snapshot, registry)
    notes: list[str] = []
    typical_shape = None if typical is None else pod_shape(typical, registry)
    resource = request.resource or (typical_shape.gpu_resource if typical_shape else DEFAULT_RESOURCE)
    cpu, memory = request.cpu_millis, request.memory_bytes
    tolerations: tuple[Toleration, ...] = ()
    guaranteed = True
    if typical is not None and typical_shape is not None:
        per_gpu = f"{typical_shape.cpu_millis / typical_shape.gpus / 1000:g} CPU and "
        per_gpu += f"{typical_shape.memory_bytes / typical_shape.gpus / 2**30:g}Gi memory per GPU"
        if cpu is None:
            cpu = typical_shape.cpu_millis * request.gpus // typical_shape.gpus
        if memory is None:
            memory = typical_shape.memory_bytes * request.gpus // typical_shape.gpus
        tolerations = typical.tolerations
        guaranteed = typical.spec is not None and qos_class(typical.spec) == GUARANTEED
        notes.append(f"each pod is shaped like the {kind} pod {typical.key}: {per_gpu}, its tolerations and QoS")
    elif cpu is None or memory is None:
        notes.append("no GPU pod in the snapshot to shape the gang after: CPU and memory not given are 0")
    requests = {"cpu": cpu or 0, "memory": memory or 0, resource: request.gpus}
    selector = {GPU_PRODUCT_LABEL: request.gpu_product} if request.gpu_product else {}
    classes = snapshot.priority_classes
    if request.priority_class is not None:
        priority = priority_of_class(request.priority_class, classes)
    else:
        priority = default_priority(classes)
    pods = tuple(
        _synthetic(f"gang-{i}", requests, guaranteed, tolerations, selector, registry) for i in range(request.pods)
    )
    described = f"{quantity('cpu', cpu or 0)} CPU, {quantity('memory', memory or 0)} memory"
    return Target(
        f"gang of {request.pods} pods × {request.gpus} {resource} ({described} each)", pods, priority, tuple(notes)
    )
