"""Invariants as property tests: no node over-allocated, gangs whole or not at all, same seed same
result, and the vectorised scoring plugins equal the scalar upstream formulas."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kubegpu.scheduler.framework import Framework, Weighted, num_feasible_nodes_to_find
from kubegpu.scheduler.gang import GangMode, place_group
from kubegpu.scheduler.gpu.fragmentation import typical_pods
from kubegpu.scheduler.gpu.k8s_plugins import BalancedAllocationScore, NodeResourcesFitScore
from kubegpu.scheduler.gpu.registry import ALL_POLICIES, make_policy
from kubegpu.scheduler.gpu.state import GpuCluster, GpuPod, NodeSpec
from kubegpu.scheduler.noderesources import BalancedAllocationScorer, FitScorer, ResourceSpec, Strategy
from kubegpu.scheduler.resources import NodeResources, ResourceRequest

MODELS = ("A", "B")
node_st = st.builds(
    lambda i, cpu, mem, gpus, model: NodeSpec(f"n{i}", cpu * 1000, mem * 2**30, gpus, MODELS[model] if gpus else ""),
    st.integers(0, 10**6),
    st.integers(1, 128),
    st.integers(1, 512),
    st.sampled_from([0, 1, 2, 4, 8]),
    st.integers(0, 1),
)
pod_st = st.builds(
    lambda cpu, mem, kind, share, count, model: GpuPod(
        "p",
        cpu * 500,
        mem * 2**30,
        0 if kind == 0 else (1 if kind == 1 else count),
        0 if kind == 0 else (share if kind == 1 else 1000),
        (MODELS[model],) if model < 2 and kind else (),
    ),
    st.integers(1, 64),
    st.integers(0, 128),
    st.integers(0, 2),
    st.integers(50, 1000),
    st.sampled_from([1, 2, 4, 8]),
    st.integers(0, 4),
)


def _named(nodes: list[NodeSpec]) -> list[NodeSpec]:
    return [NodeSpec(f"n{i}", n.cpu_milli, n.memory_bytes, n.gpu_count, n.gpu_model) for i, n in enumerate(nodes)]


def _run(nodes: list[NodeSpec], pods: list[GpuPod], policy: str, seed: int) -> list[int | None]:
    cluster = GpuCluster(nodes)
    plugin = make_policy(policy, typical_pods(pods))
    fw = Framework([Weighted(plugin, 1000)], seed=seed)
    placed: list[int | None] = []
    for i, pod in enumerate(pods):
        pod = GpuPod(f"p{i}", pod.cpu_milli, pod.memory_bytes, pod.gpu_count, pod.gpu_milli, pod.gpu_models)
        node = fw.schedule(cluster, pod)
        if node is not None:
            cluster.bind(node, pod, plugin.select_gpus(cluster, node, pod, fw.rng))
            plugin.bound(cluster, node)
            cluster.check_invariants()
        placed.append(node)
    return placed


@settings(max_examples=25, deadline=None)
@given(
    st.lists(node_st, min_size=1, max_size=6),
    st.lists(pod_st, min_size=1, max_size=25),
    st.sampled_from(ALL_POLICIES),
    st.integers(0, 10**6),
)
def test_no_node_over_allocated_and_same_seed_same_result(
    nodes: list[NodeSpec], pods: list[GpuPod], policy: str, seed: int
) -> None:
    nodes = _named(nodes)
    first = _run(nodes, pods, policy, seed)
    assert first == _run(nodes, pods, policy, seed)


@settings(max_examples=25, deadline=None)
@given(
    st.lists(node_st, min_size=1, max_size=5),
    st.lists(pod_st, min_size=1, max_size=12),
    st.sampled_from(["fgd", "bestfit", "random"]),
)
def test_gang_is_placed_whole_or_not_at_all(nodes: list[NodeSpec], pods: list[GpuPod], policy: str) -> None:
    cluster = GpuCluster(_named(nodes))
    plugin = make_policy(policy, typical_pods(pods))
    fw = Framework([Weighted(plugin, 1000)], seed=1)
    gang = [
        GpuPod(f"g{i}", p.cpu_milli, p.memory_bytes, p.gpu_count, p.gpu_milli, p.gpu_models) for i, p in enumerate(pods)
    ]
    before = (cluster.cpu_used.copy(), cluster.gpu_left.copy())
    result = place_group(cluster, fw, plugin, gang, GangMode.ALL_OR_NOTHING)
    cluster.check_invariants()
    if result.complete:
        assert len(result.bound) == len(gang)
    else:
        assert not result.bound and len(result.waiting) == len(gang)
        assert (cluster.cpu_used == before[0]).all() and (cluster.gpu_left == before[1]).all()


@settings(max_examples=40, deadline=None)
@given(
    st.lists(node_st, min_size=1, max_size=6),
    pod_st,
    st.sampled_from([Strategy.LEAST_ALLOCATED, Strategy.MOST_ALLOCATED]),
    st.lists(st.integers(1, 100), min_size=3, max_size=3),
)
def test_vectorised_fit_equals_scalar(
    nodes: list[NodeSpec], pod: GpuPod, strategy: Strategy, weights: list[int]
) -> None:
    cluster = GpuCluster(_named(nodes))
    resources = (
        ResourceSpec("cpu", weights[0]),
        ResourceSpec("memory", weights[1]),
        ResourceSpec("nvidia.com/gpu", weights[2]),
    )
    vec = NodeResourcesFitScore(strategy, resources).score(
        cluster, pod, np.arange(cluster.size), np.random.default_rng(0)
    )
    scalar = FitScorer(strategy, resources)
    bal_vec = BalancedAllocationScore().score(cluster, pod, np.arange(cluster.size), np.random.default_rng(0))
    bal = BalancedAllocationScorer()
    req = {"cpu": pod.cpu_milli, "memory": pod.memory_bytes, "nvidia.com/gpu": pod.total_gpu_milli}
    request = ResourceRequest({k: v for k, v in req.items() if v}, {k: v for k, v in req.items() if v})
    for i, spec in enumerate(cluster.nodes):
        alloc = {"cpu": spec.cpu_milli, "memory": spec.memory_bytes, "nvidia.com/gpu": spec.gpu_count * 1000}
        node = NodeResources(spec.name, {k: v for k, v in alloc.items() if v})
        assert vec[i] == scalar.score(node, request)
        assert bal_vec[i] == bal.score(node, request)


def test_num_feasible_nodes_to_find() -> None:
    assert num_feasible_nodes_to_find(50) == 50
    assert num_feasible_nodes_to_find(1213) == 497  # 50 - 1213/125 = 41 %
    assert num_feasible_nodes_to_find(10000, 0) == 500  # 50 - 80 < 5: floored at 5 %
    assert num_feasible_nodes_to_find(1000, 100) == 1000
    assert num_feasible_nodes_to_find(150, 10) == 100  # never under 100


def test_rotating_start_index_and_cut() -> None:
    nodes = [NodeSpec(f"n{i:03d}", 8000, 2**30, 0) for i in range(300)]
    cluster = GpuCluster(nodes)
    plugin = make_policy("bestfit", ())
    fw = Framework([Weighted(plugin, 1)], percentage_of_nodes_to_score=40, seed=0)
    pod = GpuPod("p", 100)
    first = fw.feasible_nodes(cluster, pod)
    assert len(first) == 120 and first[0] == 0
    second = fw.feasible_nodes(cluster, pod)
    assert second[0] == 120  # the next cycle starts where the last one stopped


def test_tie_break_random_is_uniform_and_lowest_name_is_fixed() -> None:
    nodes = [NodeSpec(f"n{i}", 8000, 2**30, 1, "A") for i in range(4)]
    cluster = GpuCluster(nodes)
    pod = GpuPod("p", 100, 0, 1, 500)
    fw = Framework([Weighted(make_policy("clustering", ()), 1)], seed=3)
    picks = {fw.schedule(cluster, pod) for _ in range(60)}
    assert picks == {0, 1, 2, 3}
    rank = np.array([3, 1, 0, 2])
    fixed = Framework([Weighted(make_policy("clustering", ()), 1)], tie_break="lowest-name", name_rank=rank)
    assert {fixed.schedule(cluster, pod) for _ in range(10)} == {2}


@settings(max_examples=30, deadline=None)
@given(st.lists(node_st, min_size=1, max_size=6), pod_st)
def test_vectorised_volcano_binpack_equals_scalar(nodes: list[NodeSpec], pod: GpuPod) -> None:
    from kubegpu.scheduler.gpu.k8s_plugins import VolcanoBinpackScore
    from kubegpu.scheduler.volcano import BinpackArgs, binpack_score

    cluster = GpuCluster(_named(nodes))
    vec = VolcanoBinpackScore().score(cluster, pod, np.arange(cluster.size), np.random.default_rng(0))
    args = BinpackArgs(1, {"cpu": 1, "memory": 1, "nvidia.com/gpu": 1})
    request = {"cpu": pod.cpu_milli, "memory": pod.memory_bytes, "nvidia.com/gpu": pod.total_gpu_milli}
    for i, spec in enumerate(cluster.nodes):
        alloc = {"cpu": spec.cpu_milli, "memory": spec.memory_bytes, "nvidia.com/gpu": spec.gpu_count * 1000}
        assert vec[i] == int(np.floor(binpack_score(request, alloc, {}, args) + 0.5))
