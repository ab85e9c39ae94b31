"""A pod's requests and a node's allocatable, as the API gives them, turned into the GPU model's pods and nodes.

The one place a resource list becomes the model's columns: cpu and memory, whole GPUs of the first accelerator
resource (the accelerator registry of kubegpu.manifests.accelerators decides which resources are accelerators),
and every other requested resource (ephemeral-storage, hugepages, extended resources, other accelerators) as a
scalar that NodeResourcesFit counts as kube-scheduler v1.35 does.
"""

from __future__ import annotations

from collections.abc import Mapping

from kubegpu.manifests.accelerators import DEFAULT_REGISTRY, AcceleratorRegistry
from kubegpu.scheduler.constraints import NodeAffinity, Taint, Toleration
from kubegpu.scheduler.gpu.state import GPU_RESOURCE, MILLI, GpuPod, NodeSpec

NOT_SCALAR = ("cpu", "memory", "pods")
DEFAULT_MAX_PODS = 110  # the kubelet's maxPods default, for a node whose allocatable names none


def accelerator_of(amounts: Mapping[str, int], registry: AcceleratorRegistry = DEFAULT_REGISTRY) -> str | None:
    """The accelerator resource a pod or node counts its GPUs in: the first (by name) with a positive amount."""
    names = sorted(r for r, v in amounts.items() if v > 0 and registry.is_accelerator(r))
    return names[0] if names else None


def pod_of(
    name: str,
    requests: Mapping[str, int],
    *,
    registry: AcceleratorRegistry = DEFAULT_REGISTRY,
    gpu_models: tuple[str, ...] = (),
    node_selector: tuple[tuple[str, str], ...] = (),
    tolerations: tuple[Toleration, ...] = (),
    node_affinity: NodeAffinity = (),
    priority: int = 0,
    preempt_never: bool = False,
    group: str = "",
) -> GpuPod:
    """The model's pod for canonical requests (cpu in millicores, everything else in units)."""
    resource = accelerator_of(requests, registry)
    gpus = requests.get(resource, 0) if resource else 0
    scalars = {r: v for r, v in sorted(requests.items()) if r not in NOT_SCALAR and r != resource and v > 0}
    return GpuPod(
        name=name,
        cpu_milli=requests.get("cpu", 0),
        memory_bytes=requests.get("memory", 0),
        gpu_count=gpus,
        gpu_milli=MILLI if gpus else 0,
        gpu_models=gpu_models,
        group=group,
        gpu_resource=resource or GPU_RESOURCE,
        node_selector=node_selector,
        tolerations=tolerations,
        node_affinity=node_affinity,
        scalars=scalars,
        priority=priority,
        preempt_never=preempt_never,
    )


def node_of(
    name: str,
    allocatable: Mapping[str, int],
    *,
    registry: AcceleratorRegistry = DEFAULT_REGISTRY,
    labels: Mapping[str, str] | None = None,
    gpu_model: str = "",
    taints: tuple[Taint, ...] = (),
    unschedulable: bool = False,
) -> NodeSpec:
    """The model's node for a canonical allocatable (its first accelerator resource counted as whole GPUs)."""
    resource = accelerator_of(allocatable, registry)
    scalars = {r: v for r, v in sorted(allocatable.items()) if r not in NOT_SCALAR and r != resource}
    return NodeSpec(
        name=name,
        cpu_milli=allocatable.get("cpu", 0),
        memory_bytes=allocatable.get("memory", 0),
        gpu_count=allocatable.get(resource, 0) if resource else 0,
        gpu_model=gpu_model if resource else "",
        max_pods=allocatable.get("pods", DEFAULT_MAX_PODS),
        labels=dict(labels or {}),
        gpu_resource=resource or GPU_RESOURCE,
        taints=taints,
        unschedulable=unschedulable,
        scalars=scalars,
    )
