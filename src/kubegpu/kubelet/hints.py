"""Topology hints and hint-provider answers as the Topology Manager sees them.

Follows kubernetes v1.35 pkg/kubelet/cm/topologymanager (TopologyHint; nil vs empty hint lists).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kubegpu.kubelet.bitmask import NUMAMask


@dataclass(frozen=True, slots=True)
class TopologyHint:
    """A NUMA affinity (None = no preference / any node) and whether it is preferred."""

    affinity: NUMAMask | None
    preferred: bool

    def describe(self) -> str:
        where = "any" if self.affinity is None else str(self.affinity)
        return f"{where}{' preferred' if self.preferred else ' not-preferred'}"


# A provider answers per resource: None = no preference, () = no possible placement, else hints.
ResourceHints = Sequence[TopologyHint] | None
ProviderHints = Mapping[str, ResourceHints] | None


def hint_to_json(hint: TopologyHint) -> dict[str, object]:
    """JSON form used by the vectors and `-o json`: affinity as sorted ids or null."""
    return {
        "affinity": None if hint.affinity is None else list(hint.affinity.ids()),
        "preferred": hint.preferred,
    }
