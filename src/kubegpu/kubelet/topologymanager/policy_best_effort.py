"""Topology Manager policy `best-effort`: merge hints, keep the best one, always admit.

Follows kubernetes v1.35 pkg/kubelet/cm/topologymanager/policy_best_effort.go.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from kubegpu.kubelet.hints import ProviderHints
from kubegpu.kubelet.topologymanager.merge import (
    HintMerger,
    filter_provider_hints,
    max_of_min_affinity_counts,
)
from kubegpu.kubelet.topologymanager.numa_info import NUMAInfo
from kubegpu.kubelet.topologymanager.options import TopologyManagerOptions
from kubegpu.kubelet.topologymanager.policy import POLICY_BEST_EFFORT, MergeResult


@dataclass(frozen=True)
class BestEffortPolicy:
    """Merges with the narrowest (or closest) rule; admission never depends on the hint."""

    numa: NUMAInfo
    options: TopologyManagerOptions = field(default_factory=TopologyManagerOptions)

    @property
    def name(self) -> str:
        return POLICY_BEST_EFFORT

    def admits(self, preferred: bool) -> bool:
        return True

    def merge(self, providers: Sequence[ProviderHints]) -> MergeResult:
        filtered = filter_provider_hints(providers)
        merger = HintMerger(self.numa, max_of_min_affinity_counts(filtered), self.options.prefer_closest_numa)
        hint, examined = merger.merge(filtered)
        return MergeResult(
            hint,
            self.admits(hint.preferred),
            tuple(tuple(h) for h in filtered),
            examined,
        )
