"""The shared explanation of a waiting pod or gang (scheduler/gpu/why.py) on hand-made clusters, and properties on
random ones: it leaves the cluster as it found it, and says "fits" exactly when the scheduler finds a node."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kubegpu.scheduler.constraints import Taint
from kubegpu.scheduler.framework import Framework
from kubegpu.scheduler.gpu.objects import pod_of
from kubegpu.scheduler.gpu.state import GpuCluster, GpuPod, NodeSpec
from kubegpu.scheduler.gpu.why import CAPACITY, FITS, FRAGMENTATION, KUBELET, PLACEMENT, RESOURCES, explain

GIB = 1 << 30


def _cluster(used: list[int], gpus: int = 8, cpu: int = 64000) -> GpuCluster:
    cluster = GpuCluster([NodeSpec(f"n{i}", cpu, 512 * GIB, gpu_count=gpus) for i in range(len(used))])
    for i, count in enumerate(used):
        if count:
            cluster.bind(i, pod_of(f"r{i}", {"cpu": 1000, "nvidia.com/gpu": count}), tuple(range(count)))
    return cluster


def _gpu_pod(gpus: int, cpu: int = 1000, name: str = "p") -> GpuPod:
    return pod_of(name, {"cpu": cpu, "nvidia.com/gpu": gpus})


def test_no_node_is_big_enough() -> None:
    e = explain(_cluster([0, 0]), [_gpu_pod(16)], "p")
    assert e.message == "0/2 nodes are available: 2 Insufficient nvidia.com/gpu."
    assert e.kinds == (CAPACITY,)
    assert e.causes[0].figures == {"largest_node_gpus": 8}


def test_too_few_free_gpus_in_all_is_capacity_not_fragmentation() -> None:
    e = explain(_cluster([7, 7]), [_gpu_pod(4)], "p")
    assert e.kinds == (CAPACITY,)
    assert e.causes[0].figures["free_gpus"] == 2


def test_cpu_shortfall_strands_the_gpus() -> None:
    cluster = _cluster([0, 8])
    cluster.bind(0, pod_of("cpu-hog", {"cpu": 60000}), ())
    e = explain(cluster, [_gpu_pod(8, cpu=16000)], "p")
    assert e.message == "0/2 nodes are available: 1 Insufficient cpu, 1 Insufficient nvidia.com/gpu."
    assert e.kinds == (RESOURCES,)
    assert e.causes[0].figures == {"nodes": 1, "short": {"cpu": 1}, "stranded_gpus": 8}
    assert "asks 16 CPUs, most free 4" in e.causes[0].message


def test_a_cordon_counts_before_the_gpus() -> None:
    cluster = GpuCluster(
        [
            NodeSpec("cordoned", 64000, 512 * GIB, gpu_count=8, unschedulable=True),
            NodeSpec("tainted", 64000, 512 * GIB, gpu_count=8, taints=(Taint("a", "b", "NoExecute"),)),
        ]
    )
    e = explain(cluster, [_gpu_pod(8)], "p")
    assert e.reasons == {"node(s) were unschedulable": 1, "node(s) had untolerated taint(s)": 1}
    assert e.kinds == (PLACEMENT,)
    assert e.causes[0].figures["taints"] == {"a=b:NoExecute": 1}


def test_a_gang_that_outgrows_the_free_nodes() -> None:
    # 2 nodes have 8 free; the third pod of 8 meets 16 GPUs scattered 2 by 2
    cluster = _cluster([0, 0, 6, 6, 6, 6, 6, 6, 6, 6])
    before = cluster.gpu_left.copy()
    e = explain(cluster, [_gpu_pod(8, name=f"w{i}") for i in range(3)], "gang")
    assert e.pods == 3 and e.kinds == (FRAGMENTATION,)
    assert e.causes[0].figures["gang_pods_placed"] == 2
    assert e.message == "0/10 nodes are available: 10 Insufficient nvidia.com/gpu."
    assert (cluster.gpu_left == before).all()


def test_kubelet_refusal_on_every_node_with_room() -> None:
    cluster = _cluster([0, 0, 8])
    e = explain(cluster, [_gpu_pod(8)], "p", kubelet=lambda node, pod: ("TopologyAffinityError", "no alignment"))
    assert e.kinds == (KUBELET,)
    assert e.causes[0].figures == {"nodes": 2, "nodes_with_room": 2, "by_reason": {"TopologyAffinityError": 2}}
    # one node that admits is enough
    admits_n1 = explain(cluster, [_gpu_pod(8)], "p", kubelet=lambda node, pod: None if node == 1 else ("X", "y"))
    assert admits_n1.kinds == (FITS,)


@settings(max_examples=60, deadline=None)
@given(
    used=st.lists(st.integers(0, 8), min_size=1, max_size=6),
    gpus=st.integers(1, 8),
    count=st.integers(1, 4),
    cordon=st.lists(st.booleans(), min_size=6, max_size=6),
)
def test_explain_is_read_only_and_agrees_with_the_scheduler(
    used: list[int], gpus: int, count: int, cordon: list[bool]
) -> None:
    nodes = [NodeSpec(f"n{i}", 64000, 512 * GIB, gpu_count=8, unschedulable=cordon[i]) for i in range(len(used))]
    cluster = GpuCluster(nodes)
    for i, n in enumerate(used):
        if n:
            cluster.bind(i, pod_of(f"r{i}", {"cpu": 1000, "nvidia.com/gpu": n}), tuple(range(n)))
    state = (cluster.gpu_left.copy(), cluster.cpu_used.copy(), cluster.pods_used.copy())
    pods = [_gpu_pod(gpus, name=f"w{i}") for i in range(count)]
    e = explain(cluster, pods, "gang")
    assert all(
        (a == b).all() for a, b in zip(state, (cluster.gpu_left, cluster.cpu_used, cluster.pods_used), strict=True)
    )
    # copies of the pod the open nodes can take, all at once: the gang fits exactly when they reach its size
    room = sum(int(cluster.full_free[i]) // gpus for i in range(len(used)) if not cordon[i])
    assert (e.kinds == (FITS,)) == (room >= count)
    if e.kinds != (FITS,):
        assert e.message.startswith(f"0/{len(used)} nodes are available: ")
        assert sum(e.reasons.values()) == len(used)
    if count == 1:  # one pod: "fits" exactly when kube-scheduler's filters leave a node
        assert (len(Framework[GpuCluster, GpuPod]([]).feasible_nodes(cluster, pods[0])) > 0) == (e.kinds == (FITS,))
