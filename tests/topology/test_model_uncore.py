"""Node profiles with and without `cpus[].uncore_cache`: optional on input, written only when set."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubegpu.errors import InputError
from kubegpu.topology.model import CPUInfo, NodeTopology, NUMANode
from kubegpu.topology.presets import load_node, preset_names


def _profile(uncore: list[int]) -> NodeTopology:
    cpus = tuple(CPUInfo(id=i, core=i, socket=0, numa=0, uncore_cache=u) for i, u in enumerate(uncore))
    return NodeTopology(name="n", cpus=cpus, numa_nodes=(NUMANode(id=0, memory_bytes=1 << 30),))


@settings(max_examples=50, deadline=None)
@given(uncore=st.lists(st.integers(0, 40), min_size=1, max_size=24))
def test_round_trip(uncore: list[int]) -> None:
    topo = _profile(uncore)
    data = topo.to_dict()
    assert NodeTopology.from_dict(data).cpus == topo.cpus
    written = {"uncore_cache" in c for c in data["cpus"]}
    assert written == {any(uncore)}


@pytest.mark.parametrize("name", preset_names())
def test_presets_without_l3_ids_keep_their_json(name: str) -> None:
    topo = load_node(name)
    data = topo.to_dict()
    assert NodeTopology.from_dict(data).to_dict() == data
    if not any(c.uncore_cache for c in topo.cpus):
        assert all(set(c) == {"id", "core", "socket", "numa"} for c in data["cpus"])


def test_bad_uncore_cache_is_an_input_error() -> None:
    data = _profile([0, 1]).to_dict()
    data["cpus"][1]["uncore_cache"] = "L3"
    with pytest.raises(InputError) as err:
        NodeTopology.from_dict(data, source="node.json")
    message = str(err.value)
    assert "node.json" in message and "cpu 1: 'uncore_cache' must be an integer, got 'L3'" in message
