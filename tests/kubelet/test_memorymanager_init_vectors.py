"""Memory manager: init containers' blocks shrink by what later containers reuse, and their removal frees
exactly what the pod held.

Vectors transcribed from kubernetes v1.35 pkg/kubelet/cm/memorymanager/policy_static_test.go
(TestStaticPolicyAllocateWithInitContainers, TestStaticPolicyAllocateWithRestartableInitContainers).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kubegpu.kubelet.hints import TopologyHint
from kubegpu.kubelet.memorymanager.policy_static import MemoryState, MemoryTable, NUMANodeState, StaticMemoryPolicy
from kubegpu.kubelet.memorymanager.reserved import Amount
from kubegpu.kubelet.pod import PodRequest
from kubegpu.kubelet.qos import GUARANTEED
from kubegpu.units.quantity import parse_quantity

VECTORS = json.loads((Path(__file__).parent / "data" / "memorymanager_init_containers.json").read_text())
CASES = VECTORS["cases"]


def _bytes(text: str) -> int:
    return parse_quantity(text).ceil


def _machine(raw: dict[str, Any]) -> MemoryState:
    machine = {}
    for node, state in raw.items():
        tables = {
            kind: MemoryTable(
                _bytes(t["total"]),
                _bytes(t["system_reserved"]),
                _bytes(t["allocatable"]),
                _bytes(t["reserved"]),
                _bytes(t["free"]),
            )
            for kind, t in state["tables"].items()
        }
        machine[int(node)] = NUMANodeState(state["assignments"], tuple(state["cells"]), tables)
    return MemoryState(machine)


def _container(raw: dict[str, Any]) -> dict[str, Any]:
    amounts = {"cpu": "1000Mi", "memory": raw["memory"], "hugepages-1Gi": raw["hugepages-1Gi"]}
    out: dict[str, Any] = {"name": raw["name"], "resources": {"requests": amounts, "limits": amounts}}
    if raw.get("restartable"):
        out["restartPolicy"] = "Always"
    return out


def _pod(case: dict[str, Any]) -> PodRequest:
    spec = {
        "initContainers": [_container(c) for c in case["init_containers"]],
        "containers": [_container(c) for c in case["containers"]],
    }
    return PodRequest.from_pod_spec("pod1", spec, uid="pod1")


def _policy(state: MemoryState) -> StaticMemoryPolicy:
    nodes = sorted(state.machine)
    return StaticMemoryPolicy(
        {n: state.machine[n].tables["memory"].total for n in nodes},
        {},
        {n: {"memory": Amount(state.machine[n].tables["memory"].system_reserved)} for n in nodes},
    )


def _allocate_all(case: dict[str, Any]) -> tuple[StaticMemoryPolicy, MemoryState, PodRequest]:
    state = _machine(case["machine"])
    policy = _policy(state)
    pod = _pod(case)
    for container in pod.all_containers():
        policy.allocate(state, pod, container, GUARANTEED, TopologyHint(None, False))
    return policy, state, pod


@pytest.mark.parametrize("case", CASES, ids=[c["description"] for c in CASES])
def test_init_container_blocks_shrink_by_what_later_containers_reuse(case: dict[str, Any]) -> None:
    _, state, _ = _allocate_all(case)
    got = {name: {b.type: b.size for b in blocks} for name, blocks in state.blocks["pod1"].items()}
    want = {name: {t: _bytes(v) for t, v in sizes.items()} for name, sizes in case["expected_blocks"].items()}
    assert got == want
    for node, expected in case["expected_machine"].items():
        actual = state.machine[int(node)]
        assert actual.assignments == expected["assignments"]
        assert list(actual.cells) == expected["cells"]
        for kind in ("memory", "hugepages-1Gi"):
            table = actual.tables[kind]
            assert (table.free, table.reserved) == (_bytes(expected[kind]["free"]), _bytes(expected[kind]["reserved"]))


@pytest.mark.parametrize("case", CASES, ids=[c["description"] for c in CASES])
def test_removing_the_pod_frees_exactly_what_it_held(case: dict[str, Any]) -> None:
    policy, state, pod = _allocate_all(case)
    held = {
        kind: sum(b.size for blocks in state.blocks["pod1"].values() for b in blocks if b.type == kind)
        for kind in ("memory", "hugepages-1Gi")
    }
    assert held == {kind: state.machine[0].tables[kind].reserved for kind in held}
    policy.remove_pod(state, pod)
    assert state.blocks == {} and state.reusable == {}
    empty = _machine(case["machine"])
    for node, table_state in state.machine.items():
        assert table_state.assignments == 0 and table_state.cells == (node,)
        for kind, table in table_state.tables.items():
            assert (table.free, table.reserved) == (empty.machine[node].tables[kind].free, 0)
