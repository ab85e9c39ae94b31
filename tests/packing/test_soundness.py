"""The packing bounds are sound: on random small clusters and task sets each is at least the exact integer
optimum found by exhaustive search, with and without tasks that must be placed; node patterns are never
looser than the class LP; and GPU sharing is packed exactly."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubegpu.errors import ModelError
from kubegpu.packing.classlp import ClassLP
from kubegpu.packing.colgen import ColumnGeneration
from kubegpu.packing.model import MILLI, NodeClass, PackingProblem, TaskType, fits, pack_shares
from kubegpu.packing.pricing import fillings
from tests.packing.brute import optimum

TOLERANCE = 1e-6


@st.composite
def node_classes(draw: st.DrawFn) -> NodeClass:
    gpus = draw(st.sampled_from([1, 2, 4]))
    return NodeClass(
        name="n",
        count=draw(st.integers(1, 2)),
        cpu_milli=draw(st.sampled_from([4000, 8000, 16000])),
        memory_mib=draw(st.sampled_from([16384, 32768, 65536])),
        pods=draw(st.sampled_from([2, 3, 110])),
        gpus=gpus,
    )


@st.composite
def task_types(draw: st.DrawFn) -> TaskType:
    kind = draw(st.sampled_from(["share", "whole", "cpu"]))
    if kind == "share":
        count, milli = 1, draw(st.sampled_from([100, 250, 300, 350, 500, 600, 750, 810]))
    elif kind == "whole":
        count, milli = draw(st.sampled_from([1, 2, 4])), MILLI
    else:
        count, milli = 0, 0
    return TaskType(
        name=kind,
        cpu_milli=draw(st.sampled_from([0, 500, 1000, 2500, 4000, 6000])),
        memory_mib=draw(st.sampled_from([0, 4096, 8192, 20480])),
        gpu_count=count,
        gpu_milli=milli,
        available=draw(st.integers(0, 4)),
    )


@st.composite
def problems(draw: st.DrawFn) -> PackingProblem:
    classes = tuple(draw(st.lists(node_classes(), min_size=1, max_size=2)))
    types = tuple(draw(st.lists(task_types(), min_size=1, max_size=3)))
    eligible = tuple(tuple(draw(st.booleans()) or t.gpu_count == 0 for t in types) for _ in classes)
    return PackingProblem(classes, types, eligible)


def _counts(problem: PackingProblem) -> np.ndarray:
    return np.array([t.available for t in problem.types], dtype=np.int64)


@settings(max_examples=60)
@given(problems())
def test_class_lp_and_node_patterns_bound_the_integer_optimum(problem: PackingProblem) -> None:
    counts = _counts(problem)
    zero = np.zeros(len(counts), dtype=np.int64)
    best = optimum(problem, counts.tolist())
    loose = ClassLP(problem).solve(zero, counts)
    assert loose.value >= best - TOLERANCE
    tight = ColumnGeneration(problem).solve(zero, counts, tolerance=1e-6)
    assert tight.value >= best - TOLERANCE
    assert tight.primal <= tight.value + TOLERANCE
    # node patterns refine the class LP: converged, their LP optimum is never above it
    assert tight.primal <= loose.value + 1e-6 * (1 + loose.value)


@settings(max_examples=40)
@given(problems(), st.data())
def test_bounds_hold_when_some_tasks_must_be_placed(problem: PackingProblem, data: st.DataObject) -> None:
    counts = _counts(problem)
    # what must be placed: a placement that exists (a first-fit of some tasks), so the problem is feasible
    required = [0] * len(counts)
    nodes = [c for c, node in enumerate(problem.classes) for _ in range(node.count)]
    for c in nodes:
        held = [0] * len(counts)
        for t in range(len(counts)):
            while required[t] < counts[t] and problem.eligible[c][t] and data.draw(st.booleans()):
                held[t] += 1
                if not fits(problem.classes[c], problem.types, held):
                    held[t] -= 1
                    break
                required[t] += 1
    forced = PackingProblem(
        problem.classes,
        tuple(
            TaskType(t.name, t.cpu_milli, t.memory_mib, t.gpu_count, t.gpu_milli, t.available, r)
            for t, r in zip(problem.types, required, strict=True)
        ),
        problem.eligible,
    )
    lower = np.array(required, dtype=np.int64)
    best = optimum(forced, counts.tolist(), required)
    assert best > float("-inf")
    assert ClassLP(forced).solve(lower, counts).value >= best - TOLERANCE
    # lower bounds given only to `solve` (the problem requires nothing) are as sound
    assert ClassLP(problem).solve(lower, counts).value >= best - TOLERANCE
    assert ColumnGeneration(forced).solve(lower, counts, tolerance=1e-6).value >= best - TOLERANCE


@settings(max_examples=200)
@given(
    st.lists(st.sampled_from([50, 110, 190, 250, 300, 330, 460, 500, 650, 810, 1000]), max_size=7), st.integers(0, 3)
)
def test_pack_shares_is_exact(shares: list[int], bins: int) -> None:
    def brute() -> bool:
        return any(
            all(sum(s for s, b in zip(shares, assign, strict=True) if b == k) <= MILLI for k in range(bins))
            for assign in itertools.product(range(bins), repeat=len(shares))
        ) or (not shares)

    assert pack_shares(shares, bins) == brute()


def test_fillings_are_the_maximal_multisets() -> None:
    sizes = (300, 450, 600)
    got = set(fillings(sizes))
    every = {
        v
        for v in itertools.product(range(4), range(3), range(2))
        if any(v) and sum(n * s for n, s in zip(v, sizes, strict=True)) <= MILLI
    }
    maximal = {v for v in every if all(sum(n * s for n, s in zip(v, sizes, strict=True)) + s > MILLI for s in sizes)}
    assert got == maximal


def test_an_810_share_leaves_its_gpu_to_small_tasks_only() -> None:
    node = NodeClass("n", 1, 64000, 262144, 110, 2)
    big = TaskType("810", 1000, 0, 1, 810, 3)
    small = TaskType("190", 1000, 0, 1, 190, 2)
    assert fits(node, (big, small), (2, 2))
    assert not fits(node, (big, small), (3, 0))
    problem = PackingProblem((node,), (big, small), ((True, True),))
    zero = np.zeros(2, dtype=np.int64)
    counts = np.array([3, 0], dtype=np.int64)
    # three 810 shares on two GPUs: at most two fit, whichever bound is asked
    assert ClassLP(problem).solve(zero, counts).value == pytest.approx(1620, abs=0.01)
    assert ColumnGeneration(problem).solve(zero, counts, tolerance=1e-6).value == pytest.approx(1620, abs=0.01)


def test_per_node_cpu_is_seen_by_node_patterns_not_by_the_class_lp() -> None:
    # two nodes of 8 CPUs; one 1-GPU task of 6 CPUs and three of 3 CPUs. Pooled, the class has the 15 CPUs
    # all four need; node by node, the 6-CPU task sits alone and the other node holds two 3-CPU tasks.
    node = NodeClass("n", 2, 8000, 65536, 110, 4)
    wide = TaskType("6cpu", 6000, 0, 1, MILLI, 1)
    narrow = TaskType("3cpu", 3000, 0, 1, MILLI, 3)
    problem = PackingProblem((node,), (wide, narrow), ((True, True),))
    zero = np.zeros(2, dtype=np.int64)
    counts = np.array([1, 3], dtype=np.int64)
    assert optimum(problem, [1, 3]) == 3000
    assert ClassLP(problem).solve(zero, counts).value == pytest.approx(4000, abs=0.01)
    # the node-pattern LP: half a node with the wide task, one and a half with two narrow ones
    assert ColumnGeneration(problem).solve(zero, counts, tolerance=1e-6).value == pytest.approx(3500, abs=0.01)


def test_bad_problems_are_refused() -> None:
    node = NodeClass("n", 1, 1000, 1024, 110, 1)
    with pytest.raises(ModelError):
        PackingProblem((node,), (TaskType("t", 0, 0, 2, 500, 1),), ((True,),))
    with pytest.raises(ModelError):
        PackingProblem((node,), (TaskType("t", 0, 0, 1, 500, 1, required=2),), ((True,),))
    with pytest.raises(ModelError):
        PackingProblem((node,), (TaskType("t", 0, 0, 1, 500, 1),), ())
