"""Turn a ClusterSnapshot into the GPU simulator's starting state (for `simulate --snapshot`).

Targets kubegpu.scheduler.gpu.state (NodeSpec, GpuPod, GpuCluster) through kubegpu.scheduler.gpu.objects: whole
GPUs, 1000 milli each, with each node's taints and each pod's tolerations, node selector and affinity; `audit --why`
builds its cluster from the same functions.
"""

from __future__ import annotations

from dataclasses import dataclass

from kubegpu.live.fit import GPU_PRODUCT_LABEL
from kubegpu.live.model import ClusterSnapshot, KueuePodSet, KueueWorkload, NodeInfo, PodInfo, PodShape, Taint
from kubegpu.live.parse import pod_shape
from kubegpu.manifests.accelerators import DEFAULT_REGISTRY, AcceleratorRegistry
from kubegpu.scheduler.gpu.objects import node_of, pod_of
from kubegpu.scheduler.gpu.state import GpuCluster, GpuPod, NodeSpec

# The taint the node lifecycle controller puts on a NotReady node (TaintNodesByCondition), for a snapshot that shows
# the condition without the taint.
NOT_READY_TAINT = Taint("node.kubernetes.io/not-ready", "", "NoSchedule")


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


def model_node(node: NodeInfo, registry: AcceleratorRegistry = DEFAULT_REGISTRY) -> NodeSpec:
    """The scheduler model's node: allocatable, labels (its GPU model from the product label), taints and cordon;
    a NotReady node without the lifecycle controller's not-ready taint is given it."""
    taints = node.taints
    if not node.ready and not any(t.key == NOT_READY_TAINT.key for t in taints):
        taints = (*taints, NOT_READY_TAINT)
    return node_of(
        node.name,
        node.allocatable,
        registry=registry,
        labels=node.labels,
        gpu_model=node.labels.get(GPU_PRODUCT_LABEL, ""),
        taints=taints,
        unschedulable=node.unschedulable,
    )


def model_pod(pod: PodInfo, registry: AcceleratorRegistry = DEFAULT_REGISTRY) -> GpuPod:
    """The scheduler model's pod: its requests, the GPU models its selector accepts, its tolerations and node
    selector and affinity."""
    shape = pod_shape(pod, registry)
    return pod_of(
        pod.key,
        pod.requests,
        registry=registry,
        gpu_models=shape.gpu_models(GPU_PRODUCT_LABEL) if shape else (),
        node_selector=tuple(sorted(pod.node_selector.items())),
        tolerations=pod.tolerations,
        node_affinity=pod.node_affinity,
    )


def pod_set_pod_name(workload: KueueWorkload, pod_set: KueuePodSet, index: int) -> str:
    """The name the model gives the `index`-th pod of a pending workload's pod set."""
    return f"{workload.namespace}/{workload.name}/{pod_set.name}-{index}"


def pod_set_pod(name: str, shape: PodShape, registry: AcceleratorRegistry = DEFAULT_REGISTRY) -> GpuPod:
    """The scheduler model's pod for one pod of a Kueue pod set (its shape: GPUs, CPU, memory, constraints)."""
    return pod_of(
        name,
        {"cpu": shape.cpu_millis, "memory": shape.memory_bytes, shape.gpu_resource: shape.gpus},
        registry=registry,
        gpu_models=shape.gpu_models(GPU_PRODUCT_LABEL),
        node_selector=shape.node_selector,
        tolerations=shape.tolerations,
        node_affinity=shape.node_affinity,
    )


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
            sim_pod = model_pod(pod)
            gpus = tuple(range(next_gpu, next_gpu + sim_pod.gpu_count))
            next_gpu += sim_pod.gpu_count
            placed.append(Placement(index, sim_pod, gpus))
    pending = [model_pod(p) for p in snapshot.pods if p.pending and p.accelerators()]
    for workload in snapshot.kueue_workloads:
        if not workload.pending:
            continue
        for pod_set in workload.pod_sets:
            if pod_set.shape is None:
                continue
            for i in range(pod_set.count):
                pending.append(pod_set_pod(pod_set_pod_name(workload, pod_set, i), pod_set.shape))
    return SimulationStart(
        nodes=tuple(model_node(n) for n in nodes), placed=tuple(placed), pending=tuple(pending), left_out=left_out
    )
