"""CPU assignment vectors: accumulator orderings and takeByTopology (packed/spread/distributed)."""

from __future__ import annotations

from typing import Any

import pytest

from kubegpu.kubelet.cpumanager.assignment import (
    PACKED,
    SPREAD,
    Accumulator,
    CPUAllocationError,
    take_by_topology_numa_distributed,
    take_by_topology_numa_packed,
)
from kubegpu.kubelet.cpumanager.cpuset import bits_of, ids_of
from kubegpu.kubelet.cpumanager.topology import CPUTopology
from tests.kubelet import vectors as V

FILE = "cpumanager_take_by_topology.json"


def _topo(name: str) -> CPUTopology:
    return CPUTopology.from_node(V.fixture_topology(name))


@pytest.mark.parametrize("case", V.cases(FILE, "accumulator"))
def test_accumulator(case: dict[str, Any]) -> None:
    acc = Accumulator(_topo(case["topology"]), bits_of(case["available"]), 0)
    methods = {
        "freeSockets": acc.free_sockets,
        "freeNUMANodes": acc.free_numa_nodes,
        "freeCores": acc.free_cores,
        "freeCPUs": acc.sort_cpus,
    }
    expected = case["expected"]
    if isinstance(expected, dict):
        for method, want in expected.items():
            assert sorted(methods[method]()) == sorted(want)
        return
    got = methods[case["method"]]()
    if case.get("order_matters"):
        assert got == expected
    else:
        assert sorted(got) == sorted(expected)


@pytest.mark.parametrize("case", V.cases(FILE, "take"))
def test_take(case: dict[str, Any]) -> None:
    topo = _topo(case["topology"])
    available = bits_of(case["available"])
    strategy = SPREAD if case["strategy"].startswith("spread") else PACKED

    def run() -> int:
        if case["test"] == "TestTakeByTopologyNUMADistributed":
            return take_by_topology_numa_distributed(
                topo, available, case["num_cpus"], case["cpu_group_size"], strategy
            )
        return take_by_topology_numa_packed(
            topo, available, case["num_cpus"], strategy, bool(case.get("prefer_align_by_uncore_cache"))
        )

    if case["expected_error"]:
        with pytest.raises(CPUAllocationError) as err:
            run()
        assert str(err.value) == case["expected_error"]
        return
    assert ids_of(run()) == tuple(sorted(case["expected"]))
