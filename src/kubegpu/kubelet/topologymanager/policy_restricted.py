"""Topology Manager policy `restricted`: best-effort's merge, admit only a preferred hint.

Follows kubernetes v1.35 pkg/kubelet/cm/topologymanager/policy_restricted.go.
"""

from __future__ import annotations

from dataclasses import dataclass

from kubegpu.kubelet.topologymanager.policy import POLICY_RESTRICTED
from kubegpu.kubelet.topologymanager.policy_best_effort import BestEffortPolicy


@dataclass(frozen=True)
class RestrictedPolicy(BestEffortPolicy):
    """Same merge as best-effort; a non-preferred result is a TopologyAffinityError."""

    @property
    def name(self) -> str:
        return POLICY_RESTRICTED

    def admits(self, preferred: bool) -> bool:
        return preferred
