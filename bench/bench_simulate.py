"""Simulator benchmark: FGD on the openb default trace, the six FGD-study policies × ten seeds, and a
synthetic 10,000-node / 100,000-pod MostAllocated run with the per-pod cost as the cluster grows.

Baselines are the targets of issue 6 (20 s, 5 min, 2 min) and, for per-pod cost, the scalar
(node-by-node) NodeResourcesFit scorer that the vectorised plugin replaces. Prints ours and the ratio.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from kubegpu.scheduler.framework import Framework, Weighted
from kubegpu.scheduler.gpu.k8s_plugins import NodeResourcesFitScore
from kubegpu.scheduler.gpu.registry import PAPER_POLICIES
from kubegpu.scheduler.gpu.state import GpuCluster, GpuPod, NodeSpec
from kubegpu.scheduler.noderesources import FitScorer, ResourceSpec, Strategy
from kubegpu.scheduler.resources import NodeResources, PodRequest
from kubegpu.sim.experiment import run_matrix, run_policy, summarize
from kubegpu.sim.outputs import summaries_markdown
from kubegpu.sim.published import read_published
from kubegpu.sim.traces.openb import default_openb_dir, node_list, published_file, read_nodes, read_pods, variant_files

RESOURCES = (ResourceSpec("cpu", 1), ResourceSpec("memory", 1), ResourceSpec("nvidia.com/gpu", 3))


def line(name: str, baseline: float, ours: float, unit: str) -> None:
    print(
        f"{name:<44} baseline {baseline:10.3f} {unit}   ours {ours:10.3f} {unit}   ratio {baseline / ours:7.2f}x",
        flush=True,
    )


def synthetic_cluster(n: int) -> GpuCluster:
    rng = np.random.default_rng(n)
    gpus = rng.choice([0, 4, 8], size=n, p=[0.1, 0.3, 0.6])
    return GpuCluster(
        [
            NodeSpec(f"n{i:05d}", int(g * 16000 or 64000), int((g or 4) * 128 * 2**30), int(g), "H100" if g else "")
            for i, g in enumerate(gpus)
        ]
    )


def synthetic_pods(count: int, seed: int) -> list[GpuPod]:
    rng = np.random.default_rng(seed)
    gpus = rng.choice([0, 1, 2, 4, 8], size=count, p=[0.5, 0.4, 0.06, 0.03, 0.01])
    return [
        GpuPod(f"p{i}", int(max(1, g) * 8000), int(max(1, g) * 32 * 2**30), int(g), 1000 if g else 0)
        for i, g in enumerate(gpus)
    ]


def most_allocated_run(nodes: int, pods: int) -> tuple[float, int]:
    cluster = synthetic_cluster(nodes)
    plugin = NodeResourcesFitScore(Strategy.MOST_ALLOCATED, RESOURCES)
    fw = Framework([Weighted(plugin, 1)], percentage_of_nodes_to_score=0, seed=1)
    placed = 0
    start = time.perf_counter()
    for pod in synthetic_pods(pods, nodes):
        node = fw.schedule(cluster, pod)
        if node is not None:
            cluster.bind(node, pod, plugin.select_gpus(cluster, node, pod, fw.rng))
            placed += 1
    return time.perf_counter() - start, placed


def scalar_per_pod(nodes: int, pods: int) -> float:
    """Seconds per pod for the node-by-node scorer over the same node count (all nodes scored)."""
    cluster = synthetic_cluster(nodes)
    scorer = FitScorer(Strategy.MOST_ALLOCATED, RESOURCES)
    sample = synthetic_pods(pods, 3)
    start = time.perf_counter()
    for pod in sample:
        req = {"cpu": pod.cpu_milli, "memory": pod.memory_bytes, "nvidia.com/gpu": pod.total_gpu_milli}
        request = PodRequest({k: v for k, v in req.items() if v}, {k: v for k, v in req.items() if v})
        best = -1
        for i in range(cluster.size):
            alloc = {
                "cpu": int(cluster.cpu_cap[i]),
                "memory": int(cluster.mem_cap[i]),
                "nvidia.com/gpu": int(cluster.gpu_cap[i].sum()),
            }
            node = NodeResources(
                cluster.names[i],
                {k: v for k, v in alloc.items() if v},
                {"cpu": int(cluster.cpu_used[i]), "memory": int(cluster.mem_used[i])},
            )
            best = max(best, scorer.score(node, request))
    return (time.perf_counter() - start) / len(sample)


def main() -> int:
    openb = default_openb_dir()  # the trace that ships with kubegpu unless $KUBEGPU_OPENB_DIR says otherwise
    source = published_file(openb)
    if not node_list(openb).is_file() or source is None:
        print(f"openb trace not found at {openb}; skipping the FGD parts")
    else:
        nodes = read_nodes(node_list(openb))
        pods = read_pods(variant_files(openb)["default"])
        start = time.perf_counter()
        result = run_policy(nodes, pods, "fgd", 42, workload="default")
        line("FGD, default trace, 130% arrival (1 run)", 20.0, time.perf_counter() - start, "s")
        print(
            f"  FGD seed 42: {result.alloc_at_arrival:.2f}% allocated, {result.pods} pods, {result.failed_pods} failed",
            flush=True,
        )
        start = time.perf_counter()
        results = run_matrix(nodes, {"default": pods}, PAPER_POLICIES, range(42, 52), workers=2)
        line("6 policies x 10 seeds, 2 processes", 300.0, time.perf_counter() - start, "s")
        summaries = summarize(results, read_published(source))
        print(summaries_markdown(summaries, "default trace, 130% arrival"), flush=True)
        identical = sum(s.identical_runs for s in summaries)
        compared = sum(len(s.runs) for s in summaries)
        print(f"  runs identical to the published row in every column: {identical} of {compared}", flush=True)
    seconds, placed = most_allocated_run(10_000, 100_000)
    line("MostAllocated 10,000 nodes x 100,000 pods", 120.0, seconds, "s")
    print(f"  placed {placed} pods; {1e6 * seconds / 100_000:.1f} us per pod", flush=True)
    print("per-pod cost as the cluster grows (20,000 pods, adaptive percentageOfNodesToScore):")
    for n in (1_000, 2_500, 5_000, 10_000):
        secs, _ = most_allocated_run(n, 20_000)
        scalar = scalar_per_pod(n, 20)
        line(f"  {n:>6} nodes: per pod (scalar all-node scorer)", 1e6 * scalar, 1e6 * secs / 20_000, "us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
