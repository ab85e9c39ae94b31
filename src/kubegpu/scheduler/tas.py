"""Topology-aware placement of a pod set over block / rack / host domains read from node labels.

Follows kubernetes-sigs/kueue pkg/cache/scheduler/tas_flavor_snapshot.go (snapshot ff69552e, v0.19):
per-node pod counts summed up the tree, BestFit (count descending, optimise the last domain) and
LeastFreeCapacity (count ascending) domain choice, required / preferred / unconstrained requests.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

import numpy as np

from kubegpu.errors import ConfigError
from kubegpu.scheduler.arrays import IntArray

if TYPE_CHECKING:  # the GPU model reads this module (gpu/why.py): types only here
    from kubegpu.scheduler.gpu.state import GpuCluster, GpuPod

HOSTNAME = "kubernetes.io/hostname"
DEFAULT_LEVELS = ("cloud.provider.com/topology-block", "cloud.provider.com/topology-rack", HOSTNAME)


class Algorithm(StrEnum):
    """Kueue's domain-ordering algorithms."""

    BEST_FIT = "BestFit"
    LEAST_FREE_CAPACITY = "LeastFreeCapacity"


class Mode(StrEnum):
    """The PodSet annotation used: podset-required-topology, -preferred-topology or unconstrained."""

    REQUIRED = "required"
    PREFERRED = "preferred"
    UNCONSTRAINED = "unconstrained"


@dataclass(frozen=True)
class TopologyRequest:
    """A pod set's topology request: the level label and whether it is required or preferred."""

    level: str
    mode: Mode = Mode.REQUIRED


@dataclass(frozen=True)
class Assignment:
    """Pods per node chosen for a pod set (node index -> count) and the level it fitted at."""

    counts: dict[int, int]
    level: str | None


def algorithm_for(mode: Mode) -> Algorithm:
    """TASProfileMixed (default since v0.15): BestFit for required/preferred, LFC for unconstrained."""
    return Algorithm.LEAST_FREE_CAPACITY if mode is Mode.UNCONSTRAINED else Algorithm.BEST_FIT


def pods_that_fit(cluster: GpuCluster, pod: GpuPod) -> IntArray:
    """Copies of `pod` each node can still take: min over cpu, memory, pod slots and GPUs."""
    big = np.iinfo(np.int64).max // 4
    cpu = (cluster.cpu_cap - cluster.cpu_used) // pod.cpu_milli if pod.cpu_milli else np.full(cluster.size, big)
    mem = (cluster.mem_cap - cluster.mem_used) // pod.memory_bytes if pod.memory_bytes else np.full(cluster.size, big)
    slots = cluster.pods_cap - cluster.pods_used
    count = np.minimum(np.minimum(cpu, mem), slots)
    if pod.is_gpu:
        per_gpu = cluster.gpu_left // pod.gpu_milli  # copies each GPU can hold
        gpu = per_gpu.sum(axis=1) if pod.gpu_count == 1 else np.minimum(per_gpu, 1).sum(axis=1) // pod.gpu_count
        count = np.minimum(count, gpu) * cluster.model_mask(pod)
    result: IntArray = np.maximum(count, 0).astype(np.int64)
    return result


class TopologyTree:
    """Domains per level as label-value paths (so rack names need not be globally unique)."""

    def __init__(self, cluster: GpuCluster, levels: Sequence[str] = DEFAULT_LEVELS) -> None:
        if not levels:
            raise ConfigError("a topology needs at least one level")
        self.levels = tuple(levels)
        self.size = cluster.size
        paths: list[list[tuple[str, ...]]] = []
        for spec in cluster.nodes:
            labels = dict(spec.labels)
            labels.setdefault(HOSTNAME, spec.name)
            paths.append([tuple(labels.get(lv, "") for lv in self.levels[: i + 1]) for i in range(len(self.levels))])
        # domain_of[level][node] -> domain id at that level; names keep the label path
        self.domain_of: list[IntArray] = []
        self.domain_names: list[list[tuple[str, ...]]] = []
        for i in range(len(self.levels)):
            names = sorted({p[i] for p in paths})
            index = {n: k for k, n in enumerate(names)}
            self.domain_of.append(np.array([index[p[i]] for p in paths], dtype=np.int64))
            self.domain_names.append(names)
        self.parent: list[IntArray] = [np.zeros(len(self.domain_names[0]), dtype=np.int64)]
        for i in range(1, len(self.levels)):
            par = np.zeros(len(self.domain_names[i]), dtype=np.int64)
            par[self.domain_of[i]] = self.domain_of[i - 1]
            self.parent.append(par)

    def level_index(self, level: str) -> int:
        """Position of a level label; ConfigError for a label the topology does not list."""
        if level not in self.levels:
            raise ConfigError(f"topology level {level!r} is not one of {', '.join(self.levels)}")
        return self.levels.index(level)

    def counts(self, per_node: IntArray, level: int) -> IntArray:
        """Pod counts summed per domain of a level."""
        out: IntArray = np.bincount(
            self.domain_of[level], weights=per_node, minlength=len(self.domain_names[level])
        ).astype(np.int64)
        return out

    def spanned(self, nodes: Sequence[int]) -> dict[str, int]:
        """Distinct domains per level covered by a set of nodes (the "domains spanned" metric)."""
        return {lv: len({int(self.domain_of[i][n]) for n in nodes}) for i, lv in enumerate(self.levels)}


def _order(counts: IntArray, candidates: IntArray, names: Sequence[tuple[str, ...]], algorithm: Algorithm) -> list[int]:
    if algorithm is Algorithm.BEST_FIT:
        return sorted(candidates.tolist(), key=lambda d: (-int(counts[d]), names[d]))
    return sorted(candidates.tolist(), key=lambda d: (int(counts[d]), names[d]))


def _pick(counts: IntArray, ordered: list[int], need: int, algorithm: Algorithm) -> list[tuple[int, int]]:
    """Greedy take in order until `need` is covered; BestFit swaps the last for the tightest fit."""
    taken: list[tuple[int, int]] = []
    left = need
    for i, d in enumerate(ordered):
        if left <= 0:
            break
        have = int(counts[d])
        if have <= 0:
            continue
        if algorithm is Algorithm.BEST_FIT and have >= left:
            rest = [e for e in ordered[i:] if int(counts[e]) >= left]
            d = min(rest, key=lambda e: (int(counts[e]), ordered.index(e)))
            have = int(counts[d])
        take = min(have, left)
        taken.append((d, take))
        left -= take
    return taken if left <= 0 else []


def assign(
    tree: TopologyTree,
    per_node: IntArray,
    need: int,
    request: TopologyRequest | None,
    algorithm: Algorithm | None = None,
) -> Assignment | None:
    """Kueue's findTopologyAssignment for one pod set of `need` identical pods; None when it cannot fit."""
    mode = request.mode if request is not None else Mode.UNCONSTRAINED
    algo = algorithm or algorithm_for(mode)
    bottom = len(tree.levels) - 1
    start = tree.level_index(request.level) if request is not None else 0
    chosen: list[tuple[int, int]] = []
    fit_level: int | None = None
    level = start
    while True:
        counts = tree.counts(per_node, level)
        all_domains = np.arange(len(counts), dtype=np.int64)
        ordered = _order(counts, all_domains, tree.domain_names[level], algo)
        fitting = [d for d in ordered if int(counts[d]) >= need]
        if mode is not Mode.UNCONSTRAINED and fitting:
            if algo is Algorithm.BEST_FIT:
                best = min(fitting, key=lambda d: (int(counts[d]), ordered.index(d)))
            else:
                best = fitting[0]
            chosen, fit_level = [(best, need)], level
            break
        if mode is Mode.REQUIRED:
            return None
        if mode is Mode.PREFERRED and level > 0:
            level -= 1
            continue
        chosen = _pick(counts, ordered, need, algo)  # top level or unconstrained: several domains
        if not chosen:
            return None
        fit_level = None if len(chosen) > 1 else level
        break
    # descend: split each chosen domain's count over its children, down to nodes
    for lv in range(level + 1, bottom + 1):
        counts = tree.counts(per_node, lv)
        nxt: list[tuple[int, int]] = []
        for parent, want in chosen:
            children = np.flatnonzero(tree.parent[lv] == parent).astype(np.int64)
            ordered = _order(counts, children, tree.domain_names[lv], algo)
            part = _pick(counts, ordered, want, algo)
            if not part:
                return None
            nxt.extend(part)
        chosen = nxt
    host_domain = tree.domain_of[bottom]
    out: dict[int, int] = {}
    for dom, count in chosen:
        nodes = np.flatnonzero(host_domain == dom)
        left = count
        for n in nodes.tolist():
            take = min(int(per_node[n]), left)
            if take > 0:
                out[n] = out.get(n, 0) + take
                left -= take
        if left > 0:
            return None
    return Assignment(out, tree.levels[fit_level] if fit_level is not None else None)
