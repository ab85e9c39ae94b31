"""A node that fills and empties: NodeState.release gives back what every manager allocated.

Follows the kubelet v1.35 pod removal: the CPU manager's RemoveContainer (CPUs back to the shared pool
unless a sibling container still holds them), the memory manager's RemoveContainer (block sizes back to
the NUMA nodes) and the device manager's UpdateAllocatedDevices.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubegpu.kubelet import NodeState, PodRequest
from kubegpu.kubelet.cpumanager import cpuset
from kubegpu.topology.presets import load_node
from tests.kubelet.scenarios import config

NODE = load_node("dgx-h100")
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

shape = st.tuples(
    st.integers(min_value=1, max_value=24).map(lambda n: 2 * n),  # whole cores (full-pcpus-only off here)
    st.integers(min_value=0, max_value=4),  # GPUs
    st.sampled_from(["8Gi", "64Gi", "300Gi"]),
    st.sampled_from(["none", "smaller", "larger"]),  # init container against the app container's memory
)
ops = st.lists(st.tuples(st.booleans(), shape, st.integers(min_value=0, max_value=50)), min_size=1, max_size=25)


def _pod(i: int, spec: tuple[int, int, str, str]) -> PodRequest:
    cpus, gpus, memory, init = spec
    limits: dict[str, Any] = {"cpu": str(cpus), "memory": memory}
    if gpus:
        limits["nvidia.com/gpu"] = gpus
    pod: dict[str, Any] = {"containers": [{"name": "main", "resources": {"limits": limits}}]}
    if init != "none":
        init_memory = "4Gi" if init == "smaller" else "400Gi"
        pod["initContainers"] = [{"name": "init", "resources": {"limits": {"cpu": "2", "memory": init_memory}}}]
    return PodRequest.from_pod_spec(f"p{i}", pod)


def _snapshot(s: NodeState) -> dict[str, Any]:
    mem = {
        n: (st_.assignments, st_.cells, {k: (t.free, t.reserved) for k, t in st_.tables.items()})
        for n, st_ in s.mem_state.machine.items()
    }
    return {
        "cpu": (s.cpu_state.default, s.cpu_state.assignments, s.cpu_state.reusable),
        "memory": (mem, s.mem_state.blocks, s.mem_state.reusable),
        "devices": ({r: ids for r, ids in s.dev_state.allocated.items() if ids}, s.dev_state.pod_devices),
        "used": {r: n for r, n in s.used.items() if n},
        "pods": s.pods,
    }


def _check_invariants(s: NodeState) -> None:
    assert s.cpu is not None and s.memory is not None
    assigned = 0
    for containers in s.cpu_state.assignments.values():
        for cpus in containers.values():
            assigned |= cpus
    # validateState: the shared pool plus the exclusive assignments are exactly the node's CPUs
    assert assigned | s.cpu_state.default == s.cpu.topo.all_bits
    assert not assigned & s.cpu_state.default
    for kind in ("memory",):
        held = sum(
            b.size for pod in s.mem_state.blocks.values() for blocks in pod.values() for b in blocks if b.type == kind
        )
        assert held == sum(n.tables[kind].reserved for n in s.mem_state.machine.values())
        for node in s.mem_state.machine.values():
            table = node.tables[kind]
            assert table.free + table.reserved == table.allocatable and table.free >= 0
    devices = {d for pod in s.dev_state.pod_devices.values() for c in pod.values() for ids in c.values() for d in ids}
    assert devices == {d for ids in s.dev_state.allocated.values() for d in ids}


@SETTINGS
@given(
    policy=st.sampled_from(["none", "best-effort", "restricted"]),
    scope=st.sampled_from(["container", "pod"]),
    steps=ops,
)
def test_admit_and_release_keep_the_managers_consistent_and_releasing_all_empties_the_node(
    policy: str, scope: str, steps: list[tuple[bool, tuple[int, int, str, str], int]]
) -> None:
    s = NodeState(NODE, config(topologyManagerPolicy=policy, topologyManagerScope=scope))
    empty = _snapshot(s)
    held: list[str] = []
    for i, (admit, spec, pick) in enumerate(steps):
        if admit or not held:
            result = s.admit(_pod(i, spec))
            if result.admitted:
                held.append(result.pod_key)
        else:
            assert s.release(held.pop(pick % len(held)))
        _check_invariants(s)
    for key in held:
        assert s.release(key)
        _check_invariants(s)
    assert _snapshot(s) == empty


def test_a_released_pods_resources_admit_the_next_pod() -> None:
    s = NodeState(NODE, config(topologyManagerPolicy="single-numa-node"))
    gpus = {"cpu": "16", "memory": "64Gi", "nvidia.com/gpu": 4}
    first = s.admit(PodRequest.from_pod_spec("a", {"containers": [{"name": "m", "resources": {"limits": gpus}}]}))
    second = s.admit(PodRequest.from_pod_spec("b", {"containers": [{"name": "m", "resources": {"limits": gpus}}]}))
    assert first.admitted and second.admitted
    third = PodRequest.from_pod_spec("c", {"containers": [{"name": "m", "resources": {"limits": gpus}}]})
    assert s.copy().admit(third).reason == "TopologyAffinityError"
    freed = set(first.containers[0].devices["nvidia.com/gpu"])
    assert s.release(first.pod_key) and not s.release(first.pod_key)
    again = s.admit(third)
    assert again.admitted
    assert set(again.containers[0].devices["nvidia.com/gpu"]) == freed
    assert cpuset.bits_of(again.containers[0].exclusive_cpus) == cpuset.bits_of(first.containers[0].exclusive_cpus)
