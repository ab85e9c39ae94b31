"""The simulator's starting state from the recorded cluster: nodes, bound pods, waiting demand."""

from __future__ import annotations

from kubegpu.live.simstart import simulation_start
from kubegpu.live.snapshot import load_snapshot
from kubegpu.scheduler.gpu.state import MILLI
from tests.live.conftest import CLUSTER


def test_simulation_start_from_recorded_cluster() -> None:
    start = simulation_start(load_snapshot([CLUSTER]))
    # h100-c is cordoned: left out; the four others keep their allocatable
    assert [n.name for n in start.nodes] == ["h100-a", "h100-b", "l4-a", "l4-b"]
    assert start.left_out == ("node h100-c (cordoned)",)
    assert start.nodes[0].gpu_count == 8 and start.nodes[0].cpu_milli == 190_000
    assert start.nodes[2].gpu_model == "NVIDIA-L4"
    # pending: llm-big (8 GPUs) and the Kueue pod set (2 pods x 4 GPUs)
    assert sorted(p.gpu_count for p in start.pending) == [4, 4, 8]
    assert all(p.gpu_models == ("NVIDIA-H100-80GB-HBM3",) for p in start.pending)
    cluster = start.cluster()
    cluster.check_invariants()
    # free GPUs after binding the running pods: 0, 3, 3, 3 (the audit's figures minus h100-c)
    assert [int(v) // MILLI for v in cluster.gpu_left_total] == [0, 3, 3, 3]
    # CPU left on l4-b: 46 - 6 (l4-serve-1, its init container is the larger step) - 0.1
    assert int(cluster.cpu_left[3]) == 39_900
