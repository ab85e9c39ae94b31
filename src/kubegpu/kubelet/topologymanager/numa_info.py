"""NUMA nodes and distances for the Topology Manager: default mask, narrowest and closest masks.

Follows kubernetes v1.35 pkg/kubelet/cm/topologymanager/numa_info.go (average distance over all
ordered pairs of the mask, diagonal included).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from kubegpu.kubelet.bitmask import NUMAMask


@dataclass(frozen=True)
class NUMAInfo:
    """The machine's NUMA node ids and (optionally) the distance matrix d[i][j]."""

    nodes: tuple[int, ...]
    distances: Mapping[int, Mapping[int, int]] = field(default_factory=dict)

    @property
    def default_mask(self) -> NUMAMask:
        """All NUMA nodes of the machine (DefaultAffinityMask)."""
        return NUMAMask.of(self.nodes)

    def narrowest(self, m1: NUMAMask, m2: NUMAMask) -> NUMAMask:
        return m1 if m1.is_narrower_than(m2) else m2

    def average_distance(self, mask: NUMAMask) -> float:
        """Mean of d[i][j] over all ordered pairs (i, j) of the mask, i == j included."""
        bits = mask.ids()
        if not bits:
            return 0.0
        total = 0
        for a in bits:
            row = self.distances.get(a, {})
            for b in bits:
                total += row.get(b, 10 if a == b else 0)
        return total / (len(bits) * len(bits))

    def closest(self, m1: NUMAMask, m2: NUMAMask) -> NUMAMask:
        """Fewer nodes wins; equal counts: smaller average distance, then numerically smaller."""
        if m1.count() != m2.count():
            return self.narrowest(m1, m2)
        d1, d2 = self.average_distance(m1), self.average_distance(m2)
        if d1 == d2:
            return m1 if m1.is_less_than(m2) else m2
        return m1 if d1 < d2 else m2


def split_distances(raw: str) -> list[int]:
    """Parse a sysfs `nodeN/distance` line ("10 20"); raise ValueError on a non-unsigned value."""
    out: list[int] = []
    for token in raw.split():
        if not token.isdigit():
            raise ValueError(f"cannot convert {token!r} to an unsigned distance")
        out.append(int(token))
    return out


def numa_info_from_matrix(nodes: Sequence[int], matrix: Sequence[Sequence[int]]) -> NUMAInfo:
    """Build NUMAInfo from a row/column-ordered distance matrix (vector fixture form)."""
    distances = {a: {b: int(matrix[i][j]) for j, b in enumerate(nodes)} for i, a in enumerate(nodes)}
    return NUMAInfo(nodes=tuple(nodes), distances=distances)
