"""Topology Manager policy `none`: no merge, every pod admitted (allocation errors still reject).

Follows kubernetes v1.35 pkg/kubelet/cm/topologymanager/policy_none.go.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kubegpu.kubelet.hints import ProviderHints, TopologyHint
from kubegpu.kubelet.topologymanager.policy import POLICY_NONE, MergeResult


@dataclass(frozen=True)
class NonePolicy:
    """Returns the empty hint (nil affinity, not preferred) and admits."""

    @property
    def name(self) -> str:
        return POLICY_NONE

    def merge(self, providers: Sequence[ProviderHints]) -> MergeResult:
        return MergeResult(TopologyHint(None, False), True, note="policy none: hints are not merged")
