"""kube-scheduler's NodeResourcesFit strategies and BalancedAllocation as vectorised score plugins.

Follows kubernetes v1.35 pkg/scheduler/framework/plugins/noderesources with the same integer
arithmetic as kubegpu.scheduler.noderesources (checked against it in tests), over all nodes at once.
Resources: cpu (milli), memory (bytes) and nvidia.com/gpu (counted in milli-GPU).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from kubegpu.scheduler.draws import Draws
from kubegpu.scheduler.gpu.policies import select_best
from kubegpu.scheduler.gpu.state import GpuCluster, GpuPod, IntArray
from kubegpu.scheduler.noderesources import (
    MAX_NODE_SCORE,
    ResourceSpec,
    ShapePoint,
    Strategy,
    broken_linear,
    scale_shape,
    validate_resources,
    validate_shape,
)

GPU = "nvidia.com/gpu"


def _vectors(
    cluster: GpuCluster, pod: GpuPod, nodes: IntArray, names: Sequence[str]
) -> list[tuple[str, IntArray, IntArray]]:
    out: list[tuple[str, IntArray, IntArray]] = []
    for name in names:
        if name == "cpu":
            out.append((name, cluster.cpu_used[nodes] + pod.cpu_milli, cluster.cpu_cap[nodes]))
        elif name == "memory":
            out.append((name, cluster.mem_used[nodes] + pod.memory_bytes, cluster.mem_cap[nodes]))
        elif name == GPU:
            if pod.total_gpu_milli == 0:  # unrequested extended resource: skipped
                continue
            cap = cluster.cap_sum[nodes]
            out.append((name, cap - cluster.left_sum[nodes] + pod.total_gpu_milli, cap))
    return out


class NodeResourcesFitScore:
    """NodeResourcesFit Score with LeastAllocated, MostAllocated or RequestedToCapacityRatio."""

    def __init__(self, strategy: Strategy, resources: Sequence[ResourceSpec], shape: Sequence[ShapePoint] = ()) -> None:
        validate_resources(resources)
        if strategy is Strategy.REQUESTED_TO_CAPACITY_RATIO:
            validate_shape(shape)
        self.strategy = strategy
        self.resources = tuple(resources)
        self.shape = scale_shape(shape)
        self.name = f"NodeResourcesFit/{strategy.value}"

    def score(self, cluster: GpuCluster, pod: GpuPod, nodes: IntArray, rng: Draws) -> IntArray:
        weights = {r.name: r.weight for r in self.resources}
        total = np.zeros(len(nodes), dtype=np.int64)
        wsum = np.zeros(len(nodes), dtype=np.int64)
        rtcr = np.zeros(len(nodes), dtype=np.float64)
        for name, req, alloc in _vectors(cluster, pod, nodes, list(weights)):
            w = weights[name]
            has = alloc > 0
            safe = np.where(has, alloc, 1)
            if self.strategy is Strategy.LEAST_ALLOCATED:
                s = np.where(req > alloc, 0, (alloc - req) * MAX_NODE_SCORE // safe)
            elif self.strategy is Strategy.MOST_ALLOCATED:
                s = np.minimum(req, alloc) * MAX_NODE_SCORE // safe
            else:
                util = np.where(req >= alloc, MAX_NODE_SCORE, req * MAX_NODE_SCORE // safe)
                util = np.where((alloc <= 0) | (req <= 0), 0, util)
                s = np.array([broken_linear(self.shape, int(u)) for u in util], dtype=np.int64)
                has = has & (s > 0)
                rtcr += np.where(has, s * w, 0)
            total += np.where(has, s * w, 0)
            wsum += np.where(has, w, 0)
        if self.strategy is Strategy.REQUESTED_TO_CAPACITY_RATIO:
            mean = np.where(wsum > 0, rtcr / np.maximum(wsum, 1), 0.0)
            return np.floor(mean + 0.5).astype(np.int64)
        out: IntArray = np.where(wsum > 0, total // np.maximum(wsum, 1), 0)
        return out

    def normalize(self, scores: IntArray) -> IntArray:
        return scores

    def select_gpus(self, cluster: GpuCluster, node: int, pod: GpuPod, rng: Draws) -> tuple[int, ...]:
        return select_best(cluster, node, pod)

    def bound(self, cluster: GpuCluster, node: int) -> None:
        """No cache."""


class BalancedAllocationScore:
    """NodeResourcesBalancedAllocation (v1.35): int((1 − std of request fractions) × 100)."""

    name = "NodeResourcesBalancedAllocation"

    def __init__(self, resources: Sequence[ResourceSpec] = (ResourceSpec("cpu"), ResourceSpec("memory"))) -> None:
        self.resources = tuple(resources)

    def score(self, cluster: GpuCluster, pod: GpuPod, nodes: IntArray, rng: Draws) -> IntArray:
        fractions = []
        for _, req, alloc in _vectors(cluster, pod, nodes, [r.name for r in self.resources]):
            fractions.append(np.where(alloc > 0, np.minimum(1.0, req / np.maximum(alloc, 1)), np.nan))
        if not fractions:
            return np.full(len(nodes), MAX_NODE_SCORE, dtype=np.int64)
        f = np.vstack(fractions)
        valid = ~np.isnan(f)
        count = valid.sum(axis=0)
        mean = np.where(count > 0, np.nansum(f, axis=0) / np.maximum(count, 1), 0.0)
        var = np.nansum(np.where(valid, (f - mean) ** 2, 0.0), axis=0) / np.maximum(count, 1)
        std = np.where(count == 2, np.abs(np.nan_to_num(f[0]) - np.nan_to_num(f[-1])) / 2, np.sqrt(var))
        std = np.where(count < 2, 0.0, std)
        out: IntArray = np.trunc((1 - std) * MAX_NODE_SCORE).astype(np.int64)
        return out

    def normalize(self, scores: IntArray) -> IntArray:
        return scores


class VolcanoBinpackScore:
    """Volcano's binpack plugin over cpu, memory and nvidia.com/gpu (floats, overflow scores 0).

    Follows volcano-sh/volcano pkg/scheduler/plugins/binpack (same formula as
    kubegpu.scheduler.volcano.binpack_score); scores are rounded to integers for the framework sum.
    """

    name = "volcano-binpack"

    def __init__(
        self,
        weight: int = 1,
        weights: Sequence[ResourceSpec] = (ResourceSpec("cpu", 1), ResourceSpec("memory", 1), ResourceSpec(GPU, 1)),
    ) -> None:
        self.weight = weight
        self.weights = {r.name: r.weight for r in weights}

    def score(self, cluster: GpuCluster, pod: GpuPod, nodes: IntArray, rng: Draws) -> IntArray:
        total = np.zeros(len(nodes), dtype=np.float64)
        wsum = 0
        over = np.zeros(len(nodes), dtype=np.bool_)
        requested = {"cpu": pod.cpu_milli, "memory": pod.memory_bytes, GPU: pod.total_gpu_milli}
        for name, req, alloc in _vectors(cluster, pod, nodes, list(self.weights)):
            if requested.get(name, 0) <= 0:  # only resources the task requests count
                continue
            w = self.weights[name]
            wsum += w
            over |= (alloc > 0) & (req > alloc)
            total += np.where(alloc > 0, w * req / np.maximum(alloc, 1), 0.0)
        if wsum == 0:
            return np.zeros(len(nodes), dtype=np.int64)
        value = np.where(over, 0.0, total / wsum * MAX_NODE_SCORE * self.weight)
        out: IntArray = np.floor(value + 0.5).astype(np.int64)
        return out

    def normalize(self, scores: IntArray) -> IntArray:
        return scores

    def select_gpus(self, cluster: GpuCluster, node: int, pod: GpuPod, rng: Draws) -> tuple[int, ...]:
        return select_best(cluster, node, pod)

    def bound(self, cluster: GpuCluster, node: int) -> None:
        """No cache."""
