"""Static memory manager: multi-NUMA groups, hugepages and init-container reuse on a preset.

Node topoDualSocketHT preset: 2 NUMA nodes of 10Gi each, 5Gi of 1Gi hugepages per node.
reservedMemory 1Gi on NUMA 0 = kubeReserved 924Mi + default evictionHard 100Mi.
Allocatable memory: NUMA 0 = 10 - 1 - 5 = 4Gi, NUMA 1 = 10 - 0 - 5 = 5Gi.
"""

from __future__ import annotations

from typing import Any

from kubegpu.kubelet import KubeletConfig, NodeState, PodRequest
from kubegpu.topology.presets import load_node

GI = 1 << 30


def _state(policy: str) -> NodeState:
    cfg = KubeletConfig.from_dict(
        {
            "memoryManagerPolicy": "Static",
            "topologyManagerPolicy": policy,
            "topologyManagerScope": "pod",
            "kubeReserved": {"memory": "924Mi"},
            "reservedMemory": [{"numaNode": 0, "limits": {"memory": "1Gi"}}],
        }
    )
    return NodeState(load_node("topoDualSocketHT"), cfg)


def _pod(name: str, limits: dict[str, Any], init: dict[str, Any] | None = None) -> PodRequest:
    spec: dict[str, Any] = {"containers": [{"name": "main", "resources": {"limits": limits}}]}
    if init:
        spec["initContainers"] = [{"name": "init", "resources": {"limits": init}}]
    return PodRequest.from_pod_spec(name, spec)


def test_multi_numa_group_is_only_reusable_by_the_same_group() -> None:
    s = _state("restricted")
    # 6Gi fits neither node alone (4Gi, 5Gi allocatable) -> only {0,1}, preferred (min size 2).
    big = s.admit(_pod("big", {"cpu": "1", "memory": "6Gi"}))
    assert big.admitted
    assert big.containers[0].memory["memory"] == {0: 4 * GI, 1: 2 * GI}
    # 1Gi: single-node masks are skipped (both nodes belong to the group {0,1}); {0,1} remains
    # but is not preferred (one node's capacity could hold 1Gi) -> restricted rejects.
    small = s.admit(_pod("small", {"cpu": "1", "memory": "1Gi"}))
    assert (small.admitted, small.reason) == (False, "TopologyAffinityError")
    memory_hints = [p for p in small.trace[0].providers if p.provider == "memory manager"]
    assert [h.affinity.ids() for h in memory_hints[0].hints or () if h.affinity] == [(0, 1)]


def test_best_effort_books_the_small_pod_on_the_group() -> None:
    s = _state("best-effort")
    assert s.admit(_pod("big", {"cpu": "1", "memory": "6Gi"})).admitted
    small = s.admit(_pod("small", {"cpu": "1", "memory": "1Gi"}))
    assert small.admitted
    assert small.containers[0].numa_affinity == (0, 1)
    assert small.containers[0].memory["memory"] == {1: GI}


def test_hugepages_are_pinned_per_numa_node() -> None:
    s = _state("single-numa-node")
    spec = {"cpu": "1", "memory": "1Gi", "hugepages-1Gi": "4Gi"}
    first = s.admit(_pod("hp1", spec))
    second = s.admit(_pod("hp2", spec))
    third = s.admit(_pod("hp3", spec))
    assert first.containers[0].memory["hugepages-1Gi"] == {0: 4 * GI}
    assert second.containers[0].memory["hugepages-1Gi"] == {1: 4 * GI}
    # 1Gi of hugepages left per node. calculateHints finds no mask at all ({0,1} is barred by the
    # single-NUMA allocations), so the memory manager answers an empty map = "no preference";
    # the Topology Manager admits and Allocate then fails -> UnexpectedAdmissionError.
    assert (third.admitted, third.reason) == (False, "UnexpectedAdmissionError")
    assert third.message == (
        "Allocate failed due to [memorymanager] failed to get the default NUMA affinity, "
        "no NUMA nodes with enough memory is available, which is unexpected"
    )


def test_non_guaranteed_pods_are_not_pinned() -> None:
    s = _state("restricted")
    guaranteed = s.admit(_pod("g", {"cpu": "1", "memory": "8Gi"}))
    assert guaranteed.admitted  # 8Gi only fits {0,1}: preferred
    assert guaranteed.containers[0].memory["memory"] == {0: 4 * GI, 1: 4 * GI}
    s2 = _state("restricted")
    spec = {
        "containers": [
            {
                "name": "main",
                "resources": {"requests": {"memory": "1Gi"}, "limits": {"memory": "2Gi"}},
            }
        ]
    }
    result = s2.admit(PodRequest.from_pod_spec("burst", spec))
    assert result.admitted and result.qos == "Burstable"
    assert result.containers[0].memory == {}


def test_init_container_memory_is_reused() -> None:
    # Container scope: the init container books 3Gi on NUMA 0; the app container (3Gi) reuses
    # it, so NUMA 0 still has 1Gi free afterwards and a 1Gi pod fits there.
    cfg = KubeletConfig.from_dict(
        {
            "memoryManagerPolicy": "Static",
            "topologyManagerPolicy": "single-numa-node",
            "topologyManagerScope": "container",
            "kubeReserved": {"memory": "924Mi"},
            "reservedMemory": [{"numaNode": 0, "limits": {"memory": "1Gi"}}],
        }
    )
    s = NodeState(load_node("topoDualSocketHT"), cfg)
    limits = {"cpu": "1", "memory": "3Gi"}
    result = s.admit(_pod("p", limits, init=limits))
    assert result.admitted
    init, main = result.containers
    assert init.memory["memory"] == {0: 3 * GI}
    assert main.memory["memory"] == {}
    assert s.mem_state.machine[0].tables["memory"].free == 1 * GI
