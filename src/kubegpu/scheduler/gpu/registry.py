"""Policy names used on the command line and in reports, mapped to their score plugins.

Follows the FGD artifact's experiment labels (01-Random .. 06-FGD) plus our own policy.
"""

from __future__ import annotations

from collections.abc import Sequence

from kubegpu.errors import ConfigError
from kubegpu.scheduler.gpu.fragmentation import TypicalPod
from kubegpu.scheduler.gpu.ours import FragBestFitScore
from kubegpu.scheduler.gpu.policies import (
    BestFitScore,
    DotProductScore,
    FGDScore,
    GpuClusteringScore,
    GpuPackingScore,
    RandomScore,
)

PAPER_POLICIES = ("random", "dotprod", "clustering", "packing", "bestfit", "fgd")
ALL_POLICIES = (*PAPER_POLICIES, "ours")
ARTIFACT_LABELS = {
    "random": "01-Random", "dotprod": "02-DotProd", "clustering": "03-GpuClustering",
    "packing": "04-GpuPacking", "bestfit": "05-BestFit", "fgd": "06-FGD",
}
PluginType = (RandomScore | DotProductScore | GpuClusteringScore | GpuPackingScore | BestFitScore
              | FGDScore | FragBestFitScore)


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


def parse_policies(text: str) -> tuple[str, ...]:
    """`fgd,bestfit` or `all` -> policy names, validated."""
    names = ALL_POLICIES if text.strip() == "all" else tuple(p.strip() for p in text.split(",") if p.strip())
    for name in names:
        if name not in ALL_POLICIES:
            raise ConfigError(f"unknown policy {name!r}; choose from {', '.join(ALL_POLICIES)} or all")
    if not names:
        raise ConfigError("no policy given")
    return names
