"""The GPU placement policies of the FGD study as score plugins, each with its GPU-index selection.

Follows hkust-adsl/kubernetes-scheduler-simulator pkg/simulator/plugin (random_score, dot_product_score
with merge/max, gpu_clustering_score, gpu_packing_score, best_fit_score, fgd_score) and the GPU
selection of open_gpu_share.go (best, random, or the policy's own). Scores run over all candidates.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from kubegpu.scheduler.draws import Draws
from kubegpu.scheduler.framework import min_max_normalize
from kubegpu.scheduler.gpu.fragmentation import FragModel, StateCache, TypicalPod
from kubegpu.scheduler.gpu.state import MILLI, GpuCluster, GpuPod, IntArray

MAX_SPEC_CPU = 128000  # milli-CPU used to normalise (utils.MaxSpecCpu)
MAX_SPEC_GPU = 8000  # milli-GPU used to normalise (utils.MaxSpecGpu)
MAX_NODE_SCORE = 100
_UNKNOWN = np.iinfo(np.int64).min  # a state not yet scored for a pod shape


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

    def select_gpus(self, cluster: GpuCluster, node: int, pod: GpuPod, rng: Draws) -> tuple[int, ...]:
        return select_best(cluster, node, pod)

    def bound(self, cluster: GpuCluster, node: int) -> None:
        """Called after a bind or unbind on `node` so caches can follow."""


class RandomScore(_Plugin):
    """Random-fit: PreScore draws one feasible node (100), the others score 0; random shared GPU."""

    name = "random"

    def score(self, cluster: GpuCluster, pod: GpuPod, nodes: IntArray, rng: Draws) -> IntArray:
        """random_score.go PreScore: rand.Intn(len(nodes)) picks from the feasible nodes in the order given."""
        out = np.zeros(len(nodes), dtype=np.int64)
        out[rng.intn(len(nodes))] = MAX_NODE_SCORE
        return out

    def select_gpus(self, cluster: GpuCluster, node: int, pod: GpuPod, rng: Draws) -> tuple[int, ...]:
        """open_gpu_share.go allocateGpuIdBasedOnRandomFit: reservoir sampling over the GPUs that fit, in
        index order, one rand.Intn(count so far) per GPU (the first GPU draws too); whole GPUs go first-free."""
        if not pod.is_gpu:
            return ()
        left = cluster.gpu_left[node]
        if not pod.is_share:
            return exclusive_gpus(left, pod.gpu_count)
        chosen = -1
        fitting = np.flatnonzero(left[: int(cluster.gpu_count[node])] >= pod.gpu_milli).tolist()
        for seen, index in enumerate(fitting, start=1):
            if rng.intn(seen) == 0:
                chosen = index
        return (chosen,)


class DotProductScore(_Plugin):
    """Tetris-like: 100 × (1 − (free·request)/2) with (cpu, total GPU) vectors normalised by max spec."""

    name = "dotprod"

    def score(self, cluster: GpuCluster, pod: GpuPod, nodes: IntArray, rng: Draws) -> IntArray:
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

    def score(self, cluster: GpuCluster, pod: GpuPod, nodes: IntArray, rng: Draws) -> IntArray:
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

    def score(self, cluster: GpuCluster, pod: GpuPod, nodes: IntArray, rng: Draws) -> IntArray:
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

    def score(self, cluster: GpuCluster, pod: GpuPod, nodes: IntArray, rng: Draws) -> IntArray:
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

    Follows fgd_score.go (calculateGpuShareFragExtendScore). Scores are kept per (node state, pod shape) in
    one table per shape; only the bound node changes state per pod, so a pod costs one table read.
    """

    name = "fgd"

    def __init__(self, typical: Sequence[TypicalPod]) -> None:
        self.typical = tuple(typical)
        self._cluster: GpuCluster | None = None
        self._cache: StateCache | None = None
        self._scores: dict[tuple[int, int, int, str], IntArray] = {}  # shape -> best score by state
        self._chosen: dict[tuple[int, tuple[int, int, int, str]], frozenset[int]] = {}

    def states(self, cluster: GpuCluster) -> StateCache:
        """The interned node states of `cluster` and their F_n(M) (also the run's fragmentation metric)."""
        if self._cluster is not cluster or self._cache is None:
            self._cluster = cluster
            self._cache = StateCache(cluster, FragModel(self.typical, cluster.model_names))
            self._scores = {}
            self._chosen = {}
        return self._cache

    def bound(self, cluster: GpuCluster, node: int) -> None:
        self.states(cluster).update(cluster, node)

    def _table(self, shape: tuple[int, int, int, str], size: int) -> IntArray:
        table = self._scores.get(shape)
        if table is None or len(table) < size:
            grown = np.full(max(size, 2 * len(table) if table is not None else 1024), _UNKNOWN, dtype=np.int64)
            if table is not None:
                grown[: len(table)] = table
            self._scores[shape] = table = grown
        return table

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
        """Score several node states at once (the new after-placement states in one fragmentation call)."""
        per_state = [self._options(cache, s, pod) for s in states]
        after = cache.intern_many([o[1] for opts in per_state for o in opts])
        frag_of = cache.frag_of
        shape = pod.shape
        table = self._table(shape, len(cache.rows))
        at = 0
        for state, opts in zip(states, per_state, strict=True):
            before = frag_of[state]
            scores = [self.quantize(before - frag_of[after[at + i]]) for i in range(len(opts))]
            at += len(opts)
            best = max(scores)
            table[state] = best
            if pod.is_share:
                self._chosen[(state, shape)] = frozenset(opts[i][0] for i, sc in enumerate(scores) if sc == best)

    def lookup(self, cluster: GpuCluster, pod: GpuPod, nodes: IntArray) -> IntArray:
        """Best score for each candidate node (memoised per state and pod shape)."""
        cache = self.states(cluster)
        states = cache.node_state[nodes]
        scores = self._table(pod.shape, len(cache.rows))[states]
        unknown = scores == _UNKNOWN
        if unknown.any():
            self._evaluate_many(cache, np.unique(states[unknown]).tolist(), pod)
            scores = self._scores[pod.shape][states]
        return scores

    def chosen(self, cluster: GpuCluster, node: int, pod: GpuPod) -> frozenset[int]:
        """GPU remainders whose use gives a sharing pod the node's best score (fgd_score.go's gpuId)."""
        self.lookup(cluster, pod, np.array([node], dtype=np.int64))
        return self._chosen[(int(self.states(cluster).node_state[node]), pod.shape)]

    def score(self, cluster: GpuCluster, pod: GpuPod, nodes: IntArray, rng: Draws) -> IntArray:
        return self.lookup(cluster, pod, nodes)

    def select_gpus(self, cluster: GpuCluster, node: int, pod: GpuPod, rng: Draws) -> tuple[int, ...]:
        """allocateGpuIdBasedOnFGDScore: the first GPU (by index) whose use scores best; whole GPUs first-free."""
        if not pod.is_gpu:
            return ()
        left = cluster.gpu_left[node]
        if not pod.is_share:
            return exclusive_gpus(left, pod.gpu_count)
        chosen = self.chosen(cluster, node, pod)
        for i, value in enumerate(left.tolist()):
            if value in chosen and value >= pod.gpu_milli:
                return (i,)
        return (best_fit_gpu(left, pod.gpu_milli),)
