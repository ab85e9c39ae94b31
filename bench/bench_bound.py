"""Packing-bound benchmark: both bounds of the FGD metric (any placement; greedy schedulers, which place every
pod that fits when it arrives) for the 13 published openb workloads of the FGD study's figures (default,
gpushare, gpuspec, multigpu; seeds 42-51, every arrival column), timed per workload against the two-minute
goal, then random, best-fit, FGD, our policy and both bounds side by side at 130 % arrival (means over the
same seeds and arrivals), with the share of FGD's gap to each bound that our policy closes.

Set KUBEGPU_BENCH_WORKLOADS=default,gpushare40 to run fewer workloads, KUBEGPU_BENCH_WORKERS=1 to run the
policies in one process.
"""

from __future__ import annotations

import os
import sys
import time

from kubegpu.sim.bound import bound_curves, summarize_bounds
from kubegpu.sim.experiment import run_matrix, summarize
from kubegpu.sim.published import read_published
from kubegpu.sim.traces.openb import default_openb_dir, node_list, published_file, read_nodes, read_pods, variant_files

SEEDS = tuple(range(42, 52))
POLICIES = ("random", "bestfit", "fgd", "ours")
GOAL_SECONDS = 120.0


def main() -> int:
    openb = default_openb_dir()
    source = published_file(openb)
    if not node_list(openb).is_file() or source is None:
        print(f"openb trace not found at {openb}; skipping")
        return 0
    published = read_published(source)
    # the CPU-scaled four are not among the 13
    names = [w for w in published.workloads() if not w.startswith("cpu")]
    chosen = os.environ.get("KUBEGPU_BENCH_WORKLOADS")
    if chosen:
        names = [n for n in names if n in chosen.split(",")]
    nodes = read_nodes(node_list(openb))
    workers = int(os.environ.get("KUBEGPU_BENCH_WORKERS", "2"))
    files = variant_files(openb)
    bounds = {}
    print(
        f"{'workload':<12} {'bound % (any placement)':>24} {'bound % (greedy)':>17} {'certified pods':>15}"
        f" {'LP solves':>10} {'seconds':>8} {'per seed':>9}",
        f"  goal {GOAL_SECONDS:.0f} s",
    )
    for name in names:
        start, cpu = time.perf_counter(), time.process_time()
        curves = bound_curves(nodes, {name: read_pods(files[name])}, SEEDS)
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
        bounds[name] = summarize_bounds(curves)[name]
        solves = sum(c.lp_solves for c in curves)
        certified = sum(c.certified for c in curves) / len(curves)
        print(
            f"{name:<12} {bounds[name].mean:>24.2f} {bounds[name].greedy_mean:>17.2f} {certified:>15.0f}"
            f" {solves:>10} {seconds:>8.1f} {seconds / len(curves):>8.1f}s (cpu {cpu:5.1f} s)"
            f"   ratio {GOAL_SECONDS / seconds:.2f}x",
            flush=True,
        )
    print()
    print(
        "| workload | random | bestfit | fgd | ours | bound (any placement) | bound (greedy) "
        "| gap closed by ours (any placement) | gap closed by ours (greedy) |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for name in names:
        results = run_matrix(nodes, {name: read_pods(files[name])}, POLICIES, SEEDS, workers=workers)
        means = {s.policy: s.gpu_alloc_ratio_mean for s in summarize(results)}
        offline, greedy = bounds[name].mean, bounds[name].greedy_mean
        cells = " | ".join(f"{means[p]:.2f}" for p in POLICIES)
        closed = " | ".join(_closed(means["fgd"], means["ours"], b) for b in (offline, greedy))
        print(f"| {name} | {cells} | {offline:.2f} | {greedy:.2f} | {closed} |", flush=True)
    return 0


def _closed(fgd: float, ours: float, bound: float) -> str:
    """The share of FGD's gap to the bound that ours closes."""
    gap = bound - fgd
    return f"{100 * (ours - fgd) / gap:.1f} %" if gap > 0 else "n/a"


if __name__ == "__main__":
    sys.exit(main())
