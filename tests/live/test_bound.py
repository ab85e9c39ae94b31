"""The repacking bound of a snapshot: the guide's stranded 8-GPU job, pods that cannot move, the recorded
cluster, the audit's line and field, and soundness against exhaustive search on random small clusters."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from kubegpu.cli.main import app
from kubegpu.live.audit import AuditOptions, audit
from kubegpu.live.bound import Fixed, repack_bound, repack_problem
from kubegpu.live.model import ClusterSnapshot
from kubegpu.live.parse import parse_node, parse_pod
from kubegpu.live.render import render_text
from kubegpu.live.snapshot import load_snapshot
from tests.live.conftest import CLUSTER
from tests.packing.brute import optimum

PRODUCT = "nvidia.com/gpu.product"


def node(name: str, gpus: int, cpu: str = "64", memory: str = "512Gi", **labels: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {PRODUCT: "H100", **labels}},
        "status": {
            "allocatable": {"cpu": cpu, "memory": memory, "pods": "110", "nvidia.com/gpu": str(gpus)},
            "capacity": {"cpu": cpu, "memory": memory, "pods": "110", "nvidia.com/gpu": str(gpus)},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def pod(name: str, gpus: int, on: str | None, cpu: str = "1", owner: str = "", **selector: str) -> dict[str, Any]:
    requests = {"cpu": cpu, "memory": "1Gi", **({"nvidia.com/gpu": str(gpus)} if gpus else {})}
    metadata: dict[str, Any] = {"name": name, "namespace": "ml"}
    if owner:
        metadata["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": owner, "name": "x", "uid": "u"}]
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "i", "resources": {"requests": requests}}]}
    if on:
        spec["nodeName"] = on
    if selector:
        spec["nodeSelector"] = selector
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": metadata,
        "spec": spec,
        "status": {"phase": "Running" if on else "Pending"},
    }


def snapshot(nodes: list[dict[str, Any]], pods: list[dict[str, Any]]) -> ClusterSnapshot:
    return ClusterSnapshot(nodes=tuple(parse_node(n) for n in nodes), pods=tuple(parse_pod(p) for p in pods))


def test_eight_gpu_job_behind_six_gpu_pods_has_no_room_in_any_repacking() -> None:
    # the performance guide's example: 8 nodes × 8 GPUs, 2 free on each, an 8-GPU job waiting
    nodes = [node(f"n{i}", 8) for i in range(8)]
    running = [pod(f"r{i}", 6, f"n{i}") for i in range(8)]
    bound = repack_bound(snapshot(nodes, [*running, pod("big", 8, None)]))
    assert (bound.gpus, bound.allocated, bound.pending) == (64, 48, 8)
    # 16 GPUs are free, but a 6-GPU pod needs a node of its own: no repacking frees 8 on one node
    assert bound.placeable_pending == 0 and bound.most_allocated == 48


def test_eight_gpu_job_behind_one_gpu_pods_fits_once_they_are_repacked() -> None:
    nodes = [node(f"n{i}", 8) for i in range(8)]
    running = [pod(f"r{i}-{j}", 1, f"n{i}") for i in range(8) for j in range(6)]
    bound = repack_bound(snapshot(nodes, [*running, pod("big", 8, None)]))
    assert bound.placeable_pending == 8 and bound.most_allocated == 56


def test_pods_that_cannot_move_stay_where_they_run() -> None:
    # a DaemonSet's pod holds 60 of the GPU node's 64 CPUs: the 8-GPU job (8 CPUs) cannot start in any repacking
    nodes = [node("gpu", 8), node("cpu", 0)]
    pods = [pod("ds", 0, "gpu", cpu="60", owner="DaemonSet"), pod("big", 8, None, cpu="8")]
    assert repack_bound(snapshot(nodes, pods)).placeable_pending == 0
    # the same pod owned by a ReplicaSet may move to the CPU node, which frees the GPU node for the job
    pods[0] = pod("rs", 0, "gpu", cpu="60", owner="ReplicaSet")
    assert repack_bound(snapshot(nodes, pods)).placeable_pending == 8


def test_a_node_running_more_than_it_offers_keeps_its_pods_and_takes_nothing() -> None:
    # `full` offers 4 GPUs and runs pods asking for 6: they stay, its 4 GPUs count as held, it takes no pod
    nodes = [node("full", 4), node("free", 8)]
    pods = [pod("a", 3, "full"), pod("b", 3, "full"), pod("c", 2, "free"), pod("big", 8, None)]
    problem, current, fixed = repack_problem(snapshot(nodes, pods))
    full, free = problem.classes
    assert (full.name, full.cpu_milli, full.memory_mib, full.pods, full.gpus) == ("full", 0, 0, 0, 0)
    assert (free.name, free.gpus) == ("free", 8)
    assert [(t.gpu_count, t.required, t.available) for t in problem.types] == [(2, 1, 1), (8, 0, 1)]
    assert current == {0: [(0, 0)], 1: [(1, 0)]}
    assert fixed == Fixed(gpus=4, allocated=4, pending=8)


def test_selectors_keep_pods_to_their_nodes() -> None:
    nodes = [node("a", 4, pool="train"), node("b", 4, pool="serve")]
    pods = [pod("r", 2, "a", pool="train"), pod("p1", 4, None, pool="serve"), pod("p2", 4, None, pool="train")]
    bound = repack_bound(snapshot(nodes, pods))
    # p1 fits b; p2 needs a, where r (which may only run on a) holds 2 of its 4 GPUs
    assert bound.placeable_pending == 4


def test_recorded_cluster_and_audit_report_the_bound() -> None:
    snap = load_snapshot([CLUSTER])
    report = audit(snap)
    assert report.packing is not None
    # h100-c is cordoned; 24 schedulable GPUs, 15 allocated; moving the 1-GPU pod off h100-b lets one
    # pending 4-GPU pod in, and nothing lets the 8-GPU pod in
    assert report.packing.to_dict() | {"relaxed": []} == {
        "gpus": 24,
        "allocated_gpus": 15,
        "pending_gpus": 16,
        "placeable_pending_gpus": 4,
        "bound_allocated_gpus": 19,
        "gap_gpus": 4,
        "relaxed": [],
    }
    assert "packing bound: any repacking of the running pods could hold at most 19 of the 24" in render_text(report)
    assert audit(snap, AuditOptions(bound=False)).packing is None


def test_audit_json_has_the_bound() -> None:
    result = CliRunner().invoke(app, ["audit", "--snapshot", str(CLUSTER), "--format", "json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["packing_bound"]["placeable_pending_gpus"] == 4


@st.composite
def small_clusters(draw: st.DrawFn) -> ClusterSnapshot:
    nodes = [
        node(
            f"n{i}",
            draw(st.sampled_from([1, 2, 4])),
            cpu=draw(st.sampled_from(["4", "8"])),
            pool=draw(st.sampled_from("xy")),
        )
        for i in range(draw(st.integers(1, 3)))
    ]
    pods = []
    for i in range(draw(st.integers(0, 4))):
        on = draw(st.sampled_from([None, *(n["metadata"]["name"] for n in nodes)]))
        selector = {"pool": draw(st.sampled_from("xy"))} if draw(st.booleans()) else {}
        pods.append(
            pod(f"p{i}", draw(st.sampled_from([0, 1, 2])), on, cpu=draw(st.sampled_from(["1", "3"])), **selector)
        )
    return snapshot(nodes, pods)


@settings(max_examples=40)
@given(small_clusters())
def test_repacking_bound_is_above_the_exact_optimum(snap: ClusterSnapshot) -> None:
    problem, _current, fixed = repack_problem(snap)
    counts = [t.available for t in problem.types]
    required = [t.required for t in problem.types]
    best = optimum(problem, counts, required)
    bound = repack_bound(snap)
    if best == float("-inf"):  # the running pods overcommit a node: no repacking of them exists
        return
    assert bound.bound >= fixed.allocated + best / 1000 - 1e-6
    assert bound.most_allocated >= fixed.allocated + round(best / 1000)
