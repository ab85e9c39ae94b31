"""The bound for greedy schedulers read from the first refused pod of the most common GPU share: once a greedy
scheduler refuses it, every pod that asks for as much of everything is refused too. On tiny clusters it is held to
every run a greedy scheduler could make (enumerated), and it is sharper than certification alone."""

from __future__ import annotations

from collections.abc import Sequence
from unittest import mock

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kubegpu.scheduler.gpu.state import MILLI, GpuPod, NodeSpec
from kubegpu.sim import bound
from kubegpu.sim.bound import BoundCurve, column_events, dominated_types
from tests.sim.test_certified import greedy_outcomes

GIB = 2**30


def _curves(nodes: Sequence[NodeSpec], arrivals: Sequence[GpuPod]) -> tuple[BoundCurve, BoundCurve]:
    """The bounds for these very arrivals (no tuning), with and without the refusal split."""
    with mock.patch.object(bound, "tune_workload", lambda trace, capacity, ratio, rand: list(trace)):
        full = bound.bound_curve(nodes, arrivals, 42)
        with mock.patch.object(bound, "_refusal_bounds", lambda *args: ({}, 0)):
            certified_only = bound.bound_curve(nodes, arrivals, 42)
    return full, certified_only


def _best(nodes: Sequence[NodeSpec], arrivals: Sequence[GpuPod], column: int) -> float:
    """The most any greedy scheduler allocates by the last event of `column`, in percent of the GPUs (every run
    enumerated)."""
    capacity = MILLI * sum(n.gpu_count for n in nodes)
    last = column_events(np.cumsum([p.total_gpu_milli for p in arrivals]).tolist(), capacity, column)[column]
    _, most = greedy_outcomes(nodes, arrivals[: last + 1])
    return round(100 * most / capacity, 2)


@st.composite
def _cases(draw: st.DrawFn) -> tuple[list[NodeSpec], list[GpuPod]]:
    nodes = [
        NodeSpec(f"n{i}", draw(st.sampled_from([3000, 8000])), 16 * GIB, draw(st.sampled_from([1, 2, 3])), "A")
        for i in range(draw(st.integers(1, 2)))
    ]
    pods = []
    for i in range(draw(st.integers(2, 7))):
        kind = draw(st.sampled_from(["shared", "shared", "small", "whole"]))
        if kind == "shared":
            pods.append(GpuPod(f"p{i}", 1000, 2 * GIB, 1, 810))
        elif kind == "small":
            pods.append(
                GpuPod(f"p{i}", draw(st.sampled_from([500, 2500])), 2 * GIB, 1, draw(st.sampled_from([150, 300, 500])))
            )
        else:
            pods.append(
                GpuPod(f"p{i}", draw(st.sampled_from([500, 2000])), draw(st.sampled_from([1, 4])) * GIB, 1, MILLI)
            )
    return nodes, pods


@settings(max_examples=120, deadline=None)
@given(_cases())
def test_no_greedy_scheduler_allocates_more_than_the_refusal_bound(case: tuple[list[NodeSpec], list[GpuPod]]) -> None:
    nodes, pods = case
    full, certified_only = _curves(nodes, pods)
    top = max(full.greedy)
    assert full.greedy[top] <= certified_only.greedy[top]
    assert _best(nodes, pods, top) <= full.greedy[top]


def test_the_first_refusal_sharpens_the_bound() -> None:
    """One node of 3 GPUs; 810, 300, a whole GPU, 810, a whole GPU. Certification alone lets the program leave the
    second 810 out and place both whole GPUs; but a scheduler that refuses that 810 has no free GPU left for the
    whole GPU after it."""
    nodes = [NodeSpec("n0", 8000, 16 * GIB, 3, "A")]
    shares = [810, 300, MILLI, 810, MILLI]
    pods = [
        GpuPod(f"p{i}", 1000 if s < MILLI else 2000, 2 * GIB if s < MILLI else 4 * GIB, 1, s)
        for i, s in enumerate(shares)
    ]
    full, certified_only = _curves(nodes, pods)
    top = max(full.greedy)
    best = _best(nodes, pods, top)
    assert best <= full.greedy[top] < certified_only.greedy[top]


def test_dominating_types_ask_for_at_least_as_much_of_everything() -> None:
    shared = [GpuPod("a1", 3000, 5 * GIB, 1, 810), GpuPod("a2", 3000, 5 * GIB + 1, 1, 810)]
    others = [
        GpuPod("whole", 3000, 5 * GIB + 1, 1, MILLI),  # as much of everything: dominated
        GpuPod("two", 9000, 8 * GIB, 2, MILLI),  # more of everything
        GpuPod("900", 3000, 6 * GIB, 1, 900),
        GpuPod("less-memory", 3000, 5 * GIB, 1, MILLI),  # less memory than a2 asks for
        GpuPod("less-cpu", 2999, 8 * GIB, 1, MILLI),
        GpuPod("smaller-share", 4000, 8 * GIB, 1, 800),
        GpuPod("pinned", 4000, 8 * GIB, 1, MILLI, node_selector=(("pool", "a"),)),
        GpuPod("model", 4000, 8 * GIB, 1, MILLI, ("A",)),  # may run only where the shared pods may: dominated
    ]
    pods = shared + others
    keys: dict[tuple[object, ...], int] = {}
    kinds = np.array(
        [
            keys.setdefault(
                (p.cpu_milli, p.memory_bytes, p.gpu_count, p.gpu_milli, p.gpu_models, p.node_selector), len(keys)
            )
            for p in pods
        ],
        dtype=np.int64,
    )
    kinds[1] = kinds[0]  # a1 and a2 are one task type (the same MiB)
    names = {int(kinds[i]): p.name for i, p in enumerate(pods)}
    assert [names[t] for t in dominated_types(pods, kinds, int(kinds[0]))] == ["whole", "two", "900", "model"]
    # a pod pinned by a selector as the shared type: no split at all
    pinned = [GpuPod("a", 3000, 5 * GIB, 1, 810, node_selector=(("pool", "a"),)), GpuPod("w", 4000, 8 * GIB, 1, MILLI)]
    assert dominated_types(pinned, np.array([0, 1], dtype=np.int64), 0) == []
