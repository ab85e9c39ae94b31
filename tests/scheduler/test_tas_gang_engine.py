"""Kueue TAS domain choice (KEP worked example), gang modes in the simulator, and the event loop order."""

from __future__ import annotations

import numpy as np
import pytest

from kubegpu.errors import ModelError
from kubegpu.scheduler.gang import GangMode
from kubegpu.scheduler.gpu.state import GpuCluster, NodeSpec
from kubegpu.scheduler.tas import Algorithm, Mode, TopologyRequest, TopologyTree, assign
from kubegpu.sim.engine import ARRIVAL, COMPLETION, EventLoop
from kubegpu.sim.simulation import SimConfig, Simulation
from kubegpu.sim.workload import synthetic_jobs

BLOCK, RACK = "cloud.provider.com/topology-block", "cloud.provider.com/topology-rack"


def _nodes(n: int, per_rack: int = 4, gpus: int = 8) -> list[NodeSpec]:
    return [
        NodeSpec(
            f"n{i:02d}", 200000, 2**40, gpus, "H100", 110, {BLOCK: f"b{i // (per_rack * 2)}", RACK: f"r{i // per_rack}"}
        )
        for i in range(n)
    ]


def test_kep_example_best_fit_and_least_free_capacity() -> None:
    tree = TopologyTree(GpuCluster(_nodes(4)))
    per_node = np.array([3, 3, 2, 1])
    rack = TopologyRequest(RACK, Mode.REQUIRED)
    best = assign(tree, per_node, 7, rack)
    assert best is not None and best.counts == {0: 3, 1: 3, 3: 1}
    lfc = assign(tree, per_node, 7, rack, Algorithm.LEAST_FREE_CAPACITY)
    assert lfc is not None and lfc.counts == {3: 1, 2: 2, 0: 3, 1: 1}


def test_required_fails_preferred_climbs_a_level() -> None:
    tree = TopologyTree(GpuCluster(_nodes(8)))  # two racks of four nodes, one block
    per_node = np.full(8, 2)
    assert assign(tree, per_node, 10, TopologyRequest(RACK, Mode.REQUIRED)) is None
    placed = assign(tree, per_node, 10, TopologyRequest(RACK, Mode.PREFERRED))
    assert placed is not None and placed.level == BLOCK and sum(placed.counts.values()) == 10
    assert tree.spanned(list(placed.counts))[RACK] == 2


def test_best_fit_picks_the_tightest_rack() -> None:
    tree = TopologyTree(GpuCluster(_nodes(8)))
    per_node = np.array([2, 2, 2, 2, 1, 1, 1, 0])  # rack r0 holds 8, rack r1 holds 3
    placed = assign(tree, per_node, 3, TopologyRequest(RACK, Mode.REQUIRED))
    assert placed is not None and set(placed.counts) <= {4, 5, 6}


def test_event_loop_orders_by_time_priority_sequence() -> None:
    loop = EventLoop()
    seen: list[str] = []
    loop.at(5, ARRIVAL, lambda: seen.append("a5"))
    loop.at(5, COMPLETION, lambda: seen.append("c5"))
    loop.at(1, ARRIVAL, lambda: seen.append("a1"))
    loop.at(5, COMPLETION, lambda: seen.append("c5b"))
    loop.run()
    assert seen == ["a1", "c5", "c5b", "a5"]
    with pytest.raises(ModelError):
        loop.at(0, ARRIVAL, lambda: None)


def test_pod_by_pod_deadlocks_where_all_or_nothing_does_not() -> None:
    # two 8-GPU nodes, two gangs of 2×8 GPUs arriving together and never finishing (no duration):
    # pod by pod each gang grabs one node and both wait forever holding GPUs idle.
    nodes = _nodes(2)
    jobs = synthetic_jobs(2, 0, arrival_rate=1e6, gang_sizes=(2,), gpus_per_pod=(8,))
    jobs = [type(j)(j.name, j.pods, 0.0, None, 2, None) for j in jobs]
    pbp = Simulation(nodes, jobs, SimConfig("k8s-default", gang=GangMode.POD_BY_POD)).run().summary()
    aon = Simulation(nodes, jobs, SimConfig("k8s-default", gang=GangMode.ALL_OR_NOTHING)).run().summary()
    assert pbp["deadlocked_pods"] == 4 and pbp["running_pods"] == 0
    assert aon["deadlocked_pods"] == 0 and aon["running_pods"] == 2 and aon["pending_pods"] == 2


def test_simulation_same_seed_same_result() -> None:
    nodes = _nodes(8)
    jobs = synthetic_jobs(40, 3, arrival_rate=1 / 120, gang_sizes=(1, 2, 4), gpus_per_pod=(2, 8))
    a = Simulation(nodes, jobs, SimConfig("most-allocated", seed=9)).run().summary()
    b = Simulation(nodes, jobs, SimConfig("most-allocated", seed=9)).run().summary()
    assert a == b and a["completed_pods"] == sum(len(j.pods) for j in jobs)
