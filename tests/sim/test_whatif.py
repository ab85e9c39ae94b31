"""`simulate --snapshot`: pending pods placed on a running cluster, policy by policy."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from kubegpu.cli.main import app
from kubegpu.scheduler.gpu.state import GpuCluster, GpuPod, NodeSpec
from kubegpu.sim.whatif import place_pending

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "cluster"
GIB = 2**30


def _two_empty_nodes() -> GpuCluster:
    return GpuCluster([NodeSpec(f"n{i}", 64_000, 512 * GIB, 8, "H100") for i in range(2)])


def test_packing_keeps_room_for_the_big_pod_that_spreading_strands() -> None:
    # Four 1-GPU pods then one 8-GPU pod on two empty 8-GPU nodes. LeastAllocated (GPU weight 3) puts
    # the small pods 2 + 2, leaving 6 + 6 free: the 8-GPU pod fits nowhere. MostAllocated stacks them
    # 4 + 0, so the second node takes the 8-GPU pod.
    pending = [GpuPod(f"small-{i}", 1000, GIB, 1, 1000) for i in range(4)] + [GpuPod("big", 8000, GIB, 8, 1000)]
    spread = place_pending(_two_empty_nodes(), [], pending, "least-allocated", seed=1)
    packed = place_pending(_two_empty_nodes(), [], pending, "most-allocated", seed=1)
    assert (spread.placed_pods, spread.failed_pods) == (4, ("big",))
    assert (packed.placed_pods, packed.failed_pods) == (5, ())
    assert packed.gpu_alloc_after_pct == 75.0 and spread.gpu_alloc_after_pct == 25.0


def test_snapshot_command_on_the_recorded_cluster() -> None:
    # The recorded cluster (tests/fixtures/cluster): 4 schedulable nodes with 24 GPUs (the cordoned
    # h100-c is left out), 9 running pods holding 15 GPUs (62.5 %), and one pending pod asking for
    # more GPUs than any node has free, so no policy can place it (audit: largest placeable pod 3).
    args = [
        "simulate",
        "--snapshot",
        str(FIXTURES / "nodes.json"),
        "--snapshot",
        str(FIXTURES / "pods.json"),
        "--policy",
        "fgd,most-allocated",
        "--seeds",
        "1-2",
        "-o",
        "json",
    ]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert [(r["policy"], r["seed"]) for r in rows] == [
        ("fgd", 1),
        ("fgd", 2),
        ("most-allocated", 1),
        ("most-allocated", 2),
    ]
    for row in rows:
        assert (row["nodes"], row["total_gpus"], row["running_pods"], row["pending_pods"]) == (4, 24.0, 9, 1)
        assert row["gpu_alloc_before_pct"] == 62.5 and row["placed_pods"] == 0


def test_snapshot_that_is_not_json_exits_2(tmp_path: Path) -> None:
    bad = tmp_path / "dump.json"
    bad.write_text("{not json")
    result = CliRunner().invoke(app, ["simulate", "--snapshot", str(bad)])
    assert result.exit_code == 2 and "dump.json" in result.output


def test_unplaced_pods_carry_the_same_explanation_as_audit_why() -> None:
    # the least-allocated run leaves 6 + 6 GPUs free and no node with 8: the shared model says fragmentation
    pending = [GpuPod(f"small-{i}", 1000, GIB, 1, 1000) for i in range(4)] + [GpuPod("big", 8000, GIB, 8, 1000)]
    spread = place_pending(_two_empty_nodes(), [], pending, "least-allocated", seed=1)
    (why,) = spread.unplaced
    assert why.subject == "big" and why.kinds == ("fragmentation",)
    assert why.message == "0/2 nodes are available: 2 Insufficient nvidia.com/gpu."
    assert spread.to_dict()["unplaced"][0]["causes"][0]["figures"]["free_gpus"] == 12


def test_snapshot_command_prints_why_a_pod_was_not_placed() -> None:
    guide = FIXTURES.parent / "why" / "fragmentation"
    result = CliRunner().invoke(app, ["simulate", "--snapshot", str(guide), "--policy", "fgd"])
    assert result.exit_code == 0, result.output
    assert "fgd (seed 42): 1 pending pod(s) not placed" in result.output
    assert "0/8 nodes are available: 8 Insufficient nvidia.com/gpu." in result.output
    assert "fragmentation: 16 free GPUs on 8 nodes" in result.output
