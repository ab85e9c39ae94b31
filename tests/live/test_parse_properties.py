"""Parsers of API objects: any JSON gives a model or one InputError, never another exception."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubegpu.errors import InputError
from kubegpu.live.hardware import MAX_CPUS, MAX_GPUS, nrt_topology
from kubegpu.live.parse import (
    parse_kueue_cluster_queue,
    parse_kueue_local_queue,
    parse_kueue_topology,
    parse_kueue_workload,
    parse_node,
    parse_nrt,
    parse_pod,
)
from kubegpu.units.quantity import parse_quantity

scalars = (
    st.none()
    | st.booleans()
    | st.integers(-5, 10**6)
    | st.floats(allow_nan=True)
    | st.text(alphabet="0123456789.mkMGiKe-+abc", max_size=8)
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                [
                    "metadata",
                    "spec",
                    "status",
                    "name",
                    "containers",
                    "resources",
                    "requests",
                    "limits",
                    "cpu",
                    "memory",
                    "nvidia.com/gpu",
                    "zones",
                    "allocatable",
                    "capacity",
                    "available",
                    "podSets",
                    "count",
                    "template",
                    "levels",
                    "nodeLabel",
                    "taints",
                    "conditions",
                    "type",
                    "initContainers",
                    "resourceGroups",
                    "flavors",
                    "nominalQuota",
                    "flavorsReservation",
                    "flavorsUsage",
                    "borrowingLimit",
                    "total",
                    "topologyRequest",
                    "required",
                    "annotations",
                    "clusterQueue",
                    "message",
                ]
            ),
            inner,
            max_size=4,
        )
    ),
    max_leaves=20,
)

PARSERS: list[Callable[..., Any]] = [
    parse_node,
    parse_pod,
    parse_nrt,
    parse_kueue_workload,
    parse_kueue_topology,
    parse_kueue_cluster_queue,
    parse_kueue_local_queue,
]


@pytest.mark.parametrize("parser", PARSERS, ids=lambda p: p.__name__)
@settings(max_examples=150, deadline=None)
@given(
    obj=st.dictionaries(st.sampled_from(["metadata", "spec", "status", "zones", "attributes"]), json_values, max_size=4)
)
def test_parsers_never_crash(parser: Callable[..., Any], obj: dict[str, Any]) -> None:
    try:
        parser(obj, "fuzz.json")
    except InputError as err:
        assert err.file == "fuzz.json"


quantities = (
    st.integers(0, 512).map(str)
    | st.integers(0, 4096).map(lambda n: f"{n}Mi")
    | st.integers(0, 64000).map(lambda n: f"{n}m")
)


@given(cpu=quantities, memory=quantities, gpus=st.integers(0, 16))
def test_node_allocatable_is_exact(cpu: str, memory: str, gpus: int) -> None:
    node = parse_node(
        {"metadata": {"name": "n"}, "status": {"capacity": {"cpu": cpu, "memory": memory, "nvidia.com/gpu": str(gpus)}}}
    )
    # without `allocatable` the node offers its capacity; cpu in millis, the rest rounded up
    assert node.allocatable["cpu"] == parse_quantity(cpu).millis
    assert node.allocatable["memory"] == parse_quantity(memory).ceil
    assert node.allocatable["nvidia.com/gpu"] == gpus
    assert node.accelerator_resources() == (("nvidia.com/gpu",) if gpus else ())


@given(
    st.lists(
        st.tuples(st.integers(0, 8), st.integers(0, 8), st.integers(0, 96), st.integers(0, 96)), min_size=1, max_size=4
    )
)
def test_nrt_zone_usage(zones: list[tuple[int, int, int, int]]) -> None:
    raw = {
        "metadata": {"name": "n"},
        "zones": [
            {
                "name": f"node-{i}",
                "type": "Node",
                "resources": [
                    {"name": "nvidia.com/gpu", "capacity": str(g), "allocatable": str(g), "available": str(min(a, g))},
                    {"name": "cpu", "capacity": str(c), "allocatable": str(c), "available": str(min(ca, c))},
                ],
            }
            for i, (g, a, c, ca) in enumerate(zones)
        ],
    }
    nrt = parse_nrt(raw)
    for i, (zone, (g, a, c, ca)) in enumerate(zip(nrt.zones, zones, strict=True)):
        assert zone.numa_id == i
        assert zone.resources["nvidia.com/gpu"].used == g - min(a, g)
        assert zone.resources["cpu"].used == (c - min(ca, c)) * 1000


@settings(max_examples=100, deadline=None)
@given(obj=st.dictionaries(st.sampled_from(["metadata", "zones", "attributes"]), json_values, max_size=3))
def test_kubelet_hardware_from_any_nrt_is_built_or_refused(obj: dict[str, Any]) -> None:
    """Whatever zones an NRT claims, the kubelet model's hardware is built within its bounds or not at all."""
    try:
        nrt = parse_nrt(obj, "fuzz.json")
    except InputError:
        return
    node = parse_node({"metadata": {"name": "n"}, "status": {}})
    topology = nrt_topology(node, nrt)
    if topology is not None:
        assert 0 < len(topology.cpus) <= MAX_CPUS and len(topology.gpus) <= MAX_GPUS


@settings(max_examples=100, deadline=None)
@given(
    zones=st.lists(st.tuples(st.integers(0, 70), st.integers(0, 10**5), st.integers(0, 10**3)), min_size=1, max_size=5)
)
def test_kubelet_hardware_keeps_its_bounds(zones: list[tuple[int, int, int]]) -> None:
    raw = {
        "metadata": {"name": "n"},
        "zones": [
            {
                "name": f"node-{numa}",
                "type": "Node",
                "resources": [
                    {"name": "cpu", "capacity": str(cpus), "allocatable": str(cpus), "available": "0"},
                    {"name": "nvidia.com/gpu", "capacity": str(gpus), "allocatable": str(gpus), "available": "0"},
                ],
            }
            for numa, cpus, gpus in zones
        ],
    }
    node = parse_node({"metadata": {"name": "n"}, "status": {}})
    topology = nrt_topology(node, parse_nrt(raw))
    numas = [numa for numa, _, _ in zones]
    small = max(numas) <= 63 and len(set(numas)) == len(numas) and sum(c for _, c, _ in zones) <= MAX_CPUS
    small = small and sum(g for _, _, g in zones) <= MAX_GPUS and sum(c for _, c, _ in zones) > 0
    assert (topology is not None) == small
    if topology is not None:
        assert len(topology.cpus) == sum(c for _, c, _ in zones)
        assert len(topology.gpus) == sum(g for _, _, g in zones)
        assert sorted(n.id for n in topology.numa_nodes) == sorted(numas)


@pytest.mark.parametrize("count", [float("inf"), 10**12, "1e3"])
def test_a_pod_set_count_beyond_a_cluster_is_one_error(count: object) -> None:
    workload = {"metadata": {"name": "w", "namespace": "n"}, "spec": {"podSets": [{"name": "main", "count": count}]}}
    with pytest.raises(InputError, match=r"spec.podSets\[0\].count"):
        parse_kueue_workload(workload, "dump.json")
