"""Which CPUs the static policy hands out: takeByTopology, packed and NUMA-distributed.

Follows kubernetes v1.35 pkg/kubelet/cm/cpumanager/cpu_assignment.go: whole NUMA nodes/sockets
first (the larger unit first), then (prefer-align-cpus-by-uncorecache) whole or partial uncore
(L3) cache groups, then whole cores, then single threads, always preferring the unit with the
fewest free CPUs; spread mode skips whole cores; the distributed mode balances the request over
the fewest NUMA nodes in groups of `cpu_group_size`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from itertools import combinations

from kubegpu.errors import ModelError
from kubegpu.kubelet.cpumanager.cpuset import ids_of, size
from kubegpu.kubelet.cpumanager.topology import CPUTopology

PACKED = "packed"
SPREAD = "spread"


class CPUAllocationError(ModelError):
    """The allocator could not find enough CPUs (a plain error in the kubelet)."""


def _sorted_ids(ids: Sequence[int], free: Callable[[int], int]) -> list[int]:
    """Ascending by free CPUs contained, then id (cpuAccumulator.sort)."""
    return [i for _, i in sorted([(free(i), i) for i in ids])]


class Accumulator:
    """Claims CPUs from `available` until `needed` reaches zero (cpuAccumulator)."""

    def __init__(self, topo: CPUTopology, available: int, needed: int, strategy: str = PACKED):
        self.topo = topo
        self.details = available & topo.all_bits
        self.needed = needed
        self.result = 0
        self.strategy = strategy
        self.numa_first = topo.num_sockets >= topo.num_numa_nodes

    # -- counting within the still-available CPUs ------------------------------------------
    def _free_in_core(self, core: int) -> int:
        return (self.details & self.topo.core_bits[core]).bit_count()

    def _free_in_socket(self, socket: int) -> int:
        return (self.details & self.topo.socket_bits[socket]).bit_count()

    def _free_in_numa(self, numa: int) -> int:
        return (self.details & self.topo.numa_bits[numa]).bit_count()

    def _free_in_uncore(self, uncore: int) -> int:
        return (self.details & self.topo.uncore_bits[uncore]).bit_count()

    def _avail_numas(self, within: int = -1) -> list[int]:
        d = self.details & within
        return [n for n, b in self.topo.numa_bits.items() if d & b]

    def _avail_sockets(self, within: int = -1) -> list[int]:
        d = self.details & within
        return [s for s, b in self.topo.socket_bits.items() if d & b]

    def _sorted_cores(self, cores: tuple[tuple[int, int], ...], within: int) -> list[int]:
        """Cores (of a socket or NUMA node) with free CPUs inside `within`, by free CPUs, id."""
        d = self.details & within
        keyed = [((d & b).bit_count(), c) for c, b in cores if d & b]
        keyed.sort()
        return [c for _, c in keyed]

    # -- orderings -----------------------------------------------------------------------
    def sort_numa_nodes(self) -> list[int]:
        if self.numa_first:
            return _sorted_ids(self._avail_numas(), self._free_in_numa)
        out: list[int] = []
        for socket in self.sort_sockets():
            within = self.topo.socket_bits[socket]
            out.extend(_sorted_ids(self._avail_numas(within), self._free_in_numa))
        return out

    def sort_sockets(self) -> list[int]:
        if not self.numa_first:
            return _sorted_ids(self._avail_sockets(), self._free_in_socket)
        out: list[int] = []
        for numa in self.sort_numa_nodes():
            within = self.topo.numa_bits[numa]
            out.extend(_sorted_ids(self._avail_sockets(within), self._free_in_socket))
        return out

    def sort_cores(self) -> list[int]:
        out: list[int] = []
        if self.numa_first:
            for socket in self.sort_sockets():
                cores = self.topo.cores_in_socket[socket]
                out.extend(self._sorted_cores(cores, self.topo.socket_bits[socket]))
        else:
            for numa in self.sort_numa_nodes():
                cores = self.topo.cores_in_numa[numa]
                out.extend(self._sorted_cores(cores, self.topo.numa_bits[numa]))
        return out

    def sort_cpus(self) -> list[int]:
        """Free CPUs: core by core (packed) or socket by socket in id order (spread)."""
        out: list[int] = []
        if self.strategy == SPREAD:
            for socket in self.sort_sockets():
                out.extend(ids_of(self.details & self.topo.socket_bits[socket]))
        else:
            for core in self.sort_cores():
                out.extend(ids_of(self.details & self.topo.core_bits[core]))
        return out

    def sort_uncore_caches(self) -> list[int]:
        """L3 groups with free CPUs, NUMA node by NUMA node (sortAvailableUncoreCaches).

        Within a NUMA node: fewest free CPUs (counted over the whole group) first, then id; a group
        spanning several NUMA nodes is listed once under each, as upstream lists it.
        """
        out: list[int] = []
        for numa in self.sort_numa_nodes():
            d = self.details & self.topo.numa_bits[numa]
            ids = [u for u, b in self.topo.uncore_bits.items() if d & b]
            out.extend(_sorted_ids(ids, self._free_in_uncore))
        return out

    def free_uncore_caches(self) -> list[int]:
        """Groups whose CPUs are all still available, in sort_uncore_caches order (freeUncoreCache)."""
        bits = self.topo.uncore_bits
        return [u for u in self.sort_uncore_caches() if self._free_in_uncore(u) == bits[u].bit_count()]

    def free_numa_nodes(self) -> list[int]:
        return [n for n in self.sort_numa_nodes() if self._free_in_numa(n) == self.topo.numa_bits[n].bit_count()]

    def free_sockets(self) -> list[int]:
        per = self.topo.cpus_per_socket
        return [s for s in self.sort_sockets() if self._free_in_socket(s) == per]

    def free_cores(self) -> list[int]:
        per = self.topo.cpus_per_core
        d = self.details
        core_bits = self.topo.core_bits
        return [c for c in self.sort_cores() if (d & core_bits[c]).bit_count() == per]

    # -- claiming ------------------------------------------------------------------------
    def take(self, bits: int) -> None:
        self.result |= bits
        self.details &= ~self.result
        self.needed -= bits.bit_count()

    def needs_at_least(self, n: int) -> bool:
        return self.needed >= n

    def satisfied(self) -> bool:
        return self.needed < 1

    def failed(self) -> bool:
        return self.needed > self.details.bit_count()

    def take_full_numa_nodes(self) -> None:
        for numa in self.free_numa_nodes():
            bits = self.topo.numa_bits[numa]
            if self.needs_at_least(bits.bit_count()):
                self.take(bits)

    def take_full_sockets(self) -> None:
        for socket in self.free_sockets():
            bits = self.topo.socket_bits[socket]
            if self.needs_at_least(bits.bit_count()):
                self.take(bits)

    def take_full_cores(self) -> None:
        per = self.topo.cpus_per_core
        if self.needed < per:
            return
        for core in self.free_cores():
            bits = self.topo.core_bits[core]
            if self.needed >= bits.bit_count():
                self.take(bits)
            if self.needed < per:  # every core has `per` CPUs: nothing more can be taken
                return

    def take_full_uncore(self) -> None:
        """Claim every wholly free L3 group the request still covers entirely (takeFullUncore)."""
        for uncore in self.free_uncore_caches():
            bits = self.topo.uncore_bits[uncore]
            if self.needs_at_least(bits.bit_count()):
                self.take(bits)

    def take_partial_uncore(self, uncore: int) -> None:
        """Claim the rest of the request inside one L3 group, or nothing (takePartialUncore).

        The lowest-id cores of the group that still have a free CPU, ceil(needed / threads per
        core) of them, are taken when their free CPUs match the need exactly; an odd need on an
        SMT machine drops the highest CPU id of that set first.
        """
        per_core = self.topo.cpus_per_core
        cores_needed = (self.needed + per_core - 1) // per_core
        in_cache = self.details & self.topo.uncore_bits[uncore]
        cores = sorted({self.topo.cpu_core[cpu] for cpu in ids_of(in_cache)})[:cores_needed]
        free = 0
        for core in cores:
            free |= self.details & self.topo.core_bits[core]
        if self.needed % 2 != 0 and per_core > 1:
            cpus = ids_of(free)
            if len(cpus) > self.needed:
                free &= ~(1 << cpus[-1])
        if free.bit_count() == self.needed:
            self.take(free)

    def take_uncore_cache(self) -> None:
        """Whole L3 groups while the need is at least a group's average size, else one partial group."""
        per_uncore = self.topo.cpus_per_uncore_cache
        for uncore in self.sort_uncore_caches():
            if self.needs_at_least(per_uncore):
                self.take_full_uncore()
            if self.satisfied():
                return
            self.take_partial_uncore(uncore)
            if self.satisfied():
                return

    def take_remaining_cpus(self) -> None:
        for cpu in self.sort_cpus():
            self.take(1 << cpu)
            if self.satisfied():
                return

    def numa_range_needed(self, group: int) -> tuple[int, int]:
        """(min, max) NUMA nodes needed for the request in groups of `group` CPUs."""
        num_numa = self.topo.num_numa_nodes
        available_numa = len(self._avail_numas())
        groups_total = (self.topo.num_cpus - 1) // group + 1
        groups_per_numa = (groups_total - 1) // num_numa + 1
        groups_needed = (self.needed - 1) // group + 1
        low = (groups_needed - 1) // groups_per_numa + 1
        return low, min(groups_needed, available_numa)


def _not_enough(requested: int, available: int) -> CPUAllocationError:
    return CPUAllocationError(
        f"not enough cpus available to satisfy request: requested={requested}, available={available}"
    )


def take_by_topology_numa_packed(
    topo: CPUTopology,
    available: int,
    num_cpus: int,
    strategy: str = PACKED,
    prefer_align_by_uncore_cache: bool = False,
) -> int:
    """The default allocator; returns the CPU bitset taken or raises CPUAllocationError."""
    acc = Accumulator(topo, available, num_cpus, strategy)
    if acc.satisfied():
        return acc.result
    if acc.failed():
        raise _not_enough(num_cpus, size(available))
    if acc.numa_first:
        acc.take_full_numa_nodes()
        if acc.satisfied():
            return acc.result
        acc.take_full_sockets()
    else:
        acc.take_full_sockets()
        if acc.satisfied():
            return acc.result
        acc.take_full_numa_nodes()
    if acc.satisfied():
        return acc.result
    if prefer_align_by_uncore_cache:
        acc.take_uncore_cache()
        if acc.satisfied():
            return acc.result
    if strategy != SPREAD:
        acc.take_full_cores()
        if acc.satisfied():
            return acc.result
    acc.take_remaining_cpus()
    if acc.satisfied():
        return acc.result
    raise CPUAllocationError("failed to allocate cpus")


def _round3(value: float) -> float:
    """Go's math.Round(x*1000)/1000 (half away from zero) for non-negative x."""
    return math.floor(value * 1000 + 0.5) / 1000


def _std_dev(values: Sequence[int]) -> float:
    mean = _round3(sum(values) / len(values))
    var = sum((v - mean) * (v - mean) for v in values) / len(values)
    return _round3(math.sqrt(var))


def _combos(items: Sequence[int], k: int) -> Iterator[tuple[int, ...]]:
    if k < 1:
        return iter(())
    return combinations(items, k)


def take_by_topology_numa_distributed(
    topo: CPUTopology, available: int, num_cpus: int, group: int, strategy: str = PACKED
) -> int:
    """distribute-cpus-across-numa: balance over the fewest NUMA nodes, else fall back to packed."""
    if num_cpus % group != 0:
        return take_by_topology_numa_packed(topo, available, num_cpus, strategy)
    acc = Accumulator(topo, available, num_cpus, strategy)
    if acc.satisfied():
        return acc.result
    if acc.failed():
        raise _not_enough(num_cpus, size(available))
    numas = acc.sort_numa_nodes()
    free = {n: acc._free_in_numa(n) for n in numas}
    low, high = acc.numa_range_needed(group)
    for k in range(low, high + 1):
        best_balance = math.inf
        best_combo: tuple[int, ...] | None = None
        best_remainder: tuple[int, ...] = ()
        for combo in _combos(numas, k):
            if best_balance == 0:
                break
            balance, remainder_numas = _combo_balance(combo, free, num_cpus, group)
            if balance < best_balance:
                best_balance, best_combo, best_remainder = balance, combo, remainder_numas
        if best_combo is None:
            continue
        _take_distributed(acc, topo, best_combo, best_remainder, num_cpus, group, strategy)
        if acc.needed != 0:
            raise CPUAllocationError(f"accounting error, not enough CPUs allocated, remaining: {acc.needed}")
        return acc.result
    return take_by_topology_numa_packed(topo, available, num_cpus, strategy)


def _combo_balance(
    combo: tuple[int, ...], free: Mapping[int, int], num_cpus: int, group: int
) -> tuple[float, tuple[int, ...]]:
    """How evenly the NUMA nodes' free CPUs are left when `combo` takes an equal share of the CPUs (the standard
    deviation; inf when it cannot), and the nodes that take the remainder, one group at a time."""
    if sum(free[n] for n in combo) < num_cpus:
        return math.inf, ()
    if sum(free[n] // group for n in combo) * group < num_cpus:
        return math.inf, ()
    share = (num_cpus // len(combo) // group) * group
    if any(free[n] < share for n in combo):
        return math.inf, ()
    after = dict(free)
    for n in combo:
        after[n] -= share
    remainder = num_cpus - share * len(combo)
    local_best = math.inf
    local_rem: tuple[int, ...] = ()
    if remainder == 0:
        local_best = _std_dev(list(after.values()))
    candidates = [n for n in combo if after[n] >= group]
    for size_k in range(len(candidates), 0, -1):
        if remainder <= 0:
            break
        for subset in combinations(candidates, size_k):
            if sum(after[n] for n in subset) < remainder:
                continue
            balance = _std_dev(list(_spread_remainder(after, subset, remainder, group).values()))
            if balance < local_best:
                local_best, local_rem = balance, subset
    return local_best, local_rem


def _spread_remainder(after: Mapping[int, int], subset: tuple[int, ...], remainder: int, group: int) -> dict[int, int]:
    """The free CPUs per NUMA node once `subset` takes the remainder one group at a time, round robin."""
    trial = dict(after)
    left = remainder
    while left > 0:
        for n in subset:
            if left == 0:
                break
            if trial[n] < group:
                continue
            trial[n] -= group
            left -= group
    return trial


def _take_distributed(
    acc: Accumulator,
    topo: CPUTopology,
    combo: tuple[int, ...],
    remainder_numas: tuple[int, ...],
    num_cpus: int,
    group: int,
    strategy: str,
) -> None:
    """Take an equal share from each NUMA node of `combo`, then the remainder a group at a time."""
    share = (num_cpus // len(combo) // group) * group
    for n in combo:
        acc.take(take_by_topology_numa_packed(topo, acc.details & topo.numa_bits[n], share, strategy))
    left = num_cpus - share * len(combo)
    while left > 0:
        progressed = False
        for n in remainder_numas:
            if left == 0:
                break
            if (acc.details & topo.numa_bits[n]).bit_count() < group:
                continue
            acc.take(take_by_topology_numa_packed(topo, acc.details & topo.numa_bits[n], group, strategy))
            left -= group
            progressed = True
        if not progressed:
            break
