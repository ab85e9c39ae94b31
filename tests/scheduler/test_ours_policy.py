"""Our placement policy (`ours`): its CPU-stranding key, its ranking order over FGD's score and the
tightest fit, its GPU choice, and that a run is deterministic and never over-allocates."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kubegpu.scheduler.framework import Framework, Weighted
from kubegpu.scheduler.gpu.fragmentation import TypicalPod
from kubegpu.scheduler.gpu.ours import (
    STRAND_STEP,
    FragBestFitScore,
    cpu_per_gpu_milli,
    stranded_gpu,
    tightness,
)
from kubegpu.scheduler.gpu.policies import FGDScore
from kubegpu.scheduler.gpu.state import GpuCluster, GpuPod, NodeSpec
from kubegpu.sim.experiment import run_policy

GIB = 2**30
# half the GPU pods need 4 cores per GPU, half 20: 12 cores per GPU on average
TYPICAL = (TypicalPod(4000, 1000, 1, (), 0.4), TypicalPod(20000, 1000, 1, (), 0.4), TypicalPod(16000, 0, 0, (), 0.2))


def test_cpu_per_gpu_milli_is_the_mean_over_typical_gpu_pods() -> None:
    assert cpu_per_gpu_milli(TYPICAL) == 12.0
    shared = (TypicalPod(3000, 500, 1, (), 0.5), TypicalPod(9000, 1000, 2, (), 0.5))
    assert cpu_per_gpu_milli(shared) == (0.5 * 3000 + 0.5 * 9000) / (0.5 * 500 + 0.5 * 2000)
    assert cpu_per_gpu_milli((TypicalPod(8000, 0, 0, (), 1.0),)) == 0.0


def test_stranded_gpu_counts_idle_gpu_the_cpu_left_cannot_serve() -> None:
    cpu = np.array([24000, 12000, 0, -5], dtype=np.int64)
    gpu = np.array([2000, 2000, 500, 0], dtype=np.int64)
    assert stranded_gpu(cpu, gpu, 12.0).tolist() == [0.0, 1000.0, 500.0, 0.0]
    assert stranded_gpu(cpu, gpu, 0.0).tolist() == [0.0, 0.0, 0.0, 0.0]


def _two_nodes() -> GpuCluster:
    # node 0: 2 idle GPUs, 38 cores; node 1: 4 idle GPUs, 64 cores (both fit every typical pod)
    return GpuCluster([NodeSpec("a", 38000, 256 * GIB, 2, "G"), NodeSpec("b", 64000, 256 * GIB, 4, "G")])


def test_cpu_only_pod_avoids_the_node_it_would_strand_gpus_on() -> None:
    cluster = _two_nodes()
    pod = GpuPod("cpu", 16000, GIB)
    nodes = np.arange(2, dtype=np.int64)
    ours = FragBestFitScore(TYPICAL)
    # on node a the pod leaves 22 cores for 2 GPUs (24 needed): 167 milli-GPU stranded, 1 step
    assert ours.strand_steps(cluster, pod, nodes).tolist() == [167 // STRAND_STEP, 0]
    rng = np.random.default_rng(0)
    fgd_scores = FGDScore(TYPICAL).score(cluster, pod, nodes, rng)
    assert fgd_scores[0] == fgd_scores[1]  # both typical GPU pods still fit: FGD sees no change
    assert tightness(cluster, pod, nodes)[0] > tightness(cluster, pod, nodes)[1]  # a has less idle GPU
    fgd = Framework([Weighted(FGDScore(TYPICAL), 1000)], tie_break="lowest-name")
    chosen = Framework([Weighted(ours, 1000)], tie_break="lowest-name")
    assert fgd.schedule(cluster, pod) == 0
    assert chosen.schedule(cluster, pod) == 1


def test_stranding_outranks_fgd_score() -> None:
    """FGD prefers filling node a's fragmented GPU, but that leaves 25 cores for 3 idle GPUs (30 needed)."""
    typical = (TypicalPod(1000, 300, 1, (), 0.5), TypicalPod(12000, 1000, 1, (), 0.5))  # 10 cores per GPU
    cluster = GpuCluster([NodeSpec("a", 45000, 256 * GIB, 4, "G"), NodeSpec("b", 64000, 256 * GIB, 2, "G")])
    cluster.bind(0, GpuPod("f", 0, 0, 1, 700), (0,))
    pod = GpuPod("heavy", 20000, GIB, 1, 300)
    nodes = np.arange(2, dtype=np.int64)
    ours = FragBestFitScore(typical)
    assert ours.strand_steps(cluster, pod, nodes).tolist() == [5, 0]
    fgd_scores = FGDScore(typical).score(cluster, pod, nodes, np.random.default_rng(0))
    assert fgd_scores[0] > fgd_scores[1]
    assert Framework([Weighted(FGDScore(typical), 1000)], tie_break="lowest-name").schedule(cluster, pod) == 0
    assert Framework([Weighted(ours, 1000)], tie_break="lowest-name").schedule(cluster, pod) == 1


def test_cpu_light_gpu_pod_may_use_a_cpu_poor_node() -> None:
    # a pod that relieves stranding is not penalised: both nodes rank 0 steps
    cluster = _two_nodes()
    pod = GpuPod("light", 1000, GIB, 1, 1000)
    ours = FragBestFitScore(TYPICAL)
    assert ours.strand_steps(cluster, pod, np.arange(2, dtype=np.int64)).tolist() == [0, 0]


def test_share_pod_takes_the_tightest_of_the_gpus_fgd_scores_equally() -> None:
    cluster = GpuCluster([NodeSpec("n", 96000, 256 * GIB, 4, "G")])
    filler = GpuPod("f", 1000, GIB, 1, 300)
    for gpu in (1, 3, 3):
        cluster.bind(0, filler, (gpu,))
    typical = (TypicalPod(1000, 200, 1, (), 1.0),)
    pod = GpuPod("s", 1000, GIB, 1, 200)
    ours = FragBestFitScore(typical)
    assert ours.select_gpus(cluster, 0, pod, np.random.default_rng(0)) == (3,)
    assert FGDScore(typical).select_gpus(cluster, 0, pod, np.random.default_rng(0)) == (0,)


node_st = st.builds(
    lambda cpu, gpus, used_cpu, used: (NodeSpec("n", cpu * 1000, 512 * GIB, gpus, "G"), used_cpu, used),
    st.integers(8, 128),
    st.sampled_from([1, 2, 4, 8]),
    st.integers(0, 100),
    st.lists(st.integers(0, 1000), max_size=8),
)
pod_st = st.builds(
    lambda cpu, kind, share, count: GpuPod(
        "p",
        cpu * 500,
        GIB,
        0 if kind == 0 else (1 if kind == 1 else count),
        0 if kind == 0 else (share if kind == 1 else 1000),
    ),
    st.integers(1, 64),
    st.integers(0, 2),
    st.integers(50, 999),
    st.sampled_from([1, 2, 4, 8]),
)


def _cluster(states: list[tuple[NodeSpec, int, list[int]]]) -> GpuCluster:
    cluster = GpuCluster(
        [NodeSpec(f"n{i}", s.cpu_milli, s.memory_bytes, s.gpu_count, s.gpu_model) for i, (s, _, _) in enumerate(states)]
    )
    for i, (spec, used_cpu, used) in enumerate(states):
        cpu = spec.cpu_milli * used_cpu // 100
        cluster.bind(i, GpuPod("c", cpu), ())
        for gpu, milli in enumerate(used[: spec.gpu_count]):
            if milli:
                cluster.bind(i, GpuPod("g", 0, 0, 1, milli), (gpu,))
    return cluster


@settings(max_examples=60, deadline=None)
@given(st.lists(node_st, min_size=1, max_size=6), pod_st)
def test_the_chosen_node_is_lexicographically_best(states: list[tuple[NodeSpec, int, list[int]]], pod: GpuPod) -> None:
    """The winner strands the fewest steps; among those it has FGD's best score, then the tightest fit."""
    cluster = _cluster(states)
    nodes = np.flatnonzero(cluster.feasible(pod)).astype(np.int64)
    if len(nodes) == 0:
        return
    typical = (TypicalPod(8000, 500, 1, (), 0.5), TypicalPod(16000, 1000, 2, (), 0.3), TypicalPod(4000, 0, 0, (), 0.2))
    ours = FragBestFitScore(typical)
    rng = np.random.default_rng(0)
    winner = int(nodes[int(np.argmax(ours.score(cluster, pod, nodes, rng)))])
    steps = ours.strand_steps(cluster, pod, nodes)
    fgd = FGDScore(typical).score(cluster, pod, nodes, rng)
    keys = list(zip((-steps).tolist(), fgd.tolist(), tightness(cluster, pod, nodes).tolist(), strict=True))
    assert keys[int(np.flatnonzero(nodes == winner)[0])] == max(keys)


def _trace() -> tuple[list[NodeSpec], list[GpuPod]]:
    nodes = [NodeSpec(f"n{i}", (96 if i % 3 else 32) * 1000, 384 * GIB, 8 if i % 3 else 2, "G") for i in range(12)]
    rng = np.random.default_rng(3)
    pods = []
    for i in range(120):
        kind = int(rng.integers(4))
        if kind == 0:
            pods.append(GpuPod(f"p{i:03d}", int(rng.choice([8000, 16000])), 8 * GIB))
        elif kind == 1:
            pods.append(GpuPod(f"p{i:03d}", int(rng.choice([3000, 12000])), 8 * GIB, 1, int(rng.choice([470, 810]))))
        else:
            pods.append(GpuPod(f"p{i:03d}", 12000, 16 * GIB, int(rng.choice([1, 1, 2, 8])), 1000))
    return nodes, pods


def test_a_run_is_deterministic_and_never_over_allocates() -> None:
    nodes, pods = _trace()
    first = run_policy(nodes, pods, "ours", 42)
    again = run_policy(nodes, pods, "ours", 42)
    assert first.allocated_milli.tolist() == again.allocated_milli.tolist()
    assert first.allocated_milli[-1] <= first.capacity_milli
    assert first.allocated_milli[-1] > 0
