"""The hint merge shared by best-effort, restricted and single-numa-node: permutations, AND, pick.

Follows kubernetes v1.35 pkg/kubelet/cm/topologymanager/policy.go (filterProvidersHints,
mergePermutation, HintMerger.compare, maxOfMinAffinityCounts, narrowestHint).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from itertools import product

from kubegpu.kubelet.bitmask import NUMAMask
from kubegpu.kubelet.hints import ProviderHints, TopologyHint
from kubegpu.kubelet.topologymanager.numa_info import NUMAInfo

ANY_PREFERRED = TopologyHint(None, True)
ANY_NOT_PREFERRED = TopologyHint(None, False)


def filter_provider_hints(providers: Sequence[ProviderHints]) -> list[list[TopologyHint]]:
    """One inner list per (provider, resource): no map -> any/preferred, [] -> any/not preferred."""
    out: list[list[TopologyHint]] = []
    for answer in providers:
        if not answer:
            out.append([ANY_PREFERRED])
            continue
        for resource in sorted(answer):
            hints = answer[resource]
            if hints is None:
                out.append([ANY_PREFERRED])
            elif len(hints) == 0:
                out.append([ANY_NOT_PREFERRED])
            else:
                out.append(list(hints))
    return out


def narrowest_hint(hints: Sequence[TopologyHint]) -> TopologyHint | None:
    best: TopologyHint | None = None
    for hint in hints:
        if hint.affinity is None:
            continue
        if best is None or (best.affinity is not None and hint.affinity.is_narrower_than(best.affinity)):
            best = hint
    return best


def max_of_min_affinity_counts(filtered: Sequence[Sequence[TopologyHint]]) -> int:
    """The largest, over resources, of the bit count of that resource's narrowest hint."""
    result = 0
    for hints in filtered:
        best = narrowest_hint(hints)
        if best is not None and best.affinity is not None:
            result = max(result, best.affinity.count())
    return result


def merge_permutation(default: NUMAMask, permutation: Sequence[TopologyHint]) -> TopologyHint:
    """AND of all non-nil affinities (and the default); preferred iff all preferred and equal."""
    preferred = True
    first = -1
    bits = default.bits
    for hint in permutation:
        affinity = hint.affinity
        if affinity is not None:
            value = affinity.bits
            if first < 0:
                first = value
            elif value != first:
                preferred = False
            bits &= value
        if not hint.preferred:
            preferred = False
    return TopologyHint(NUMAMask(bits), preferred)


def iterate_permutations(
    filtered: Sequence[Sequence[TopologyHint]],
) -> Iterator[tuple[TopologyHint, ...]]:
    """The cross product: one hint from every inner list (none at all if a list is empty)."""
    return product(*filtered)


@dataclass(frozen=True)
class HintMerger:
    """Chooses the best merged hint; `prefer_closest` swaps 'narrowest' for 'closest' masks."""

    numa: NUMAInfo
    best_non_preferred_count: int
    prefer_closest: bool = False

    def _pick_mask(self, current: TopologyHint, candidate: TopologyHint) -> TopologyHint:
        assert current.affinity is not None and candidate.affinity is not None
        if candidate.affinity == current.affinity:
            return current
        chooser: Callable[[NUMAMask, NUMAMask], NUMAMask]
        chooser = self.numa.closest if self.prefer_closest else self.numa.narrowest
        best = chooser(candidate.affinity, current.affinity)
        return current if best == current.affinity else candidate

    def compare(self, current: TopologyHint | None, candidate: TopologyHint) -> TopologyHint | None:
        """Return the better of the current best and a candidate merged hint."""
        if candidate.affinity is None or candidate.affinity.bits == 0:
            return current
        if current is None or current.affinity is None:
            return candidate
        if not current.preferred and candidate.preferred:
            return candidate
        if current.preferred and not candidate.preferred:
            return current
        if current.preferred and candidate.preferred:
            return self._pick_mask(current, candidate)
        target = self.best_non_preferred_count
        cur, cand = current.affinity.bits.bit_count(), candidate.affinity.bits.bit_count()
        if cur > target:
            return self._pick_mask(current, candidate)
        if cur == target:
            return current if cand != target else self._pick_mask(current, candidate)
        if cand > target:
            return current
        if cand == target:
            return candidate
        if cand > cur:
            return candidate
        if cand < cur:
            return current
        return self._pick_mask(current, candidate)

    def merge(self, filtered: Sequence[Sequence[TopologyHint]]) -> tuple[TopologyHint, int]:
        """Best merged hint over all permutations, and how many permutations were examined."""
        default = self.numa.default_mask
        best: TopologyHint | None = None
        examined = 0
        for permutation in iterate_permutations(filtered):
            examined += 1
            best = self.compare(best, merge_permutation(default, permutation))
        if best is None:
            return TopologyHint(default, False), examined
        return best, examined


def filter_single_numa_hints(
    filtered: Sequence[Sequence[TopologyHint]],
) -> list[list[TopologyHint]]:
    """single-numa-node: keep preferred hints that are 'any' or exactly one NUMA node."""
    out: list[list[TopologyHint]] = []
    for hints in filtered:
        out.append([h for h in hints if h.preferred and (h.affinity is None or h.affinity.count() == 1)])
    return out
