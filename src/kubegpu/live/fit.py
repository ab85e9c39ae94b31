"""Whether pod shapes fit a node's free resources, and how many GPUs a mix of shapes can use.

Fit follows kube-scheduler v1.35 NodeResourcesFit, TaintToleration and nodeSelector filters.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache

from kubegpu.live.model import ClusterSnapshot, NodeInfo, PodShape
from kubegpu.scheduler.constraints import affinity_matches, selector_matches, untolerated_taint

GPU_PRODUCT_LABEL = "nvidia.com/gpu.product"


@dataclass(frozen=True)
class NodeFree:
    """A node's free resources: allocatable minus the requests of pods that still hold them."""

    node: NodeInfo
    free: Mapping[str, int]

    def gpus(self, resource: str) -> int:
        return self.free.get(resource, 0)


def node_free(snapshot: ClusterSnapshot, node: NodeInfo) -> NodeFree:
    """Free resources of `node`; the pod count counts against the `pods` allocatable too."""
    free = dict(node.allocatable)
    pods = snapshot.pods_on(node.name)
    for pod in pods:
        for name, value in pod.requests.items():
            free[name] = free.get(name, 0) - value
    if "pods" in free:
        free["pods"] -= len(pods)
    return NodeFree(node=node, free=free)


def admits(node: NodeInfo, shape: PodShape) -> bool:
    """Static filters: schedulable, nodeSelector and required node affinity match, NoSchedule/NoExecute taints
    tolerated, each as the scheduler model's filters decide it (scheduler/constraints.py)."""
    return (
        node.schedulable
        and selector_matches(shape.node_selector, node.labels)
        and affinity_matches(shape.node_affinity, node.labels, node.name)
        and untolerated_taint(node.taints, shape.tolerations) is None
    )


def copies(free: NodeFree, shape: PodShape) -> int:
    """How many pods of `shape` fit the node's free CPU, memory, GPUs and pod slots."""
    if not admits(free.node, shape) or shape.gpus <= 0:
        return 0
    limits = [free.gpus(shape.gpu_resource) // shape.gpus]
    if shape.cpu_millis > 0:
        limits.append(max(0, free.free.get("cpu", 0)) // shape.cpu_millis)
    if shape.memory_bytes > 0:
        limits.append(max(0, free.free.get("memory", 0)) // shape.memory_bytes)
    if "pods" in free.free:
        limits.append(max(0, free.free["pods"]))
    return max(0, min(limits))


def usable_gpus(free: NodeFree, resource: str, shapes: Sequence[PodShape]) -> int:
    """Most free `resource` GPUs a set of pods of the given shapes (any number of each) can take.

    An exact search over shape counts (free GPUs per node are few): maximise GPUs taken subject to
    free GPUs, CPU, memory and pod slots together.
    """
    fitting = tuple(
        sorted(
            {s for s in shapes if s.gpu_resource == resource and copies(free, s) > 0},
            key=lambda s: (-s.gpus, s.cpu_millis, s.memory_bytes),
        )
    )
    gpus = max(0, free.gpus(resource))
    if not fitting or gpus == 0:
        return 0
    cpu = max(0, free.free.get("cpu", 0))
    mem = max(0, free.free.get("memory", 0))
    slots = free.free.get("pods", gpus)

    @cache
    def best(index: int, g: int, c: int, m: int, p: int) -> int:
        if index == len(fitting) or g == 0 or p <= 0:
            return 0
        shape = fitting[index]
        result = best(index + 1, g, c, m, p)
        n = 1
        while n * shape.gpus <= g and n * shape.cpu_millis <= c and n * shape.memory_bytes <= m and n <= p:
            taken = n * shape.gpus + best(
                index + 1, g - n * shape.gpus, c - n * shape.cpu_millis, m - n * shape.memory_bytes, p - n
            )
            result = max(result, taken)
            if result == g:
                break
            n += 1
        return result

    return best(0, gpus, cpu, mem, max(0, slots))
