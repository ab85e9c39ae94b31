"""NUMA affinity bitmasks: bit i set means NUMA node i; ordering by width, then numeric value.

Follows kubernetes v1.35 pkg/kubelet/cm/topologymanager/bitmask (64-bit masks, IsNarrowerThan,
IterateBitMasks over every non-empty subset).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import combinations

from kubegpu.errors import ModelError

MAX_BITS = 64


@dataclass(frozen=True, slots=True)
class NUMAMask:
    """A set of NUMA node ids held as an integer (bit i = node i)."""

    bits: int = 0

    @classmethod
    def of(cls, ids: Iterable[int]) -> NUMAMask:
        """The mask with exactly these node ids set; ids must lie in 0..63 as in the kubelet."""
        value = 0
        for node in ids:
            if node < 0 or node >= MAX_BITS:
                raise ModelError(f"NUMA node id {node} is outside the kubelet's 64-bit mask")
            value |= 1 << node
        return cls(value)

    def count(self) -> int:
        return self.bits.bit_count()

    def ids(self) -> tuple[int, ...]:
        """The set node ids, ascending (GetBits)."""
        out: list[int] = []
        value, node = self.bits, 0
        while value:
            if value & 1:
                out.append(node)
            value >>= 1
            node += 1
        return tuple(out)

    def is_set(self, node: int) -> bool:
        return node >= 0 and bool(self.bits >> node & 1)

    def any_set(self, nodes: Iterable[int]) -> bool:
        return any(self.is_set(n) for n in nodes)

    def is_empty(self) -> bool:
        return self.bits == 0

    def is_less_than(self, other: NUMAMask) -> bool:
        """Numeric comparison: the mask with more low-numbered bits set is 'less'."""
        return self.bits < other.bits

    def is_narrower_than(self, other: NUMAMask) -> bool:
        """Fewer bits is narrower; with equal counts the numerically smaller mask is."""
        mine, theirs = self.count(), other.count()
        if mine == theirs:
            return self.bits < other.bits
        return mine < theirs

    def and_(self, other: NUMAMask) -> NUMAMask:
        return NUMAMask(self.bits & other.bits)

    def contains(self, other: NUMAMask) -> bool:
        """True when every node of `other` is also in this mask."""
        return other.bits & ~self.bits == 0

    def __str__(self) -> str:
        return "{" + ",".join(str(n) for n in self.ids()) + "}"


MAX_ENUMERABLE_NUMA_NODES = 16


def iterate_masks(nodes: Iterable[int]) -> Iterator[NUMAMask]:
    """Every non-empty subset of `nodes`, by size then lexicographic order (IterateBitMasks).

    Raises ModelError past 16 NUMA nodes: 2^N masks would not finish (a probed GB200 tray shows 34
    NUMA nodes; the kubelet itself refuses more than max-allowable-numa-nodes, 8 by default).
    """
    ordered = sorted(set(nodes))
    if len(ordered) > MAX_ENUMERABLE_NUMA_NODES:
        raise ModelError(
            f"the node has {len(ordered)} NUMA nodes: hint generation enumerates every NUMA mask "
            f"(2^{len(ordered)}), and the model stops at {MAX_ENUMERABLE_NUMA_NODES} NUMA nodes; "
            "the kubelet refuses more than max-allowable-numa-nodes (default 8)"
        )
    for size in range(1, len(ordered) + 1):
        for combo in combinations(ordered, size):
            yield NUMAMask.of(combo)
