"""FGD fragmentation of a live cluster, using the scheduler package's measure on snapshot data.

Follows hkust-adsl/kubernetes-scheduler-simulator pkg/utils/frag.go via kubegpu.scheduler.gpu.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kubegpu.live.fit import GPU_PRODUCT_LABEL, NodeFree
from kubegpu.live.model import PodShape
from kubegpu.scheduler.gpu.fragmentation import TypicalPod, node_frag_milli, typical_pods
from kubegpu.scheduler.gpu.state import MILLI, GpuPod


@dataclass(frozen=True)
class Fragmentation:
    """Cluster fragmentation: F(M) in milli-GPU, per node, and as a share of idle GPUs."""

    milli: float
    idle_milli: int
    per_node: tuple[tuple[str, float], ...]
    typical: tuple[TypicalPod, ...]

    @property
    def ratio(self) -> float:
        """Fraction of idle GPU milli that the typical workload cannot use (0 when none idle)."""
        return self.milli / self.idle_milli if self.idle_milli else 0.0


def _as_gpu_pod(shape: PodShape, index: int) -> GpuPod:
    models = shape.gpu_models(GPU_PRODUCT_LABEL)
    return GpuPod(
        name=f"shape-{index}",
        cpu_milli=shape.cpu_millis,
        memory_bytes=shape.memory_bytes,
        gpu_count=shape.gpus,
        gpu_milli=MILLI,
        gpu_models=models,
    )


def cluster_fragmentation(frees: Sequence[NodeFree], resource: str, tasks: Sequence[PodShape]) -> Fragmentation:
    """F(M) = Σ_n F_n(M); M = the most popular task shapes (95% of tasks) among `tasks`.

    Whole GPUs only (Kubernetes counts `nvidia.com/gpu` in units): a free GPU has 1000 milli left.
    CPU-only pods are left out of M (DaemonSets would otherwise dominate it); a cordoned or NotReady
    node hosts no task, so all its idle GPUs count as fragment.
    """
    pods = [_as_gpu_pod(s, i) for i, s in enumerate(tasks) if s.gpu_resource == resource]
    typical = typical_pods(pods, include_cpu_pods=False)
    per_node: list[tuple[str, float]] = []
    idle_total = 0
    for free in frees:
        idle = max(0, free.gpus(resource))
        if idle == 0:
            continue
        idle_total += idle * MILLI
        if not free.node.schedulable:
            per_node.append((free.node.name, float(idle * MILLI)))
            continue
        if not typical:  # no GPU workload seen: M is empty and F_n(M) is an empty sum
            per_node.append((free.node.name, 0.0))
            continue
        model = free.node.labels.get(GPU_PRODUCT_LABEL, "")
        cpu_left = max(0, free.free.get("cpu", 0))
        value = node_frag_milli(typical, model, cpu_left, [MILLI] * idle)
        per_node.append((free.node.name, value))
    return Fragmentation(
        milli=sum(v for _, v in per_node), idle_milli=idle_total, per_node=tuple(per_node), typical=typical
    )
