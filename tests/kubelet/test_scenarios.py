"""Scenarios on node presets, each verdict derived by hand from the upstream v1.35 rules.

Node: dgx-h100 preset = 2 sockets = 2 NUMA nodes, 112 logical CPUs each (56 cores x 2 threads),
GPUs 0-3 on NUMA 0 and 4-7 on NUMA 1, 1 TiB per NUMA node. Reserved CPUs 0-1,112-113 (two whole
cores on NUMA 0), reservedMemory 2098Mi per NUMA node. Provider order: device, CPU, memory.
"""

from __future__ import annotations

import pytest

from kubegpu.kubelet import KubeletConfig, KubeletStartupError, NodeState
from kubegpu.topology.presets import load_node
from tests.kubelet.scenarios import config, pod, state

TAE = "TopologyAffinityError"


def test_8gpu_single_numa_node_never_admits() -> None:
    # Device hints for 8 GPUs: only {0,1} holds 8 devices -> [{0,1} preferred]. single-numa-node
    # keeps only preferred hints with one NUMA bit (or nil): the GPU list becomes empty, so there
    # is no permutation at all -> {default, not preferred} -> nil, not preferred -> rejected.
    s = state(topologyManagerPolicy="single-numa-node")
    result = s.admit(pod("train", "32", "256Gi", gpus=8))
    assert (result.admitted, result.reason) == (False, TAE)
    assert result.trace[0].merged.affinity is None


def test_8gpu_restricted_rejected_when_cpu_and_memory_fit_one_numa_node() -> None:
    # GPUs: [{0,1} P]. CPU: 32 <= 112 CPUs of one node -> minAffinitySize 1 -> {0} P, {1} P,
    # {0,1} N. Memory 256Gi <= one node's allocatable -> {0} P, {1} P, {0,1} N. Every permutation
    # either ANDs unequal masks ({0,1} & {0} -> not preferred) or contains a non-preferred hint,
    # so the merged hint is not preferred -> restricted rejects with TopologyAffinityError.
    result = state().admit(pod("train", "32", "256Gi", gpus=8))
    assert (result.admitted, result.reason) == (False, TAE)
    assert result.message == "Resources cannot be allocated with Topology locality"
    assert "all their masks are equal" in result.trace[0].note


def test_8gpu_restricted_admitted_when_every_resource_needs_both_nodes() -> None:
    # CPU 128 > 112 CPUs per node -> minAffinitySize 2 -> only {0,1} P (no single node has 128).
    # Memory 1100Gi > 1 TiB - 2098Mi allocatable per node -> only {0,1} P. GPUs {0,1} P. All three
    # hints preferred with equal masks -> merged {0,1} preferred -> admitted, spread on both nodes.
    s = state()
    result = s.admit(pod("train", "128", "1100Gi", gpus=8))
    assert result.admitted, result.message
    main = result.containers[0]
    assert main.numa_affinity == (0, 1)
    assert len(main.exclusive_cpus) == 128
    assert set(main.memory["memory"]) == {0, 1}
    assert main.devices["nvidia.com/gpu"] == tuple(str(i) for i in range(8))


def test_8gpu_restricted_memory_alone_can_reject() -> None:
    # Same 128 CPUs ({0,1} P only) but 256Gi memory ({0} P, {1} P, {0,1} N): the permutation
    # ({0,1},{0,1},{0,1}) has a non-preferred memory hint -> not preferred -> rejected.
    result = state().admit(pod("train", "128", "256Gi", gpus=8))
    assert (result.admitted, result.reason) == (False, TAE)


def test_8gpu_restricted_admits_burstable_pod() -> None:
    # Burstable (requests < limits): CPU and memory managers give no hints (nil, preferred), the
    # device manager still does: [{0,1} P] -> merged {0,1} preferred -> admitted, shared CPUs.
    result = state().admit(pod("train", "32", "256Gi", gpus=8, requests={"cpu": "16"}))
    assert result.admitted
    assert result.qos == "Burstable"
    assert result.containers[0].exclusive_cpus == ()


def test_8gpu_restricted_with_default_cpu_and_memory_managers() -> None:
    # cpuManagerPolicy none and memoryManagerPolicy None: only the device manager hints.
    s = NodeState(
        load_node("dgx-h100"),
        KubeletConfig.from_dict({"topologyManagerPolicy": "restricted", "topologyManagerScope": "pod"}),
    )
    assert s.admit(pod("train", "32", "256Gi", gpus=8)).admitted


def test_8gpu_best_effort_admits_and_spreads() -> None:
    # best-effort admits whatever the merge gives. Non-preferred candidates are compared against
    # bestNonPreferredAffinityCount = max over resources of their narrowest hint = 2 (GPUs), so
    # {0,1} wins: GPUs 0-7, CPUs aligned to {0,1}.
    result = state(topologyManagerPolicy="best-effort").admit(pod("train", "32", "256Gi", gpus=8))
    assert result.admitted
    assert result.containers[0].numa_affinity == (0, 1)
    assert len(result.containers[0].devices["nvidia.com/gpu"]) == 8


def test_4gpu_restricted_lands_on_one_node() -> None:
    # 4 GPUs: {0} P, {1} P, {0,1} N; CPU 16 and memory 64Gi: {0} P, {1} P, {0,1} N. The narrowest
    # preferred merged hint is {0} -> GPUs 0-3 and CPUs from NUMA 0 (never reserved 0,1,112,113).
    result = state().admit(pod("half", "16", "64Gi", gpus=4))
    assert result.admitted
    main = result.containers[0]
    assert main.numa_affinity == (0,)
    assert main.devices["nvidia.com/gpu"] == ("0", "1", "2", "3")
    node = load_node("dgx-h100")
    assert {node.cpu_by_id[c].numa for c in main.exclusive_cpus} == {0}
    assert not set(main.exclusive_cpus) & {0, 1, 112, 113}


def test_odd_cpu_count_with_full_pcpus_only_is_smt_alignment_error() -> None:
    # full-pcpus-only on an SMT-2 node: 3 % 2 != 0 -> SMTAlignmentError at Allocate, after the
    # Topology Manager admitted the hint. The message is the cpumanager's.
    s = state(cpuManagerPolicyOptions={"full-pcpus-only": "true"})
    result = s.admit(pod("odd", "3", "8Gi"))
    assert (result.admitted, result.reason) == (False, "SMTAlignmentError")
    assert result.message == "SMT Alignment Error: requested 3 cpus not multiple cpus per core = 2"
    assert s.admit(pod("even", "4", "8Gi")).admitted


def test_reserving_half_cores_burns_siblings_under_full_pcpus_only() -> None:
    # reservedSystemCPUs 0-3: their siblings 112-115 are reservedPhysicalCPUs, so only
    # 224 - 8 = 216 CPUs count as free physical CPUs: a 218-CPU pod fails although 220 are free.
    s = state(
        reservedSystemCPUs="0-3",
        cpuManagerPolicyOptions={"full-pcpus-only": "true"},
        topologyManagerPolicy="best-effort",
        memoryManagerPolicy="None",
        reservedMemory=[],
    )
    result = s.admit(pod("big", "218", "8Gi"))
    assert (result.admitted, result.reason) == (False, "SMTAlignmentError")
    assert "available physical CPUs = 216" in result.message


def test_node_fills_until_no_single_numa_node_has_room() -> None:
    # restricted, 48-CPU pods: NUMA 0 has 112 - 4 reserved = 108 assignable CPUs, NUMA 1 112.
    # Pods 1-2 -> {0} (narrowest preferred), leaving 12; pod 3 -> {1} ({0} lacks 48), pod 4 ->
    # {1}, leaving 16. 28 CPUs are free, but a 24-CPU pod's only hint is {0,1}, not preferred
    # (one node's capacity, 112, could hold 24) -> TopologyAffinityError.
    s = state(memoryManagerPolicy="None", reservedMemory=[])
    placed = [s.admit(pod(f"p{i}", "48", "8Gi")) for i in range(4)]
    assert [p.containers[0].numa_affinity for p in placed] == [(0,), (0,), (1,), (1,)]
    late = s.admit(pod("late", "24", "8Gi"))
    assert (late.admitted, late.reason) == (False, TAE)
    free = s.cpu_state.default & ~s.cpu.reserved if s.cpu else 0
    assert free.bit_count() == 28
    # best-effort on the same fill admits it, spilling over both NUMA nodes.
    be = state(memoryManagerPolicy="None", reservedMemory=[], topologyManagerPolicy="best-effort")
    for i in range(4):
        be.admit(pod(f"p{i}", "48", "8Gi"))
    spill = be.admit(pod("late", "24", "8Gi"))
    assert spill.admitted
    node = load_node("dgx-h100")
    assert {node.cpu_by_id[c].numa for c in spill.containers[0].exclusive_cpus} == {0, 1}


def test_rejected_pod_leaves_state_unchanged() -> None:
    s = state()
    before = s.exclusive_cpus()
    assert not s.admit(pod("train", "32", "256Gi", gpus=8)).admitted
    assert s.exclusive_cpus() == before
    assert len(s.free_gpus()["nvidia.com/gpu"]) == 8


def test_seed_config_does_not_start() -> None:
    # Seed: reservedMemory 2Gi on NUMA 0 but kubeReserved 2Gi + systemReserved 2Gi + default
    # evictionHard memory.available 100Mi = 4196Mi -> the memory manager cannot be created.
    cfg = config(
        reservedSystemCPUs="0-3",
        kubeReserved={"cpu": "1", "memory": "2Gi"},
        systemReserved={"cpu": "1", "memory": "2Gi"},
        reservedMemory=[{"numaNode": 0, "limits": {"memory": "2Gi"}}],
        topologyManagerPolicy="single-numa-node",
        cpuManagerPolicyOptions={"full-pcpus-only": "true"},
    )
    with pytest.raises(KubeletStartupError) as err:
        NodeState(load_node("dgx-h100"), cfg)
    assert err.value.component == "memory manager"
    assert err.value.message == (
        'the total amount "2Gi" of type "memory" is not equal to the value "4196Mi" '
        "determined by Node Allocatable feature"
    )


def test_gpus_without_numa_information_are_not_aligned() -> None:
    # A GPU whose numa_node is -1 is advertised without TopologyInfo: the device manager answers
    # nil ("no preference") for the resource, so single-numa-node admits an 8-GPU pod.
    node = load_node("dgx-h100")
    data = node.to_dict()
    for gpu in data["gpus"]:
        gpu["numa_node"] = -1
    from kubegpu.topology.model import NodeTopology

    blind = NodeTopology.from_dict(data)
    s = NodeState(blind, config(topologyManagerPolicy="single-numa-node"))
    result = s.admit(pod("train", "32", "256Gi", gpus=8))
    assert result.admitted
    assert result.trace[0].providers[0].hints is None


def test_more_than_eight_numa_nodes_needs_max_allowable_numa_nodes() -> None:
    node = load_node("topoDualSocketMultiNumaPerSocketHT")
    data = node.to_dict()
    data["numa_nodes"] = [dict(data["numa_nodes"][0], id=i) for i in range(9)]
    from kubegpu.topology.model import NodeTopology

    wide = NodeTopology.from_dict(data)
    cfg = KubeletConfig.from_dict({"topologyManagerPolicy": "best-effort"})
    with pytest.raises(KubeletStartupError, match="more than 8 NUMA Nodes"):
        NodeState(wide, cfg)
    ok = KubeletConfig.from_dict(
        {
            "topologyManagerPolicy": "best-effort",
            "topologyManagerPolicyOptions": {"max-allowable-numa-nodes": "9"},
        }
    )
    NodeState(wide, ok)


def test_init_container_cpus_are_reused_by_the_app_container() -> None:
    # Container scope: init container gets 8 exclusive CPUs; the app container (8 CPUs) reuses
    # exactly those (cpusToReuse), so after admission they are the app's.
    s = state(topologyManagerScope="container", memoryManagerPolicy="None", reservedMemory=[])
    spec = {
        "initContainers": [{"name": "init", "resources": {"limits": {"cpu": "8", "memory": "1Gi"}}}],
        "containers": [{"name": "main", "resources": {"limits": {"cpu": "8", "memory": "1Gi"}}}],
    }
    from kubegpu.kubelet import PodRequest

    result = s.admit(PodRequest.from_pod_spec("p", spec))
    assert result.admitted
    init, main = result.containers
    assert init.exclusive_cpus == main.exclusive_cpus


def test_8gpu_restricted_fractional_cpu_still_has_a_memory_hint() -> None:
    # 31500m is not a whole number of CPUs: the static CPU policy gives no hint (shared pool), but
    # the pod is Guaranteed, so the memory manager answers {0} P, {1} P, {0,1} N -> rejected.
    result = state().admit(pod("train", "31500m", "256Gi", gpus=8))
    assert (result.admitted, result.reason) == (False, TAE)
    assert [p.provider for p in result.trace[0].providers if p.hints is None] == ["cpu manager"]


@pytest.mark.parametrize(
    "preset",
    [
        "dgx-h100",
        "dgx-h200",
        "dgx-b200",
        "hgx-h100-8gpu",
        "aws-p5.48xlarge",
        "aws-p4d.24xlarge",
        "gcp-a3-highgpu-8g",
        "gcp-a3-megagpu-8g",
        "azure-nd-h100-v5",
        "gb200-nvl72-tray",
        "amd-mi300x-8gpu",
        "l40s-4gpu-1socket",
    ],
)
def test_every_gpu_preset_admits_one_gpu_per_numa_node(preset: str) -> None:
    # single-numa-node, pod scope: a 1-GPU, 2-CPU pod always has a preferred single-node hint
    # while some NUMA node still has a free GPU; each lands wholly on its GPU's NUMA node.
    node = load_node(preset)
    first_core = ",".join(str(c) for c in node.siblings(node.cpus[0].id))
    cfg = KubeletConfig.from_dict(
        {
            "cpuManagerPolicy": "static",
            "topologyManagerPolicy": "single-numa-node",
            "topologyManagerScope": "pod",
            "reservedSystemCPUs": first_core,
        }
    )
    s = NodeState(node, cfg)
    resource = node.gpus[0].resource_name
    by_index = {str(g.index): g for g in node.gpus}
    for i in range(len(node.gpus)):
        result = s.admit(pod(f"g{i}", "2", "4Gi", gpus=1, resource=resource))
        assert result.admitted, (preset, i, result.reason)
        main = result.containers[0]
        gpu = by_index[main.devices[resource][0]]
        assert {node.cpu_by_id[c].numa for c in main.exclusive_cpus} == {gpu.numa_node}
    assert s.admit(pod("extra", "2", "4Gi", gpus=1, resource=resource)).reason == TAE


def test_unknown_extended_resource_is_dropped_with_a_note() -> None:
    # removeMissingExtendedResources: amd.com/gpu is not on a DGX H100, the kubelet ignores it.
    result = state(topologyManagerPolicy="none").admit(pod("amd", "2", "4Gi", gpus=1, resource="amd.com/gpu"))
    assert result.admitted
    assert any("amd.com/gpu is not offered" in n for n in result.notes)


def test_explicit_eviction_hard_replaces_the_default_threshold() -> None:
    # evictionHard given without memory.available: the 100Mi default is gone, so Σ reservedMemory
    # must be kubeReserved + systemReserved = 4Gi; with mergeDefaultEvictionSettings the default
    # memory.available 100Mi is merged back and 4196Mi is needed again.
    base = {
        "memoryManagerPolicy": "Static",
        "kubeReserved": {"memory": "2Gi"},
        "systemReserved": {"memory": "2Gi"},
        "evictionHard": {"nodefs.available": "5%"},
        "reservedMemory": [{"numaNode": 0, "limits": {"memory": "4Gi"}}],
    }
    node = load_node("dgx-h100")
    NodeState(node, KubeletConfig.from_dict(base))
    merged = KubeletConfig.from_dict({**base, "mergeDefaultEvictionSettings": True})
    with pytest.raises(KubeletStartupError, match='"4Gi" of type "memory" is not equal to the value "4196Mi"'):
        NodeState(node, merged)
