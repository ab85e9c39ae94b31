"""Policy names used on the command line and in reports, mapped to their score plugins.

Follows the FGD artifact's experiment labels (01-Random .. 06-FGD) plus our own policy.
"""

from __future__ import annotations

from collections.abc import Sequence

from kubegpu.errors import ConfigError
from kubegpu.scheduler.framework import Weighted
from kubegpu.scheduler.gpu.fragmentation import TypicalPod
from kubegpu.scheduler.gpu.k8s_plugins import BalancedAllocationScore, NodeResourcesFitScore, VolcanoBinpackScore
from kubegpu.scheduler.gpu.ours import FragBestFitScore
from kubegpu.scheduler.gpu.policies import (
    BestFitScore,
    DotProductScore,
    FGDScore,
    GpuClusteringScore,
    GpuPackingScore,
    RandomScore,
)
from kubegpu.scheduler.gpu.state import GpuCluster, GpuPod
from kubegpu.scheduler.noderesources import ResourceSpec, ShapePoint, Strategy

PAPER_POLICIES = ("random", "dotprod", "clustering", "packing", "bestfit", "fgd")
ALL_POLICIES = (*PAPER_POLICIES, "ours")
K8S_PROFILES = ("k8s-default", "most-allocated", "least-allocated", "rtcr-binpack", "volcano-binpack")
PROFILES = (*ALL_POLICIES, *K8S_PROFILES)
ARTIFACT_LABELS = {
    "random": "01-Random",
    "dotprod": "02-DotProd",
    "clustering": "03-GpuClustering",
    "packing": "04-GpuPacking",
    "bestfit": "05-BestFit",
    "fgd": "06-FGD",
}
PluginType = (
    RandomScore | DotProductScore | GpuClusteringScore | GpuPackingScore | BestFitScore | FGDScore | FragBestFitScore
)


def make_policy(name: str, typical: Sequence[TypicalPod]) -> PluginType:
    """A fresh score plugin for one run (FGD-based plugins keep per-run caches)."""
    if name == "random":
        return RandomScore()
    if name == "dotprod":
        return DotProductScore()
    if name == "clustering":
        return GpuClusteringScore()
    if name == "packing":
        return GpuPackingScore()
    if name == "bestfit":
        return BestFitScore()
    if name == "fgd":
        return FGDScore(typical)
    if name == "ours":
        return FragBestFitScore(typical)
    raise ConfigError(f"unknown policy {name!r}; choose from {', '.join(ALL_POLICIES)}")


def make_profile(
    name: str, typical: Sequence[TypicalPod]
) -> tuple[list[Weighted[GpuCluster, GpuPod]], PluginType | NodeResourcesFitScore | VolcanoBinpackScore]:
    """Weighted score plugins of a profile and the plugin that picks GPUs on the chosen node.

    FGD-study policies run alone with weight 1000 (as in the artifact); k8s-default is
    LeastAllocated + BalancedAllocation (weights 1, 1); the bin-packing profiles score cpu,
    memory and nvidia.com/gpu with weights 1, 1, 3.
    """
    resources = (ResourceSpec("cpu", 1), ResourceSpec("memory", 1), ResourceSpec("nvidia.com/gpu", 3))
    if name == "k8s-default":
        fit = NodeResourcesFitScore(Strategy.LEAST_ALLOCATED, resources[:2])
        return [Weighted(fit, 1), Weighted(BalancedAllocationScore(), 1)], fit
    if name == "least-allocated":
        fit = NodeResourcesFitScore(Strategy.LEAST_ALLOCATED, resources)
        return [Weighted(fit, 1)], fit
    if name == "most-allocated":
        fit = NodeResourcesFitScore(Strategy.MOST_ALLOCATED, resources)
        return [Weighted(fit, 1)], fit
    if name == "volcano-binpack":
        binpack = VolcanoBinpackScore()
        return [Weighted(binpack, 1)], binpack
    if name == "rtcr-binpack":
        shape = (ShapePoint(0, 0), ShapePoint(100, 10))
        fit = NodeResourcesFitScore(Strategy.REQUESTED_TO_CAPACITY_RATIO, resources, shape)
        return [Weighted(fit, 1)], fit
    plugin = make_policy(name, typical)
    return [Weighted(plugin, 1000)], plugin


def parse_policies(text: str) -> tuple[str, ...]:
    """`fgd,bestfit` or `all` -> policy names, validated."""
    names = ALL_POLICIES if text.strip() == "all" else tuple(p.strip() for p in text.split(",") if p.strip())
    for name in names:
        if name not in PROFILES:
            raise ConfigError(f"unknown policy {name!r}; choose from {', '.join(PROFILES)} or all")
    if not names:
        raise ConfigError("no policy given")
    return names
