"""Turn a ClusterSnapshot into the GPU simulator's starting state (for `simulate --snapshot`).

Targets kubegpu.scheduler.gpu.state (NodeSpec, GpuPod, GpuCluster): whole GPUs, 1000 milli each.
"""

from __future__ import annotations

from dataclasses import dataclass

from kubegpu.live.fit import GPU_PRODUCT_LABEL
from kubegpu.live.model import ClusterSnapshot, NodeInfo, PodInfo, PodShape
from kubegpu.live.parse import pod_shape
from kubegpu.scheduler.gpu.state import MILLI, GpuCluster, GpuPod, NodeSpec


@dataclass(frozen=True)
class Placement:
    """A pod already running: node index in `SimulationStart.nodes` and the GPU indices it holds."""

    node: int
    pod: GpuPod
    gpus: tuple[int, ...]


@dataclass(frozen=True)
class SimulationStart:
    """Schedulable nodes, the pods already placed on them, and the GPU demand still waiting."""

    nodes: tuple[NodeSpec, ...]
    placed: tuple[Placement, ...]
    pending: tuple[GpuPod, ...]
    left_out: tuple[str, ...]

    def cluster(self) -> GpuCluster:
        """A fresh GpuCluster with every placed pod bound (ModelError on an overcommitted node)."""
        cluster = GpuCluster(self.nodes)
        for placement in self.placed:
            cluster.bind(placement.node, placement.pod, placement.gpus)
        return cluster


def _gpu_resource(node: NodeInfo) -> str | None:
    resources = node.accelerator_resources()
    return resources[0] if resources else None


def _spec(node: NodeInfo) -> NodeSpec:
    resource = _gpu_resource(node)
    return NodeSpec(
        name=node.name,
        cpu_milli=node.allocatable.get("cpu", 0),
        memory_bytes=node.allocatable.get("memory", 0),
        gpu_count=node.allocatable.get(resource, 0) if resource else 0,
        gpu_model=node.labels.get(GPU_PRODUCT_LABEL, "") if resource else "",
        max_pods=node.allocatable.get("pods", 110),
        labels=dict(node.labels),
    )


def _pod(name: str, requests: dict[str, int] | None, shape: PodShape | None) -> GpuPod:
    models = shape.gpu_models(GPU_PRODUCT_LABEL) if shape else ()
    cpu = shape.cpu_millis if shape else (requests or {}).get("cpu", 0)
    mem = shape.memory_bytes if shape else (requests or {}).get("memory", 0)
    gpus = shape.gpus if shape else 0
    return GpuPod(
        name=name, cpu_milli=cpu, memory_bytes=mem, gpu_count=gpus, gpu_milli=MILLI if gpus else 0, gpu_models=models
    )


def _placed_pod(pod: PodInfo) -> GpuPod:
    return _pod(pod.key, dict(pod.requests), pod_shape(pod))


def simulation_start(snapshot: ClusterSnapshot) -> SimulationStart:
    """Schedulable nodes with their running pods bound; pending GPU pods and Kueue pod sets waiting.

    Cordoned and NotReady nodes are left out (nothing new lands there) and named in `left_out`.
    """
    nodes = [n for n in snapshot.nodes if n.schedulable]
    left_out = tuple(
        f"node {n.name} ({'cordoned' if n.unschedulable else 'NotReady'})" for n in snapshot.nodes if not n.schedulable
    )
    placed: list[Placement] = []
    for index, node in enumerate(nodes):
        next_gpu = 0
        for pod in snapshot.pods_on(node.name):
            sim_pod = _placed_pod(pod)
            gpus = tuple(range(next_gpu, next_gpu + sim_pod.gpu_count))
            next_gpu += sim_pod.gpu_count
            placed.append(Placement(index, sim_pod, gpus))
    pending = [_placed_pod(p) for p in snapshot.pods if p.pending and p.accelerators()]
    for workload in snapshot.kueue_workloads:
        if not workload.pending:
            continue
        for pod_set in workload.pod_sets:
            for i in range(pod_set.count if pod_set.shape is not None else 0):
                name = f"{workload.namespace}/{workload.name}/{pod_set.name}-{i}"
                pending.append(_pod(name, None, pod_set.shape))
    return SimulationStart(
        nodes=tuple(_spec(n) for n in nodes), placed=tuple(placed), pending=tuple(pending), left_out=left_out
    )
