"""prefer-align-cpus-by-uncorecache on nodes with several L3 groups, each result derived by hand.

Derivations follow kubernetes v1.35 cpu_assignment.go: after whole NUMA nodes / sockets,
takeUncoreCache walks the L3 groups (NUMA node by NUMA node, fewest free CPUs first, then id);
while the need is at least the average group size (CPUs / groups) it takes wholly free groups,
then it tries one partial group: the ceil(need / threads-per-core) lowest-id cores that still have
a free CPU, claimed only when their free CPUs equal the need (an odd need on SMT drops the highest
CPU id first). Whatever is left goes to whole cores and single threads as before.

Node "EPYC": one socket, 8 CCDs (L3 groups) of 8 cores x 2 threads = 128 CPUs, socket-blocked
numbering: core c (0-63) = CPUs c and c+64, CCD = c // 8. So CCD k = CPUs 8k..8k+7, 64+8k..64+8k+7
(16 CPUs), and the average group size is 128 / 8 = 16.
"""

from __future__ import annotations

from collections.abc import Iterable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubegpu.kubelet import KubeletConfig, KubeletStartupError, NodeState
from kubegpu.kubelet.cpumanager.assignment import Accumulator, CPUAllocationError, take_by_topology_numa_packed
from kubegpu.kubelet.cpumanager.cpuset import bits_of, ids_of
from kubegpu.kubelet.cpumanager.topology import CPUTopology
from kubegpu.topology.model import CPUInfo, NodeTopology, NUMANode
from tests.kubelet.scenarios import pod

CORES = 64


def _epyc_cpus(numa_per_socket: int = 1) -> tuple[CPUInfo, ...]:
    per_numa = CORES // numa_per_socket
    return tuple(
        CPUInfo(id=cpu, core=cpu % CORES, socket=0, numa=(cpu % CORES) // per_numa, uncore_cache=(cpu % CORES) // 8)
        for cpu in range(2 * CORES)
    )


def _ccd(k: int, cores: Iterable[int] | None = None) -> set[int]:
    """CPUs of CCD k (or of the given cores of it)."""
    chosen = range(8 * k, 8 * k + 8) if cores is None else cores
    return {c for core in chosen for c in (core, core + CORES)}


def _busy(*cores: int) -> int:
    """Available bitset with the given cores (both threads) in use."""
    return bits_of(set(range(2 * CORES)) - {c for core in cores for c in (core, core + CORES)})


EPYC = CPUTopology.from_cpus(_epyc_cpus())
EPYC_NPS2 = CPUTopology.from_cpus(_epyc_cpus(numa_per_socket=2))


def _take(topo: CPUTopology, available: int, n: int, uncore: bool) -> set[int]:
    return set(ids_of(take_by_topology_numa_packed(topo, available, n, prefer_align_by_uncore_cache=uncore)))


def test_topology_groups_cpus_by_uncore_cache() -> None:
    assert EPYC.num_uncore_caches == 8
    assert EPYC.cpus_per_uncore_cache == 16
    assert set(ids_of(EPYC.uncore_bits[3])) == _ccd(3)


def test_whole_free_ccd_is_preferred_over_the_partly_used_one() -> None:
    # Cores 0,1 busy: CCD 0 has 12 free CPUs. Need 16 >= 16 -> takeFullUncore over the wholly
    # free groups in order [1..7] (CCD 0 is not free) -> CCD 1 exactly.
    assert _take(EPYC, _busy(0, 1), 16, uncore=True) == _ccd(1)
    # Without the option whole cores go by (free CPUs, id): cores 2-7 of CCD 0, then 8, 9.
    assert _take(EPYC, _busy(0, 1), 16, uncore=False) == _ccd(0, range(2, 8)) | _ccd(1, (8, 9))


def test_partial_request_moves_to_the_next_ccd_when_the_used_one_cannot_hold_it() -> None:
    # Cores 0-4 busy: CCD 0 keeps cores 5,6,7 (6 CPUs). Need 8 < 16: no whole group. Order
    # [0 (6 free), 1, ..., 7]. Partial CCD 0: 4 cores wanted, only {5,6,7} -> 6 != 8 -> skip.
    # Partial CCD 1: cores 8-11 -> 8 CPUs == need -> claimed.
    assert _take(EPYC, _busy(0, 1, 2, 3, 4), 8, uncore=True) == _ccd(1, range(8, 12))
    # Without the option: cores 5, 6, 7, 8 -> split over two L3 groups.
    assert _take(EPYC, _busy(0, 1, 2, 3, 4), 8, uncore=False) == _ccd(0, (5, 6, 7)) | _ccd(1, (8,))


def test_partial_request_packs_into_the_fullest_ccd_that_fits() -> None:
    # Cores 0-3 busy: CCD 0 has cores 4-7 (8 CPUs) and sorts first -> need 8 fits exactly.
    assert _take(EPYC, _busy(0, 1, 2, 3), 8, uncore=True) == _ccd(0, range(4, 8))


def test_more_than_one_ccd_takes_whole_groups_then_a_partial_one() -> None:
    # Need 24 on an empty node: takeFullUncore takes CCD 0 (need 8 left, CCD 1 needs 16 -> skip).
    # The loop's partial try on CCD 0 finds no free core; on CCD 1 (need 8 < 16, no whole group)
    # cores 8-11 give 8 CPUs -> claimed.
    assert _take(EPYC, bits_of(range(128)), 24, uncore=True) == _ccd(0) | _ccd(1, range(8, 12))


def test_odd_request_drops_the_highest_cpu_of_the_last_core() -> None:
    # Cores 0-4 busy, need 5 (odd, SMT 2): CCD 0 first (6 free): ceil(5/2) = 3 cores {5,6,7} ->
    # CPUs {5,6,7,69,70,71}; more than 5, so the highest id (71) is dropped -> 5 == need.
    assert _take(EPYC, _busy(0, 1, 2, 3, 4), 5, uncore=True) == {5, 6, 7, 69, 70}


def test_half_used_core_counts_as_a_core_of_the_group_v135_quirk() -> None:
    # CPU 64 busy (core 0 half used). Need 4: CCD 0 sorts first (15 free). v1.35 picks the 2
    # lowest cores with any free CPU, {0, 1} -> free CPUs {0, 1, 65} = 3 != 4 -> CCD 0 skipped
    # although it has room; CCD 1: cores 8, 9 -> {8, 9, 72, 73} claimed.
    available = bits_of(set(range(128)) - {64})
    assert _take(EPYC, available, 4, uncore=True) == _ccd(1, (8, 9))
    # Without the option: whole free cores 1, 2.
    assert _take(EPYC, available, 4, uncore=False) == _ccd(0, (1, 2))


def test_groups_are_ordered_numa_node_by_numa_node() -> None:
    # NPS2: NUMA 0 = CCDs 0-3, NUMA 1 = CCDs 4-7; more NUMA nodes than sockets -> sockets
    # first, NUMA nodes of the socket by free CPUs. Cores 32-36 busy (CCD 4, NUMA 1):
    # NUMA 1 (54 free) before NUMA 0 (64), and in it CCD 4 (6 free) before 5, 6, 7.
    acc = Accumulator(EPYC_NPS2, _busy(32, 33, 34, 35, 36), 0)
    assert acc.sort_uncore_caches() == [4, 5, 6, 7, 0, 1, 2, 3]
    assert acc.free_uncore_caches() == [5, 6, 7, 0, 1, 2, 3]
    # Need 8: CCD 4 holds only cores 37-39 (6 CPUs) -> skip; CCD 5 cores 40-43 -> claimed,
    # staying on the fuller NUMA node 1 rather than falling back to CCD 0.
    assert _take(EPYC_NPS2, _busy(32, 33, 34, 35, 36), 8, uncore=True) == _ccd(5, range(40, 44))


def test_group_spanning_two_numa_nodes_is_listed_under_each() -> None:
    # No L3 ids (all 0) on a two-NUMA layout: group 0 has free CPUs in both nodes, so the
    # upstream ordering lists it twice.
    flat = CPUTopology.from_cpus(
        [CPUInfo(id=c.id, core=c.core, socket=c.socket, numa=c.numa) for c in _epyc_cpus(numa_per_socket=2)]
    )
    assert Accumulator(flat, flat.all_bits, 0).sort_uncore_caches() == [0, 0]


# -- start-up validation and admission through the kubelet model ---------------------------


def _epyc_node() -> NodeTopology:
    return NodeTopology(
        name="epyc-1s-8ccd",
        cpus=_epyc_cpus(),
        numa_nodes=(NUMANode(id=0, memory_bytes=512 * 2**30),),
    )


def _config(options: dict[str, str], version: str = "1.35", gates: dict[str, bool] | None = None) -> KubeletConfig:
    doc: dict[str, object] = {
        "cpuManagerPolicy": "static",
        "cpuManagerPolicyOptions": options,
        "topologyManagerPolicy": "none",
        "memoryManagerPolicy": "None",
        "reservedSystemCPUs": "0,64",
    }
    if gates:
        doc["featureGates"] = gates
    return KubeletConfig.from_dict(doc, source="uncore", version=version)


UNCORE = "prefer-align-cpus-by-uncorecache"


def test_admission_keeps_each_pod_inside_one_ccd() -> None:
    # Reserved core 0. Pod a (8): CCD 0 first (14 free), cores 1-4 -> 8 CPUs. Pod b (8): CCD 0
    # keeps cores 5-7 (6 CPUs) -> skip; CCD 1 cores 8-11.
    s = NodeState(_epyc_node(), _config({UNCORE: "true"}))
    a = s.admit(pod("a", "8", "1Gi"))
    b = s.admit(pod("b", "8", "1Gi"))
    assert a.admitted and b.admitted, (a.message, b.message)
    assert set(a.containers[0].exclusive_cpus) == _ccd(0, range(1, 5))
    assert set(b.containers[0].exclusive_cpus) == _ccd(1, range(8, 12))
    # The same pods without the option: b takes cores 5, 6, 7, 8 across two L3 groups.
    plain = NodeState(_epyc_node(), _config({}))
    plain.admit(pod("a", "8", "1Gi"))
    assert set(plain.admit(pod("b", "8", "1Gi")).containers[0].exclusive_cpus) == _ccd(0, (5, 6, 7)) | {8, 72}


@pytest.mark.parametrize("other", ["distribute-cpus-across-numa", "distribute-cpus-across-cores"])
def test_incompatible_options_refuse_to_start(other: str) -> None:
    # distribute-cpus-across-cores is alpha: the gate is opened so that the pair check is reached.
    options = {UNCORE: "true", other: "true"}
    with pytest.raises(KubeletStartupError) as err:
        NodeState(_epyc_node(), _config(options, gates={"CPUManagerPolicyAlphaOptions": True}))
    assert "can not be used at the same time" in str(err.value)
    assert UNCORE in str(err.value) and other in str(err.value)


def test_option_is_alpha_before_1_34() -> None:
    # 1.32 / 1.33: alpha (CPUManagerPolicyAlphaOptions is off by default); 1.34+: beta, on.
    with pytest.raises(KubeletStartupError) as err:
        NodeState(_epyc_node(), _config({UNCORE: "true"}, version="1.33"))
    assert "Alpha-level Options not enabled" in str(err.value)
    started = NodeState(
        _epyc_node(), _config({UNCORE: "true"}, version="1.33", gates={"CPUManagerPolicyAlphaOptions": True})
    )
    assert started.admit(pod("a", "4", "1Gi")).admitted
    assert NodeState(_epyc_node(), _config({UNCORE: "true"}, version="1.34")).admit(pod("a", "4", "1Gi")).admitted


@settings(max_examples=60, deadline=None)
@given(busy=st.sets(st.integers(0, 127), max_size=100), n=st.integers(1, 40))
def test_allocation_takes_exactly_n_available_cpus(busy: set[int], n: int) -> None:
    # Whatever the fragmentation, the option only reorders the choice: n distinct available CPUs.
    available = bits_of(set(range(128)) - busy)
    if n > available.bit_count():
        with pytest.raises(CPUAllocationError):
            take_by_topology_numa_packed(EPYC, available, n, prefer_align_by_uncore_cache=True)
        return
    got = take_by_topology_numa_packed(EPYC, available, n, prefer_align_by_uncore_cache=True)
    assert got.bit_count() == n and got & ~available == 0
    # A request of one CCD's worth with a wholly free CCD always lands on exactly one CCD.
    if n == 16 and any(EPYC.uncore_bits[k] & available == EPYC.uncore_bits[k] for k in range(8)):
        assert got in EPYC.uncore_bits.values()


# -- the two examples of KEP-4800 (split uncore cache), 16 cores without SMT, 2 L3 groups of 8 --


def _kep_node() -> NodeTopology:
    cpus = tuple(CPUInfo(id=i, core=i, socket=0, numa=0, uncore_cache=i // 8) for i in range(16))
    return NodeTopology(name="kep-16c", cpus=cpus, numa_nodes=(NUMANode(id=0, memory_bytes=64 * 2**30),))


def _kep_admit(reserved: str, sizes: list[str], uncore: bool) -> list[set[int]]:
    cfg = KubeletConfig.from_dict(
        {
            "cpuManagerPolicy": "static",
            "cpuManagerPolicyOptions": {UNCORE: "true"} if uncore else {},
            "topologyManagerPolicy": "none",
            "memoryManagerPolicy": "None",
            "reservedSystemCPUs": reserved,
        },
        source="kep",
    )
    s = NodeState(_kep_node(), cfg)
    out = []
    for i, size in enumerate(sizes):
        result = s.admit(pod(f"c{i}", size, "1Gi"))
        assert result.admitted, result.message
        out.append(set(result.containers[0].exclusive_cpus))
    return out


def test_kep_example_whole_group_for_the_8_cpu_container() -> None:
    # Reserved 0-3. C1 (2): group 0 sorts first (4 free) -> partial: cores 4, 5. C2 (8): need 8 >=
    # 16 / 2 -> takeFullUncore: group 1 is wholly free -> 8-15. Without the option C2 gets the
    # free cores in id order, 6-13, straddling both groups.
    assert _kep_admit("0-3", ["2", "8"], uncore=True) == [{4, 5}, set(range(8, 16))]
    assert _kep_admit("0-3", ["2", "8"], uncore=False) == [{4, 5}, set(range(6, 14))]


def test_kep_example_partial_groups_for_three_4_cpu_containers() -> None:
    # Reserved 0-1. C1: group 0 (6 free) -> cores 2-5. C2: group 0 has only 6, 7 -> 2 != 4, skip;
    # group 1 -> 8-11. C3: group 0 still 2 -> skip; group 1 -> 12-15. Without: C2 = 6-9.
    assert _kep_admit("0-1", ["4", "4", "4"], uncore=True) == [{2, 3, 4, 5}, {8, 9, 10, 11}, {12, 13, 14, 15}]
    assert _kep_admit("0-1", ["4", "4", "4"], uncore=False) == [{2, 3, 4, 5}, {6, 7, 8, 9}, {10, 11, 12, 13}]
