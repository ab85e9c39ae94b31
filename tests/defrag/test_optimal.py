"""On random small clusters, the plan's size equals the exact optimum found by exhaustive search over every set
of evictions (pod groups whole, a budget's allowance, pods above the waiting pod's priority kept, pods below it
allowed to stay unplaced, a pod group only whole) and every placement of the pods that must run."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubegpu.defrag.after import applied
from kubegpu.defrag.lower import lower_bound
from kubegpu.defrag.plan import make_plan
from kubegpu.defrag.problem import build_instance
from kubegpu.defrag.targets import target_for
from kubegpu.live.fit import node_free
from tests.defrag.objects import budget, node, pod, snapshot

VOLCANO = "scheduling.k8s.io/group-name"
TARGET_PRIORITY = 10


@dataclass(frozen=True)
class Item:
    name: str
    node: int
    cpu: int
    gpus: int
    priority: int
    group: str
    app: str


def _fits(free: list[list[int]], items: list[tuple[int, int]]) -> bool:
    """Can every (cpu, gpus) item go on some node within `free` (cpu, gpus, pod slots)?"""
    if not items:
        return True
    cpu, gpus = items[0]
    for n, room in enumerate(free):
        if room[0] >= cpu and room[1] >= gpus and room[2] >= 1:
            free[n] = [room[0] - cpu, room[1] - gpus, room[2] - 1]
            ok = _fits(free, items[1:])
            free[n] = room
            if ok:
                return True
    return False


def brute_force(
    nodes: list[tuple[int, int]], items: list[Item], target: tuple[int, int], allowed: int | None
) -> int | None:
    """The fewest evictions that let the target run, or None."""
    movable = [i for i in items if i.priority <= TARGET_PRIORITY]
    for size in range(len(movable) + 1):
        for chosen in itertools.combinations(movable, size):
            names = {i.name for i in chosen}
            groups = {i.group for i in chosen if i.group}
            if any(i.group in groups and i.name not in names for i in items):
                continue  # a group is evicted whole
            if allowed is not None and sum(1 for i in chosen if i.app == "guarded") > allowed:
                continue
            free = [[cpu, gpus, 110] for cpu, gpus in nodes]
            for i in items:
                if i.name not in names:
                    free[i.node][0] -= i.cpu
                    free[i.node][1] -= i.gpus
                    free[i.node][2] -= 1
            # a pod below the waiting pod's priority may be left waiting; a pod group only whole, and only when
            # every pod of it is below that priority
            keep = {i.group for i in items if i.group and i.priority >= TARGET_PRIORITY}
            placed = [i for i in chosen if (i.group in keep if i.group else i.priority >= TARGET_PRIORITY)]
            must = [target, *sorted(((i.cpu, i.gpus) for i in placed), reverse=True)]
            if _fits(free, must):
                return size
    return None


@st.composite
def clusters(draw: st.DrawFn) -> tuple[list[tuple[int, int]], list[Item], tuple[int, int], int | None]:
    count = draw(st.integers(2, 3))
    nodes = [(draw(st.sampled_from([4, 8, 16])), draw(st.sampled_from([2, 4]))) for _ in range(count)]
    free = [list(n) for n in nodes]
    items: list[Item] = []
    for k in range(draw(st.integers(1, 7))):
        at = draw(st.integers(0, count - 1))
        cpu, gpus = draw(st.sampled_from([1, 2, 4])), draw(st.integers(0, 2))
        if free[at][0] < cpu or free[at][1] < gpus:
            continue
        free[at][0] -= cpu
        free[at][1] -= gpus
        priority = draw(st.sampled_from([0, TARGET_PRIORITY, 100]))
        group = draw(st.sampled_from(["", "", "", "g1", "g2"]))
        app = draw(st.sampled_from(["guarded", "other"]))
        items.append(Item(f"p{k}", at, cpu, gpus, priority, group, app))
    target = (draw(st.sampled_from([1, 2, 4])), draw(st.integers(1, 4)))
    allowed = draw(st.sampled_from([None, 0, 1, 2]))
    return nodes, items, target, allowed


def _objects(
    nodes: list[tuple[int, int]], items: list[Item], target: tuple[int, int], allowed: int | None
) -> list[dict[str, Any]]:
    objects: list[dict[str, Any]] = [
        node(f"n{i}", gpus=gpus, cpu=str(cpu), memory="64Gi") for i, (cpu, gpus) in enumerate(nodes)
    ]
    for i in items:
        obj = pod(
            i.name,
            i.gpus,
            f"n{i.node}",
            cpu=str(i.cpu),
            memory="1Gi",
            priority=i.priority,
            annotations={VOLCANO: i.group} if i.group else None,
        )
        obj["metadata"]["labels"]["app"] = i.app
        objects.append(obj)
    objects.append(
        pod("want", target[1], None, cpu=str(target[0]), memory="1Gi", owner="Job", priority=TARGET_PRIORITY)
    )
    if allowed is not None:
        objects.append(budget("guard", "guarded", max_unavailable=5, allowed=allowed))
    return objects


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters())
def test_plan_size_is_the_exhaustive_optimum(
    case: tuple[list[tuple[int, int]], list[Item], tuple[int, int], int | None],
) -> None:
    nodes, items, target, allowed = case
    snap = snapshot(_objects(nodes, items, target, allowed))
    plan = make_plan(snap, target_for(snap, "ml/want"), time_limit=20)
    expected = brute_force(nodes, items, target, allowed)
    if expected is None:
        assert not plan.found
        return
    bound = lower_bound(build_instance(snap, target_for(snap, "ml/want"))).evictions
    assert bound is not None and bound <= expected
    assert plan.found and plan.optimal
    assert len(plan.evictions) == expected
    after = applied(snap, plan)
    for n in after.nodes:
        assert all(v >= 0 for v in node_free(after, n).free.values())
