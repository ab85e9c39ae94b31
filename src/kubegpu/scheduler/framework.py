"""A scheduling framework in kube-scheduler's shape: filter, score, normalize, weights, selectHost.

Follows kubernetes v1.35 pkg/scheduler/schedule_one.go (numFeasibleNodesToFind, rotating
nextStartNodeIndex, selectHost's uniform tie-break) and framework/runtime (weighted score sum).
Plugins see every candidate node at once as numpy arrays, so the per-pod cost stays linear in nodes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from kubegpu.errors import ConfigError
from kubegpu.scheduler.draws import Draws, NumpyDraws
from kubegpu.scheduler.gpu.state import BoolArray, GpuCluster, GpuPod, IntArray

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
MAX_NODE_SCORE = 100
# percentageOfNodesToScore 0 (kube-scheduler's default): the adaptive percentage, 50% less 1 point per 125 nodes,
# at least 5%, and at least 100 feasible nodes.
ADAPTIVE_PERCENTAGE = 0
TIE_BREAKS = ("random", "lowest-name")  # upstream reservoir sampling; or the smallest node name


def num_feasible_nodes_to_find(num_all_nodes: int, percentage: int = ADAPTIVE_PERCENTAGE) -> int:
    """How many feasible nodes the scheduler looks for before scoring (adaptive when 0)."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    if percentage >= 100:
        return num_all_nodes
    adaptive = percentage
    if adaptive <= ADAPTIVE_PERCENTAGE:
        adaptive = 50 - num_all_nodes // 125
        if adaptive < MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND:
            adaptive = MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND
    found = num_all_nodes * adaptive // 100
    return max(found, MIN_FEASIBLE_NODES_TO_FIND)


def min_max_normalize(scores: IntArray) -> IntArray:
    """Min-max normalization to 0..100 with integer division (all equal -> 0)."""
    if scores.size == 0:
        return scores.copy()
    low, high = int(scores.min()), int(scores.max())
    if high == low:
        return np.zeros_like(scores)
    out: IntArray = (scores - low) * MAX_NODE_SCORE // (high - low)
    return out


class FilterPlugin(Protocol):
    """A Filter extension point: which nodes may run the pod."""

    name: str

    def filter(self, cluster: GpuCluster, pod: GpuPod) -> BoolArray:
        """Boolean mask over all nodes."""
        ...


class ScorePlugin(Protocol):
    """A Score extension point with its NormalizeScore; scores cover the candidate nodes only."""

    name: str

    def score(self, cluster: GpuCluster, pod: GpuPod, nodes: IntArray, rng: Draws) -> IntArray:
        """Raw integer scores for `nodes` (indices into the cluster)."""
        ...

    def normalize(self, scores: IntArray) -> IntArray:
        """NormalizeScore (identity for plugins without one)."""
        ...


@dataclass(frozen=True)
class Weighted:
    """A score plugin and its weight in the profile."""

    plugin: ScorePlugin
    weight: int = 1


class ResourceFitFilter:
    """NodeResourcesFit + Open-Gpu-Share filters: cpu, memory, pods, GPU count, share and model."""

    name = "NodeResourcesFit"

    def filter(self, cluster: GpuCluster, pod: GpuPod) -> BoolArray:
        """Mask of nodes where the pod fits."""
        return cluster.feasible(pod)


class Framework:
    """One scheduling profile: filters, weighted scorers, percentageOfNodesToScore and its random draws
    (a seeded numpy generator unless `draws` gives another source, such as Go's stream)."""

    def __init__(
        self,
        scorers: Sequence[Weighted],
        filters: Sequence[FilterPlugin] = (ResourceFitFilter(),),
        percentage_of_nodes_to_score: int = 100,
        seed: int = 0,
        tie_break: str = "random",
        name_rank: IntArray | None = None,
        draws: Draws | None = None,
    ) -> None:
        for w in scorers:
            if w.weight < 1:
                raise ConfigError(f"score plugin {w.plugin.name}: weight must be positive")
        if tie_break not in TIE_BREAKS:
            raise ConfigError(f"tie-break {tie_break!r}: choose from {', '.join(TIE_BREAKS)}")
        self.tie_break = tie_break
        self.name_rank = name_rank
        self.scorers = tuple(scorers)
        self.filters = tuple(filters)
        self.percentage = percentage_of_nodes_to_score
        self.rng: Draws = NumpyDraws(seed) if draws is None else draws
        self.next_start = 0

    def feasible_nodes(self, cluster: GpuCluster, pod: GpuPod, restrict: BoolArray | None = None) -> IntArray:
        """Feasible node indices in search order, cut at numFeasibleNodesToFind from the rotating start.

        `restrict` limits the search to some nodes (a nodeSelector, a topology domain).
        """
        mask = np.ones(cluster.size, dtype=np.bool_) if restrict is None else restrict.copy()
        for f in self.filters:
            mask &= f.filter(cluster, pod)
        n = cluster.size
        want = num_feasible_nodes_to_find(n, self.percentage)
        if want >= n:
            return np.flatnonzero(mask).astype(np.int64)
        start = self.next_start
        ordered = np.concatenate((np.flatnonzero(mask[start:]) + start, np.flatnonzero(mask[:start])))
        if len(ordered) > want:
            chosen = ordered[:want].astype(np.int64)
            processed = (int(chosen[-1]) - start) % n + 1  # nodes examined before the cut
        else:
            chosen = ordered.astype(np.int64)
            processed = n
        self.next_start = (start + processed) % n
        return chosen

    def total_scores(self, cluster: GpuCluster, pod: GpuPod, nodes: IntArray) -> IntArray:
        """Σ_plugins weight × normalized score for each candidate."""
        total = np.zeros(len(nodes), dtype=np.int64)
        for w in self.scorers:
            raw = w.plugin.score(cluster, pod, nodes, self.rng)
            total += w.weight * w.plugin.normalize(raw)
        return total

    def select_host(self, nodes: IntArray, totals: IntArray) -> int:
        """The highest total; ties broken uniformly at random (selectHost's reservoir sampling).

        tie_break="lowest-name" takes the tied node whose name sorts first, as the FGD artifact's
        kubernetes fork (mental2008/kubernetes v1.20.5-minor) does; `name_rank[i]` is node i's
        position in name order (node index order when not given).
        """
        best = np.flatnonzero(totals == totals.max())
        if len(best) == 1:
            pick = best[0]
        elif self.tie_break == "lowest-name":
            ranks = nodes[best] if self.name_rank is None else self.name_rank[nodes[best]]
            pick = best[int(np.argmin(ranks))]
        else:
            pick = best[self.rng.intn(len(best))]
        return int(nodes[pick])

    def schedule(self, cluster: GpuCluster, pod: GpuPod, restrict: BoolArray | None = None) -> int | None:
        """One scheduling cycle: the chosen node index, or None when no node is feasible."""
        nodes = self.feasible_nodes(cluster, pod, restrict)
        if len(nodes) == 0:
            return None
        if len(nodes) == 1 or not self.scorers:
            return int(nodes[0]) if len(nodes) == 1 else self.select_host(nodes, np.zeros(len(nodes), dtype=np.int64))
        return self.select_host(nodes, self.total_scores(cluster, pod, nodes))
