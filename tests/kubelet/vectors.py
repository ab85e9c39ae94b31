"""Load the kubelet vectors at collection time from `tests.paths.vectors_root() / "kubelet"`.

Every *.json of that folder is read; absent folder -> tests skip with a reason.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from kubegpu.kubelet.bitmask import NUMAMask
from kubegpu.kubelet.hints import ProviderHints, TopologyHint
from kubegpu.topology.model import CPUInfo, NodeTopology, NUMANode
from tests.paths import vectors_root


def kubelet_dir() -> Path:
    return vectors_root() / "kubelet"


@cache
def load_all() -> dict[str, dict[str, Any]]:
    """file name -> parsed JSON for every *.json in the kubelet vector folder."""
    folder = kubelet_dir()
    if not folder.is_dir():
        return {}
    return {p.name: json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))}


def absent(arity: int = 1) -> list[Any]:
    """A single skipped param (with `arity` values) for when the vector folder is missing."""
    reason = f"kubelet vectors not found at {kubelet_dir()} (set KUBEGPU_VECTORS_DIR)"
    return [pytest.param(*([None] * arity), marks=pytest.mark.skip(reason=reason), id="absent")]


def cases(file: str, key: str) -> list[Any]:
    """pytest params (id = vector id) for one list in one vector file; a skip param if absent."""
    data = load_all().get(file)
    if data is None:
        return absent()
    items = data.get(key) or []
    return [pytest.param(item, id=str(item.get("id", i))) for i, item in enumerate(items)]


def mask(ids: Any, all_nodes: tuple[int, ...] = ()) -> NUMAMask | None:
    if ids is None:
        return None
    if ids == "ALL":
        return NUMAMask.of(all_nodes)
    return NUMAMask.of(int(i) for i in ids)


def hint(raw: dict[str, Any] | None, all_nodes: tuple[int, ...] = ()) -> TopologyHint | None:
    if raw is None:
        return None
    return TopologyHint(mask(raw["affinity"], all_nodes), bool(raw["preferred"]))


def _hint_list(raw: list[dict[str, Any]]) -> list[TopologyHint]:
    out: list[TopologyHint] = []
    for item in raw:
        h = hint(item)
        assert h is not None
        out.append(h)
    return out


def provider(raw: dict[str, Any] | None) -> ProviderHints:
    if raw is None:
        return None
    out: dict[str, tuple[TopologyHint, ...] | None] = {}
    for resource, hints in raw.items():
        out[resource] = None if hints is None else tuple(_hint_list(hints))
    return out


@cache
def fixture_topology(name: str) -> NodeTopology:
    """A CPU topology of fixtures.json as a NodeTopology (one NUMA node entry per id)."""
    data = load_all()["fixtures.json"]
    for topo in data["cpu_topologies"]:
        if topo["name"] == name:
            cpus = tuple(CPUInfo(id=c["cpu"], core=c["core"], socket=c["socket"], numa=c["numa"]) for c in topo["cpus"])
            numas = sorted({c.numa for c in cpus})
            nodes = tuple(NUMANode(id=n, memory_bytes=0) for n in numas)
            return NodeTopology(name=name, cpus=cpus, numa_nodes=nodes)
    raise KeyError(name)


def numa_fixture(name: str) -> tuple[tuple[int, ...], list[list[int]]]:
    data = load_all()["fixtures.json"]
    for fx in data["numa_distance_fixtures"]:
        if fx["name"] == name:
            return tuple(fx["nodes"]), fx["distances"]
    raise KeyError(name)
