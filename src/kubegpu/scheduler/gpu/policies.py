"""The GPU placement policies of the FGD study as score plugins, each with its GPU-index selection.

Follows hkust-adsl/kubernetes-scheduler-simulator pkg/simulator/plugin (random_score, dot_product_score
with merge/max, gpu_clustering_score, gpu_packing_score, best_fit_score, fgd_score) and the GPU
selection of open_gpu_share.go (best, random, or the policy's own). Scores run over all candidates.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from kubegpu.scheduler.framework import min_max_normalize
from kubegpu.scheduler.gpu.fragmentation import FragModel, StateCache, TypicalPod
from kubegpu.scheduler.gpu.state import MILLI, GpuCluster, GpuPod, IntArray

MAX_SPEC_CPU = 128000  # milli-CPU used to normalise (utils.MaxSpecCpu)
MAX_SPEC_GPU = 8000  # milli-GPU used to normalise (utils.MaxSpecGpu)
MAX_NODE_SCORE = 100


def exclusive_gpus(left: IntArray, count: int) -> tuple[int, ...]:
    """AllocateExclusiveGpuId: the first `count` fully free GPUs in index order."""
    free = np.flatnonzero(left == MILLI)
    return tuple(int(i) for i in free[:count])


def best_fit_gpu(left: IntArray, milli: int) -> int:
    """The GPU with the least remainder that still fits `milli` (first index on ties)."""
    fitting = np.where(left >= milli, left, np.iinfo(np.int64).max)
    return int(np.argmin(fitting))


def select_best(cluster: GpuCluster, node: int, pod: GpuPod) -> tuple[int, ...]:
    """gpuSelMethod "best": best-fit GPU for a sharing pod, first free GPUs otherwise."""
    if not pod.is_gpu:
        return ()
    left = cluster.gpu_left[node]
    if pod.is_share:
        return (best_fit_gpu(left, pod.gpu_milli),)
    return exclusive_gpus(left, pod.gpu_count)


class _Plugin:
    """Shared defaults: identity normalization, best-fit GPU selection, no caches to update."""

    name = "plugin"

    def normalize(self, scores: IntArray) -> IntArray:
        return scores

    def select_gpus(self, cluster: GpuCluster, node: int, pod: GpuPod, rng: np.random.Generator) -> tuple[int, ...]:
        return select_best(cluster, node, pod)

    def bound(self, cluster: GpuCluster, node: int) -> None:
        """Called after a bind or unbind on `node` so caches can follow."""


class RandomScore(_Plugin):
    """Random-fit: PreScore draws one feasible node (100), the others score 0; random shared GPU."""

    name = "random"

    def score(self, cluster: GpuCluster, pod: GpuPod, nodes: IntArray, rng: np.random.Generator) -> IntArray:
        out = np.zeros(len(nodes), dtype=np.int64)
        out[int(rng.integers(len(nodes)))] = MAX_NODE_SCORE
        return out

    def select_gpus(self, cluster: GpuCluster, node: int, pod: GpuPod, rng: np.random.Generator) -> tuple[int, ...]:
        if not pod.is_gpu:
            return ()
        left = cluster.gpu_left[node]
        if pod.is_share:
            fitting = np.flatnonzero(left >= pod.gpu_milli)
            return (int(fitting[int(rng.integers(len(fitting)))]),)
        return exclusive_gpus(left, pod.gpu_count)


class DotProductScore(_Plugin):
    """Tetris-like: 100 × (1 − (free·request)/2) with (cpu, total GPU) vectors normalised by max spec."""

    name = "dotprod"

    def score(self, cluster: GpuCluster, pod: GpuPod, nodes: IntArray, rng: np.random.Generator) -> IntArray:
        cpu_left = cluster.cpu_left[nodes].astype(np.float64)
        gpu_left = cluster.gpu_left_total[nodes].astype(np.float64)
        dot = (cpu_left / MAX_SPEC_CPU) * (pod.cpu_milli / MAX_SPEC_CPU)
        dot = dot + (gpu_left / MAX_SPEC_GPU) * (pod.total_gpu_milli / MAX_SPEC_GPU)
        value = 1 - dot / 2
        out: IntArray = np.trunc(MAX_NODE_SCORE * value).astype(np.int64)
        out[cluster.cpu_left[nodes] < pod.cpu_milli] = 0
        return out


class GpuClusteringScore(_Plugin):
    """Pack pods of one GPU class together: bands 75/50/25/0 plus 25 × used share of 8 GPUs."""

    name = "clustering"

    def score(self, cluster: GpuCluster, pod: GpuPod, nodes: IntArray, rng: np.random.Generator) -> IntArray:
        if not pod.is_gpu:
            return np.zeros(len(nodes), dtype=np.int64)
        used_part = (MAX_NODE_SCORE // 4) * (MAX_SPEC_GPU - cluster.gpu_left_total[nodes]) // MAX_SPEC_GPU
        classes = cluster.affinity_classes_on()[nodes]
        same = cluster.affinity_counts.get(pod.affinity)
        has_same = (same[nodes] > 0) if same is not None else np.zeros(len(nodes), dtype=np.bool_)
        band = np.where(has_same, np.where(classes == 1, 75, 50), np.where(classes == 0, 25, 0))
        out: IntArray = used_part + band
        return out


class GpuPackingScore(_Plugin):
    """Prefer shared GPUs, then free GPUs on used nodes, then idle nodes (fewest GPUs first)."""

    name = "packing"

    def score(self, cluster: GpuCluster, pod: GpuPod, nodes: IntArray, rng: np.random.Generator) -> IntArray:
        if not pod.is_gpu:
            return np.zeros(len(nodes), dtype=np.int64)
        left = cluster.gpu_left[nodes]
        count = cluster.gpu_count[nodes]
        fully_free = (left == MILLI).sum(axis=1)
        idle_node = np.maximum(MAX_NODE_SCORE // 3 - fully_free, fully_free)
        if pod.gpu_milli >= MILLI:
            used = np.maximum(MAX_NODE_SCORE // 2 - pod.gpu_count, MAX_NODE_SCORE // 3)
            other = np.full(len(nodes), used, dtype=np.int64)
        else:
            chosen = np.where(left >= pod.gpu_milli, left, np.iinfo(np.int64).max).min(axis=1)
            free_case = np.full(len(nodes), max(MAX_NODE_SCORE // 2 - 1, MAX_NODE_SCORE // 3))
            share_case = np.maximum(MAX_NODE_SCORE - (chosen * 100 // MILLI) // 10, MAX_NODE_SCORE // 2)
            other = np.where(chosen == MILLI, free_case, share_case)
        out: IntArray = np.where(fully_free == count, idle_node, other).astype(np.int64)
        return out


class BestFitScore(_Plugin):
    """Least leftover (cpu, total GPU) after placement, weighted 0.5/0.5 by max spec, min-max normalised."""

    name = "bestfit"

    def score(self, cluster: GpuCluster, pod: GpuPod, nodes: IntArray, rng: np.random.Generator) -> IntArray:
        cpu_free = cluster.cpu_left[nodes].astype(np.float64)
        gpu_free = cluster.gpu_left_total[nodes].astype(np.float64)
        value = (cpu_free - pod.cpu_milli) / MAX_SPEC_CPU * 0.5
        value = value + (gpu_free - pod.total_gpu_milli) / MAX_SPEC_GPU * 0.5
        out: IntArray = np.trunc((1.0 - value) * MAX_NODE_SCORE).astype(np.int64)
        return out

    def normalize(self, scores: IntArray) -> IntArray:
        return min_max_normalize(scores)


def _sigmoid_score(delta: float) -> int:
    return int(1.0 / (1.0 + math.exp(-delta / 1000.0)) * MAX_NODE_SCORE)


class FGDScore(_Plugin):
    """Fragmentation Gradient Descent: score = int(sigmoid(ΔF / 1000) × 100) for the best GPU choice.

    Results are memoised per (node state, pod shape); only the bound node changes state per pod.
    """

    name = "fgd"

    def __init__(self, typical: Sequence[TypicalPod]) -> None:
        self.typical = tuple(typical)
        self._cluster: GpuCluster | None = None
        self._cache: StateCache | None = None
        self._memo: dict[tuple[int, tuple[int, int, int, str]], tuple[int, frozenset[int]]] = {}

    def _ready(self, cluster: GpuCluster) -> StateCache:
        if self._cluster is not cluster or self._cache is None:
            self._cluster = cluster
            self._cache = StateCache(cluster, FragModel(self.typical, cluster.model_names))
            self._memo = {}
        return self._cache

    def bound(self, cluster: GpuCluster, node: int) -> None:
        cache = self._ready(cluster)
        cache.node_state[node] = cache.intern(cache.key(cluster, node))

    def node_frag(self, cluster: GpuCluster) -> np.ndarray:
        """Current F_n(M) of every node (GPU milli)."""
        cache = self._ready(cluster)
        return np.array(cache.frag_of, dtype=np.float64)[cache.node_state]

    def _options(self, cache: StateCache, state: int, pod: GpuPod) -> list[tuple[int, tuple[int, ...]]]:
        """(GPU remainder used, state after placement) for each distinct way to place the pod."""
        key = cache.rows[state]
        model, cpu = key[0], key[1] - pod.cpu_milli
        left = list(key[2:])
        options: list[tuple[int, tuple[int, ...]]] = []
        if pod.is_share:
            for value in sorted(set(left)):
                if value >= pod.gpu_milli:
                    after = list(left)
                    after[after.index(value)] -= pod.gpu_milli
                    options.append((value, (model, cpu, *sorted(after))))
            return options
        after = list(left)
        need = pod.gpu_count if pod.is_gpu else 0
        for i, value in enumerate(after):  # ascending: least sufficient first (NodeResource.Sub)
            if need == 0:
                break
            if value >= pod.gpu_milli:
                after[i] -= pod.gpu_milli
                need -= 1
        options.append((MILLI, (model, cpu, *sorted(after))))
        return options

    def quantize(self, delta: float) -> int:
        """Map ΔF to the plugin's score (FGD: int(sigmoid(ΔF/1000) × 100))."""
        return _sigmoid_score(delta)

    def _evaluate_many(self, cache: StateCache, states: Sequence[int], pod: GpuPod) -> None:
        """Fill the memo for several node states at once (one vectorised fragmentation call)."""
        per_state = [self._options(cache, s, pod) for s in states]
        keys = [o[1] for opts in per_state for o in opts]
        frags = cache.frag_rows(keys) if keys else np.zeros(0)
        at = 0
        shape = pod.shape
        for state, opts in zip(states, per_state, strict=True):
            before = cache.frag_of[state]
            deltas = [before - float(f) for f in frags[at : at + len(opts)]]
            at += len(opts)
            scores = [self.quantize(d) for d in deltas]
            best = max(scores)
            chosen = frozenset(opts[i][0] for i, sc in enumerate(scores) if sc == best)
            self._memo[(state, shape)] = (best, chosen)

    def lookup(self, cluster: GpuCluster, pod: GpuPod, nodes: IntArray) -> tuple[IntArray, list[frozenset[int]]]:
        """Best score and chosen GPU remainders for each candidate node (memoised per state)."""
        cache = self._ready(cluster)
        states = cache.node_state[nodes]
        unique, inverse = np.unique(states, return_inverse=True)
        shape = pod.shape
        memo = self._memo
        missing = [s for s in unique.tolist() if (s, shape) not in memo]
        if missing:
            self._evaluate_many(cache, missing, pod)
        hits = [memo[(s, shape)] for s in unique.tolist()]
        scores = np.array([h[0] for h in hits], dtype=np.int64)
        result: IntArray = scores[inverse]
        return result, [hits[j][1] for j in inverse.tolist()] if len(nodes) == 1 else []

    def score(self, cluster: GpuCluster, pod: GpuPod, nodes: IntArray, rng: np.random.Generator) -> IntArray:
        scores, _ = self.lookup(cluster, pod, nodes)
        return scores

    def select_gpus(self, cluster: GpuCluster, node: int, pod: GpuPod, rng: np.random.Generator) -> tuple[int, ...]:
        if not pod.is_gpu:
            return ()
        left = cluster.gpu_left[node]
        if not pod.is_share:
            return exclusive_gpus(left, pod.gpu_count)
        _, chosen = self.lookup(cluster, pod, np.array([node], dtype=np.int64))
        for i, value in enumerate(left.tolist()):
            if value in chosen[0] and value >= pod.gpu_milli:
                return (i,)
        return (best_fit_gpu(left, pod.gpu_milli),)
