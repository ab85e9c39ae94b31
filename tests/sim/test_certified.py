"""Certified pods are placed by every greedy scheduler: on tiny clusters every way a scheduler that binds each
pod that fits could place the arrivals is enumerated, and each certified pod is placed in all of them; the bound
for greedy schedulers is above the best of them; the blocking modes cover every rejection of the filters."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kubegpu.packing.classlp import ClassLP
from kubegpu.scheduler.gpu.registry import ALL_POLICIES
from kubegpu.scheduler.gpu.state import MILLI, GpuCluster, GpuPod, NodeSpec
from kubegpu.sim.bound import bound_curve, column_events, pod_key, trace_problem
from kubegpu.sim.certified import certify, mode_contributions, mode_costs, usage
from kubegpu.sim.experiment import run_policy, seeded_stream, tune_workload

GIB = 2**30


@st.composite
def nodes_(draw: st.DrawFn, most: int = 2) -> list[NodeSpec]:
    return [
        NodeSpec(
            f"n{i}",
            draw(st.sampled_from([4000, 8000])),
            draw(st.sampled_from([8, 16])) * GIB,
            draw(st.sampled_from([1, 2, 3])),
            draw(st.sampled_from(["A", "B"])),
            max_pods=draw(st.sampled_from([2, 3, 110])),
        )
        for i in range(draw(st.integers(1, most)))
    ]


@st.composite
def pods_(draw: st.DrawFn, most: int = 6) -> list[GpuPod]:
    out = []
    for i in range(draw(st.integers(1, most))):
        kind = draw(st.sampled_from(["share", "share", "whole", "cpu"]))
        count, milli = {
            "share": (1, draw(st.sampled_from([200, 399, 400, 500, 600, 601, 810]))),
            "whole": (draw(st.sampled_from([1, 2])), MILLI),
            "cpu": (0, 0),
        }[kind]
        out.append(
            GpuPod(
                f"p{i}",
                draw(st.sampled_from([0, 1000, 2500, 3000, 3001, 4000])),
                draw(st.sampled_from([0, 2, 6])) * GIB,
                count,
                milli,
                draw(st.sampled_from([(), (), ("A",), ("B",)])) if count else (),
            )
        )
    return out


def choices(cluster: GpuCluster, pod: GpuPod) -> list[tuple[int, tuple[int, ...]]]:
    """Every (node, GPUs) a scheduler could bind the pod to: every node the filters pass, every GPU set."""
    out: list[tuple[int, tuple[int, ...]]] = []
    for node in np.flatnonzero(cluster.feasible(pod)):
        gpus = range(int(cluster.gpu_count[node]))
        if not pod.is_gpu:
            out.append((int(node), ()))
        elif pod.is_share:
            out += [(int(node), (g,)) for g in gpus if cluster.gpu_left[node, g] >= pod.gpu_milli]
        else:
            free = [g for g in gpus if cluster.gpu_left[node, g] == MILLI]
            out += [(int(node), combo) for combo in itertools.combinations(free, pod.gpu_count)]
    return out


def greedy_outcomes(nodes: Sequence[NodeSpec], arrivals: Sequence[GpuPod]) -> tuple[frozenset[int], int]:
    """Over every run of every greedy scheduler (each pod bound somewhere when it fits, never moved): the
    arrivals placed in all of them, and the most GPU milli any of them allocates."""
    cluster = GpuCluster(nodes)

    def state() -> tuple[object, ...]:  # GPUs of a node are interchangeable: sort them
        gpus = tuple(tuple(sorted(row)) for row in cluster.gpu_left.tolist())
        return (tuple(cluster.cpu_used), tuple(cluster.mem_used), tuple(cluster.pods_used), gpus)

    memo: dict[tuple[int, tuple[object, ...]], tuple[frozenset[int], int]] = {}

    def walk(i: int) -> tuple[frozenset[int], int]:
        if i == len(arrivals):
            return frozenset(), 0
        key = (i, state())
        if key in memo:
            return memo[key]
        pod = arrivals[i]
        options = choices(cluster, pod)
        if not options:
            result = walk(i + 1)
        else:
            always: frozenset[int] | None = None
            best = 0
            for node, gpus in options:
                cluster.bind(node, pod, gpus)
                placed, most = walk(i + 1)
                cluster.unbind(node, pod, gpus)
                always = placed if always is None else always & placed
                best = max(best, most + pod.total_gpu_milli)
            assert always is not None
            result = (always | {i}, best)
        memo[key] = result
        return result

    return walk(0)


@settings(max_examples=60, deadline=None)
@given(nodes_(), pods_())
def test_every_certified_pod_is_placed_by_every_greedy_scheduler(nodes: list[NodeSpec], pods: list[GpuPod]) -> None:
    certified = certify(nodes, pods).placed
    always, _ = greedy_outcomes(nodes, pods)
    for i, pod in enumerate(pods):
        if certified[i]:
            assert i in always, (i, pod)
    # not vacuous: the first GPU pod that fits an empty node is certified (nothing arrived before it)
    empty = GpuCluster(nodes)
    first = next((i for i, p in enumerate(pods) if p.is_gpu and empty.feasible(p).any()), None)
    if first is not None and not any(p.is_gpu or p.cpu_milli or p.memory_bytes for p in pods[:first]):
        assert certified[first]


@settings(max_examples=30, deadline=None)
@given(nodes_(), pods_(4), st.integers(0, 10_000))
def test_the_greedy_bound_is_above_every_greedy_scheduler(
    nodes: list[NodeSpec], trace: list[GpuPod], seed: int
) -> None:
    if not any(p.is_gpu for p in trace):
        return
    curve = bound_curve(nodes, trace, seed)
    assert set(curve.greedy) == set(curve.discrete)
    assert all(curve.greedy[k] <= curve.discrete[k] for k in curve.discrete)
    for policy in ALL_POLICIES:
        result = run_policy(nodes, trace, policy, seed)
        for k, value in result.discrete.items():
            assert value <= curve.greedy[k], (policy, k, value, curve.greedy[k])
    if not curve.greedy:
        return
    # at the last column: no greedy scheduler, in any order of choices, allocates more
    capacity = trace_problem(nodes, trace).capacity_milli
    arrivals = tune_workload(trace, capacity, 1.3, seeded_stream(seed))
    top = max(curve.greedy)
    last = column_events(np.cumsum([p.total_gpu_milli for p in arrivals]).tolist(), capacity, 130)[top]
    if last < 9:
        _, best = greedy_outcomes(nodes, arrivals[: last + 1])
        assert round(100 * best / capacity, 2) <= curve.greedy[top]


@settings(max_examples=200, deadline=None)
@given(nodes_(1), pods_(8), pods_(1), st.randoms(use_true_random=False))
def test_a_node_that_rejects_a_pod_meets_a_blocking_mode(
    nodes: list[NodeSpec], pods: list[GpuPod], targets: list[GpuPod], rng: object
) -> None:
    """The lemma certification rests on: whenever the filters keep a pod off a node it fits empty, the pods
    on the node reach the cost of one blocking mode."""
    (target,) = targets
    cluster = GpuCluster(nodes)
    if not target.is_gpu or not cluster.feasible(target)[0]:
        return
    on_node = []
    for pod in pods:
        options = choices(cluster, pod)
        if options:
            node, gpus = options[rng.randrange(len(options))]  # type: ignore[attr-defined]
            cluster.bind(node, pod, gpus)
            on_node.append(pod)
    if cluster.feasible(target)[0]:
        return
    costs = mode_costs(target, nodes[0])
    totals = [sum(column) for column in zip(*(mode_contributions(target, usage(p)) for p in on_node), strict=True)]
    assert any(cost is not None and total >= cost for cost, total in zip(costs, totals, strict=False))


def test_certification_is_exact_where_the_arrivals_leave_no_choice() -> None:
    one = [NodeSpec("n", 8000, 16 * GIB, 1, "A")]
    halves = [GpuPod(f"p{i}", 1000, GIB, 1, 500) for i in range(3)]
    assert certify(one, halves).placed.tolist() == [True, True, False]
    # two nodes: a scheduler may spread the first two 600s, and then the third fits nowhere
    two = [NodeSpec(f"n{i}", 8000, 16 * GIB, 1, "A") for i in range(2)]
    sixes = [GpuPod(f"p{i}", 1000, GIB, 1, 600) for i in range(3)]
    assert certify(two, sixes).placed.tolist() == [True, True, False]
    # CPU: the second pod asking for 3 of 4 cores fits nowhere, whatever share of the GPU is left
    cpu = [NodeSpec("n", 4000, 16 * GIB, 1, "A")]
    assert certify(cpu, [GpuPod(f"p{i}", 3000, GIB, 1, 100) for i in range(2)]).placed.tolist() == [True, False]

    # each blocking mode at its edge: one unit less than the node's room lets the next pod in, the edge does not
    def pair(first: GpuPod, second: GpuPod, node: NodeSpec = cpu[0]) -> list[bool]:
        return certify([node], [first, second]).placed.tolist()

    assert pair(GpuPod("a", 3000, GIB, 1, 100), GpuPod("b", 1000, GIB, 1, 100)) == [True, True]
    assert pair(GpuPod("a", 3001, GIB, 1, 100), GpuPod("b", 1000, GIB, 1, 100)) == [True, False]
    small = NodeSpec("n", 4000, 4000, 1, "A")  # memory in bytes: a byte over is as good as a GiB
    assert pair(GpuPod("a", 1000, 3000, 1, 100), GpuPod("b", 1000, 1000, 1, 100), small) == [True, True]
    assert pair(GpuPod("a", 1000, 3001, 1, 100), GpuPod("b", 1000, 1000, 1, 100), small) == [True, False]
    assert pair(GpuPod("a", 1000, GIB, 1, 600), GpuPod("b", 1000, GIB, 1, 400)) == [True, True]
    assert pair(GpuPod("a", 1000, GIB, 1, 601), GpuPod("b", 1000, GIB, 1, 400)) == [True, False]
    pair_gpus = NodeSpec("n", 8000, 16 * GIB, 2, "A")
    assert pair(GpuPod("a", 1000, GIB, 1, 1), GpuPod("b", 1000, GIB, 2, MILLI), pair_gpus) == [True, False]
    assert pair(GpuPod("a", 1000, GIB), GpuPod("b", 1000, GIB, 2, MILLI), pair_gpus) == [False, True]
    slots = NodeSpec("n", 8000, 16 * GIB, 2, "A", max_pods=2)
    assert certify([slots], [GpuPod(f"p{i}", 0, 0, 1, 10) for i in range(3)]).placed.tolist() == [True, True, False]
    # a whole node's worth of small pods: all fit whatever the order, all certified
    eight = [NodeSpec("n", 64000, 256 * GIB, 8, "A")]
    assert certify(eight, [GpuPod(f"p{i}", 4000, 8 * GIB, 1, MILLI) for i in range(8)]).count == 8
    # pods that fit no node (here: another GPU model) are never certified; CPU-only pods are not asked about
    assert certify(one, [GpuPod("b", 1000, GIB, 1, 500, ("B",)), GpuPod("c", 1000, GIB)]).count == 0


@settings(max_examples=40, deadline=None)
@given(nodes_(3), pods_(12), st.integers(0, 12))
def test_certification_depends_only_on_earlier_arrivals(nodes: list[NodeSpec], pods: list[GpuPod], cut: int) -> None:
    whole = certify(nodes, pods).placed
    assert certify(nodes, pods[:cut]).placed.tolist() == whole[:cut].tolist()
    # per kind of pod the certified arrivals are the first ones: the adversary's budget only grows
    for shape in {(usage(p), p.gpu_models) for p in pods}:
        marks = [bool(whole[i]) for i, p in enumerate(pods) if (usage(p), p.gpu_models) == shape]
        assert marks == sorted(marks, reverse=True)


def test_certified_pods_make_the_packing_program_a_bound_for_greedy_schedulers_only() -> None:
    # one GPU: an 810 milli-GPU pod first, then two of 500. Any placement may keep the two 500s (1000 milli);
    # every greedy scheduler places the 810 and then neither 500 fits (810 milli)
    nodes = [NodeSpec("n", 8000, 16 * GIB, 1, "A")]
    arrivals = [GpuPod("big", 1000, GIB, 1, 810), GpuPod("a", 1000, GIB, 1, 500), GpuPod("b", 1000, GIB, 1, 500)]
    certified = certify(nodes, arrivals).placed
    assert certified.tolist() == [True, False, False]
    tp = trace_problem(nodes, arrivals)
    counts = np.zeros(len(tp.problem.types), dtype=np.int64)
    lower = np.zeros_like(counts)
    for pod, sure in zip(arrivals, certified, strict=True):
        counts[tp.type_of[pod_key(pod)]] += 1
        lower[tp.type_of[pod_key(pod)]] += int(sure)
    lp = ClassLP(tp.problem)
    assert lp.solve(np.zeros_like(counts), counts).value >= 1000 - 1e-6
    assert 810 - 1e-6 <= lp.solve(lower, counts).value < 811
    assert greedy_outcomes(nodes, arrivals) == (frozenset({0}), 810)


def test_whole_gpus_are_certified_until_the_earlier_pods_could_touch_every_gpu() -> None:
    # 40 nodes × 8 GPUs: a one-GPU pod fits while some GPU is untouched, and every earlier pod touches at most
    # one; CPU (96 cores, 1 asked) and pod slots (110) block far later, so exactly the first 320 are certified
    nodes = [NodeSpec(f"n{i}", 96000, 384 * GIB, 8, "G2") for i in range(40)]
    pods = [GpuPod(f"p{i}", 1000, GIB, 1, MILLI) for i in range(400)]
    result = certify(nodes, pods)
    assert result.placed.tolist() == [True] * 320 + [False] * 80
    assert result.lp_solves <= 12  # a binary search, not one program per arrival
