"""defrag's plans: the guide's example, PodDisruptionBudgets, priorities, pod groups and pods that cannot move;
every plan checked by applying it to the snapshot."""

from __future__ import annotations

from typing import Any

import pytest

from kubegpu.defrag.after import applied
from kubegpu.defrag.budgets import allowance
from kubegpu.defrag.lower import lower_bound
from kubegpu.defrag.plan import Plan, make_plan
from kubegpu.defrag.problem import GROUP, build_instance
from kubegpu.defrag.search import search
from kubegpu.defrag.targets import GangRequest, gang_target, parse_gang, target_for
from kubegpu.errors import InputError
from kubegpu.live.fit import node_free
from kubegpu.live.model import ClusterSnapshot
from tests.defrag.objects import budget, guide, node, pod, snapshot

VOLCANO = "scheduling.k8s.io/group-name"


def _holds(snap: ClusterSnapshot, plan: Plan) -> None:
    """The plan, carried out, overcommits no node and places every waiting pod."""
    after = applied(snap, plan)
    for n in after.nodes:
        free = node_free(after, n)
        assert all(v >= 0 for v in free.free.values()), (n.name, free.free)
    placed = dict(plan.placements)
    assert set(placed) == {p.name for p in plan.target.pods}


def _evicted_nodes(plan: Plan) -> set[str]:
    return {e.node for e in plan.evictions}


def test_guide_example_three_evictions_on_one_node() -> None:
    snap = snapshot(guide())
    plan = make_plan(snap, target_for(snap, "ml/train-0"))
    assert plan.found and plan.optimal and plan.gap == 0
    assert len(plan.evictions) == 3 and len(_evicted_nodes(plan)) == 1
    assert all(e.to is not None and e.to != e.node for e in plan.evictions)
    (node_name,) = _evicted_nodes(plan)
    assert plan.placements == (("ml/train-0", node_name),)
    _holds(snap, plan)


def test_room_already_there_needs_no_eviction() -> None:
    objects = [*guide(2), node("spare")]
    snap = snapshot(objects)
    plan = make_plan(snap, target_for(snap, "ml/train-0"))
    assert plan.found and plan.evictions == () and plan.placements == (("ml/train-0", "spare"),)


def test_gang_needs_two_nodes_emptied() -> None:
    snap = snapshot(guide())
    plan = make_plan(snap, gang_target(snap, GangRequest(*parse_gang("2x8"))))
    assert plan.found and plan.optimal and len(plan.evictions) == 6 and len(_evicted_nodes(plan)) == 2
    _holds(snap, plan)


def test_no_room_anywhere_says_no_plan() -> None:
    snap = snapshot(guide(2))  # 4 GPUs free in all: the evicted pods have nowhere to go
    plan = make_plan(snap, target_for(snap, "ml/train-0"))
    assert not plan.found
    assert plan.evictions == ()


@pytest.mark.parametrize(
    ("spec", "allowed"),
    [
        ({"max_unavailable": 0}, 0),
        ({"max_unavailable": 1}, 1),
        ({"max_unavailable": "50%"}, 2),  # 3 pods: 50 % rounds up to 2 unavailable
        ({"min_available": "100%"}, 0),
        ({"min_available": "50%"}, 1),  # 2 of 3 must stay
        ({"min_available": 1}, 2),
    ],
)
def test_budget_allowance_from_spec(spec: dict[str, Any], allowed: int) -> None:
    objects = [*guide(1), budget("infer", "infer-0", **spec)]
    snap = snapshot(objects)
    (pdb,) = snap.disruption_budgets
    assert allowance(pdb, snap).allowed == allowed


def test_budget_status_wins_over_the_spec() -> None:
    snap = snapshot([*guide(1), budget("infer", "infer-0", max_unavailable=3, allowed=0)])
    (pdb,) = snap.disruption_budgets
    assert allowance(pdb, snap).allowed == 0


def test_budgets_steer_the_plan_to_the_unprotected_node() -> None:
    objects = guide()
    objects += [budget(f"infer-{i}", f"infer-{i}", max_unavailable=1) for i in range(7)]
    snap = snapshot(objects)
    plan = make_plan(snap, target_for(snap, "ml/train-0"))
    assert plan.found and len(plan.evictions) == 3 and _evicted_nodes(plan) == {"gpu-7"}
    _holds(snap, plan)


def test_budgets_everywhere_leave_no_plan() -> None:
    objects = guide()
    objects += [budget(f"infer-{i}", f"infer-{i}", min_available=2, allowed=1) for i in range(8)]
    snap = snapshot(objects)
    plan = make_plan(snap, target_for(snap, "ml/train-0"))
    assert not plan.found and not plan.possible


def test_two_budgets_on_one_pod_refuse_its_eviction() -> None:
    objects = [*guide(2), budget("a", "infer-0", max_unavailable=3), budget("b", "infer-0", max_unavailable=3)]
    snap = snapshot(objects)
    instance = build_instance(snap, target_for(snap, "ml/train-0"))
    refused = [k for k in instance.kept if k.pod.startswith("ml/infer-0-")]
    assert len(refused) == 3 and all("more than one PodDisruptionBudget" in k.reason for k in refused)


def _replace_pods(objects: list[dict[str, Any]], node_index: int, **changes: Any) -> list[dict[str, Any]]:
    """The guide's objects with node `node_index`'s three pods rebuilt with `changes`."""
    out = []
    for obj in objects:
        name = obj["metadata"]["name"]
        if obj["kind"] == "Pod" and name.startswith(f"infer-{node_index}-"):
            obj = pod(name, 2, f"gpu-{node_index}", **changes)
        out.append(obj)
    return out


def test_never_evicts_a_pod_above_the_waiting_pods_priority() -> None:
    objects = guide()
    for i in range(7):
        objects = _replace_pods(objects, i, priority=1000)
    snap = snapshot(objects)
    plan = make_plan(snap, target_for(snap, "ml/train-0"))
    assert plan.found and _evicted_nodes(plan) == {"gpu-7"}
    assert sum(1 for k in plan.kept if "priority above" in k.reason) == 21


def test_lower_priority_pods_may_be_left_waiting() -> None:
    objects = [node("gpu-0")]
    objects += [pod(f"batch-{j}", 2, "gpu-0", priority=-10) for j in range(4)]
    objects.append(pod("train-0", 8, None, owner="Job", priority=100))
    snap = snapshot(objects)
    plan = make_plan(snap, target_for(snap, "ml/train-0"))
    assert plan.found and len(plan.evictions) == 4 and all(e.to is None for e in plan.evictions)
    _holds(snap, plan)


def test_equal_priority_pods_are_never_left_waiting() -> None:
    objects = [node("gpu-0")] + [pod(f"batch-{j}", 2, "gpu-0") for j in range(4)]
    objects.append(pod("train-0", 8, None, owner="Job"))
    snap = snapshot(objects)
    assert not make_plan(snap, target_for(snap, "ml/train-0")).found


def test_pod_groups_move_whole() -> None:
    objects = guide()
    for i in range(6):  # nodes 0..5: one group of 18 pods
        objects = _replace_pods(objects, i, annotations={VOLCANO: "big"})
    objects = _replace_pods(objects, 6, annotations={VOLCANO: "pair"})  # gpu-6's three pods and one of gpu-7's
    objects = [o for o in objects if o["metadata"]["name"] != "infer-7-0"]
    objects.append(pod("infer-7-0", 2, "gpu-7", annotations={VOLCANO: "pair"}))
    snap = snapshot(objects)
    # emptying gpu-6 evicts the pair group whole (4 pods); gpu-7 would take the group and two more
    plan = make_plan(snap, target_for(snap, "ml/train-0"))
    assert plan.found and plan.optimal and plan.placements == (("ml/train-0", "gpu-6"),)
    assert {e.pod for e in plan.evictions} == {"ml/infer-6-0", "ml/infer-6-1", "ml/infer-6-2", "ml/infer-7-0"}
    assert all(e.group == "Volcano pod group ml/pair" for e in plan.evictions)
    _holds(snap, plan)
    instance = build_instance(snap, target_for(snap, "ml/train-0"))
    groups = [u for u in instance.units if u.group is not None]
    assert sorted(len(u.members) for u in groups) == [4, 18]


def test_a_pod_group_evicted_is_evicted_whole() -> None:
    # gpu-0 runs three pods of group g, gpu-1 three of group h and g's fourth; the spare node has 6 GPUs free
    objects = [node("gpu-0"), node("gpu-1"), node("spare", gpus=6)]
    objects += [pod(f"g-{j}", 2, "gpu-0", annotations={VOLCANO: "g"}) for j in range(3)]
    objects += [pod(f"h-{j}", 2, "gpu-1", annotations={VOLCANO: "h"}) for j in range(3)]
    objects += [pod("g-3", 2, "gpu-1", annotations={VOLCANO: "g"})]
    objects.append(pod("train-0", 8, None, owner="Job"))
    snap = snapshot(objects)
    plan = make_plan(snap, target_for(snap, "ml/train-0"))
    assert plan.found and plan.optimal
    assert {e.pod for e in plan.evictions} == {f"ml/g-{j}" for j in range(4)}  # g-3 leaves gpu-1 with its group
    assert plan.placements == (("ml/train-0", "gpu-0"),)
    _holds(snap, plan)


def test_a_pod_group_with_a_pod_that_cannot_move_stays_whole() -> None:
    # g's fourth pod outranks the waiting pod, h's third runs on a cordoned node; k and a lone pod may move
    cordoned = {**node("gpu-2"), "spec": {"unschedulable": True}}
    objects = [node("gpu-0"), node("gpu-1"), cordoned]
    objects += [pod(f"g-{j}", 1, "gpu-0", annotations={VOLCANO: "g"}) for j in range(3)]
    objects.append(pod("g-3", 1, "gpu-1", annotations={VOLCANO: "g"}, priority=1000))
    objects += [pod(f"h-{j}", 1, "gpu-0", annotations={VOLCANO: "h"}) for j in range(2)]
    objects.append(pod("h-2", 1, "gpu-2", annotations={VOLCANO: "h"}))
    objects += [pod(f"k-{j}", 1, "gpu-1", annotations={VOLCANO: "k"}) for j in range(2)]
    objects += [pod("solo", 1, "gpu-1"), pod("train-0", 8, None, owner="Job")]
    snap = snapshot(objects)
    instance = build_instance(snap, target_for(snap, "ml/train-0"))
    stuck = {k.pod: k.detail for k in instance.kept if k.kind == GROUP}
    above = "Volcano pod group ml/g: ml/g-3 priority above the waiting pods' (1000 > 0)"
    cordon = "Volcano pod group ml/h: ml/h-2 runs on gpu-2, which is not schedulable"
    assert stuck == {"ml/g-0": above, "ml/g-1": above, "ml/g-2": above, "ml/h-0": cordon, "ml/h-1": cordon}
    assert [c.pod.key for c in instance.candidates] == ["ml/k-0", "ml/k-1", "ml/solo"]
    assert [(u.members, u.group) for u in instance.units] == [((0, 1), "ml/Volcano/k"), ((2,), None)]


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"owner": "DaemonSet"}, "DaemonSet"),
        ({"owner": None}, "no controller"),
        ({"annotations": {"kubernetes.io/config.mirror": "x"}}, "mirror"),
        ({"annotations": {"cluster-autoscaler.kubernetes.io/safe-to-evict": "false"}}, "safe-to-evict"),
        ({"volumes": [{"name": "scratch", "emptyDir": {}}]}, "local storage"),
        ({"volumes": [{"name": "shm", "emptyDir": {"medium": "Memory"}}]}, "local storage"),
        ({"volumes": [{"name": "data", "hostPath": {"path": "/data"}}]}, "local storage"),
    ],
)
def test_pods_that_cannot_move_stay(changes: dict[str, Any], reason: str) -> None:
    objects = guide()
    for i in range(7):
        objects = _replace_pods(objects, i, **changes)
    snap = snapshot(objects)
    plan = make_plan(snap, target_for(snap, "ml/train-0"))
    assert plan.found and _evicted_nodes(plan) == {"gpu-7"}
    assert sum(1 for k in plan.kept if reason in k.reason) == 21


@pytest.mark.parametrize(
    "annotations",
    [
        {"descheduler.alpha.kubernetes.io/evict": ""},
        {"cluster-autoscaler.kubernetes.io/safe-to-evict": "true"},
        {"cluster-autoscaler.kubernetes.io/safe-to-evict-local-volumes": "scratch"},
    ],
)
def test_annotations_lift_the_local_storage_rule(annotations: dict[str, str]) -> None:
    objects = guide()
    for i in range(8):
        objects = _replace_pods(objects, i, annotations=annotations, volumes=[{"name": "scratch", "emptyDir": {}}])
    snap = snapshot(objects)
    plan = make_plan(snap, target_for(snap, "ml/train-0"))
    assert plan.found and len(plan.evictions) == 3


def test_pod_rules_that_depend_on_other_pods_keep_the_pod() -> None:
    objects = guide()
    for obj in objects:
        if obj["kind"] == "Pod" and obj["metadata"]["name"].startswith("infer-0-"):
            obj["spec"]["topologySpreadConstraints"] = [
                {"maxSkew": 1, "topologyKey": "kubernetes.io/hostname", "labelSelector": {}}
            ]
    snap = snapshot(objects)
    instance = build_instance(snap, target_for(snap, "ml/train-0"))
    assert sum(1 for k in instance.kept if "topology spread" in k.reason) == 3


def test_target_errors_are_one_line() -> None:
    snap = snapshot(guide(2))
    with pytest.raises(InputError, match="no such pod"):
        target_for(snap, "ml/nope")
    with pytest.raises(InputError, match="not waiting"):
        target_for(snap, "ml/infer-0-0")
    with pytest.raises(InputError, match="NAMESPACE/NAME"):
        target_for(snap, "train-0")
    for text in ("8", "0x8", "2x99", "axb"):
        with pytest.raises(InputError, match="--gang"):
            parse_gang(text)


def test_windowed_search_reports_its_gap() -> None:
    snap = snapshot(guide(12))
    instance = build_instance(snap, target_for(snap, "ml/train-0"))
    import kubegpu.defrag.search as searching

    saved = searching.EXACT_CANDIDATES
    searching.EXACT_CANDIDATES = 0  # force the bounded search
    try:
        found = search(instance, 5.0)
    finally:
        searching.EXACT_CANDIDATES = saved
    assert found.method == searching.BOUNDED and found.solution is not None
    assert len(found.solution.evicted) == 3 and found.bound == 3 and found.optimal


def test_homeless_pods_tighten_the_bound() -> None:
    # every node: a 4-GPU pod and a 2-GPU pod, 2 GPUs free; no node has room for a 4-GPU pod
    objects: list[dict[str, Any]] = []
    for i in range(4):
        objects += [node(f"gpu-{i}"), pod(f"big-{i}", 4, f"gpu-{i}"), pod(f"small-{i}", 2, f"gpu-{i}")]
    objects.append(pod("train-0", 8, None, owner="Job"))
    snap = snapshot(objects)
    instance = build_instance(snap, target_for(snap, "ml/train-0"))
    assert lower_bound(instance).evictions == 3  # 2 on the node, and one where its 4-GPU pod goes
    plan = make_plan(snap, target_for(snap, "ml/train-0"))
    assert plan.found and plan.optimal and len(plan.evictions) == 3
    _holds(snap, plan)


def _claimed(i: int) -> list[dict[str, Any]]:
    """A claim and its local PersistentVolume, which only node gpu-`i` can mount."""
    claim = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": f"data-{i}", "namespace": "ml"},
        "spec": {"volumeName": f"pv-{i}", "accessModes": ["ReadWriteOnce"]},
        "status": {"phase": "Bound"},
    }
    volume = {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": f"pv-{i}"},
        "spec": {
            "local": {"path": "/mnt/disk"},
            "capacity": {"storage": "100Gi"},
            "nodeAffinity": {
                "required": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": "kubernetes.io/hostname", "operator": "In", "values": [f"gpu-{i}"]}
                            ]
                        }
                    ]
                }
            },
        },
    }
    return [claim, volume]


def test_pods_on_local_volumes_only_go_back_to_their_node() -> None:
    objects = [o for o in guide() if o["kind"] == "Node"]
    for o in objects:
        o["metadata"]["labels"]["kubernetes.io/hostname"] = o["metadata"]["name"]
    for i in range(8):
        claim = [{"name": "data", "persistentVolumeClaim": {"claimName": f"data-{i}"}}] if i < 7 else None
        objects += [pod(f"infer-{i}-{j}", 2, f"gpu-{i}", volumes=claim) for j in range(3)]
        if i < 7:
            objects += _claimed(i)
    objects.append(pod("train-0", 8, None, owner="Job"))
    snap = snapshot(objects)
    plan = make_plan(snap, target_for(snap, "ml/train-0"))
    assert plan.found and _evicted_nodes(plan) == {"gpu-7"}
    _holds(snap, plan)


def test_a_claim_missing_from_the_snapshot_keeps_the_pod() -> None:
    objects = _replace_pods(guide(), 0, volumes=[{"name": "data", "persistentVolumeClaim": {"claimName": "gone"}}])
    snap = snapshot(objects)
    instance = build_instance(snap, target_for(snap, "ml/train-0"))
    assert sum(1 for k in instance.kept if "PersistentVolumeClaim gone is not in the snapshot" in k.reason) == 3


def test_a_pending_kueue_workload_is_a_target() -> None:
    from kubegpu.live.snapshot import load_snapshot
    from tests.live.conftest import CLUSTER

    snap = load_snapshot([CLUSTER])
    target = target_for(snap, "train/job-llm-ft-5d2c1")
    assert target.what.startswith("Kueue Workload train/job-llm-ft-5d2c1") and len(target.pods) == 2
    with pytest.raises(InputError, match="not pending"):
        target_for(snap, "train/job-llm-1-9f3ab")


@pytest.mark.parametrize(
    ("policy", "status", "refused"),
    [
        ("AlwaysAllow", {"currentHealthy": 0, "desiredHealthy": 3}, False),
        ("IfHealthyBudget", {"currentHealthy": 3, "desiredHealthy": 3}, False),  # healthy budget: no draw
        ("IfHealthyBudget", {"currentHealthy": 2, "desiredHealthy": 3}, True),
    ],
)
def test_unready_pods_and_the_unhealthy_pod_eviction_policy(policy: str, status: dict[str, int], refused: bool) -> None:
    objects = _replace_pods(guide(2), 0, ready=False)
    pdb = budget("infer", "infer-0", min_available=3)
    pdb["spec"]["unhealthyPodEvictionPolicy"] = policy
    pdb["status"] = {"observedGeneration": 1, "disruptionsAllowed": 0, "expectedPods": 3, **status}
    snap = snapshot([*objects, pdb])
    instance = build_instance(snap, target_for(snap, "ml/train-0"))
    kept = [k for k in instance.kept if k.pod.startswith("ml/infer-0-")]
    assert (len(kept) == 3) == refused
    if not refused:
        assert all(c.budget == "" for c in instance.candidates if c.pod.name.startswith("infer-0-"))


def test_a_budget_status_older_than_its_spec_allows_nothing() -> None:
    pdb = budget("infer", "infer-0", max_unavailable=3, allowed=3)
    pdb["metadata"]["generation"] = 2
    snap = snapshot([*guide(1), pdb])
    (parsed,) = snap.disruption_budgets
    got = allowance(parsed, snap)
    assert got.allowed == 0 and "older than its spec" in got.why
