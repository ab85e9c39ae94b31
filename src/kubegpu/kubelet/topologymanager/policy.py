"""What every Topology Manager policy returns: the merged hint, the admit verdict and its trace.

Follows kubernetes v1.35 pkg/kubelet/cm/topologymanager/policy.go (Policy.Merge -> hint, admit).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from kubegpu.kubelet.hints import ProviderHints, TopologyHint

POLICY_NONE = "none"
POLICY_BEST_EFFORT = "best-effort"
POLICY_RESTRICTED = "restricted"
POLICY_SINGLE_NUMA_NODE = "single-numa-node"
POLICIES = (POLICY_NONE, POLICY_BEST_EFFORT, POLICY_RESTRICTED, POLICY_SINGLE_NUMA_NODE)


@dataclass(frozen=True)
class MergeResult:
    """The best hint, whether the policy admits it, and the lists the merge worked on."""

    hint: TopologyHint
    admit: bool
    filtered: tuple[tuple[TopologyHint, ...], ...] = ()
    permutations: int = 0
    note: str = ""


class Policy(Protocol):
    """A Topology Manager policy: merge provider hints into one hint and decide admission."""

    @property
    def name(self) -> str: ...

    def merge(self, providers: Sequence[ProviderHints]) -> MergeResult: ...
