"""Topology Manager policy `single-numa-node`: only single-node (or 'any') preferred hints merge.

Follows kubernetes v1.35 pkg/kubelet/cm/topologymanager/policy_single_numa_node.go (the result
equal to the default mask is returned as a nil affinity; prefer-closest has no effect).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kubegpu.kubelet.hints import ProviderHints, TopologyHint
from kubegpu.kubelet.topologymanager.merge import (
    HintMerger,
    filter_provider_hints,
    filter_single_numa_hints,
    max_of_min_affinity_counts,
)
from kubegpu.kubelet.topologymanager.numa_info import NUMAInfo
from kubegpu.kubelet.topologymanager.policy import POLICY_SINGLE_NUMA_NODE, MergeResult


@dataclass(frozen=True)
class SingleNUMANodePolicy:
    """Admit iff one NUMA node (or 'don't care') satisfies every resource at once."""

    numa: NUMAInfo

    @property
    def name(self) -> str:
        return POLICY_SINGLE_NUMA_NODE

    def merge(self, providers: Sequence[ProviderHints]) -> MergeResult:
        filtered = filter_single_numa_hints(filter_provider_hints(providers))
        merger = HintMerger(self.numa, max_of_min_affinity_counts(filtered), False)
        hint, examined = merger.merge(filtered)
        if hint.affinity == self.numa.default_mask:
            hint = TopologyHint(None, hint.preferred)
        return MergeResult(hint, hint.preferred, tuple(tuple(h) for h in filtered), examined)
