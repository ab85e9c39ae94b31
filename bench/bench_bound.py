"""Packing-bound benchmark: the bound of the FGD metric for the 13 published openb workloads of the FGD
study's figures (default, gpushare, gpuspec, multigpu; seeds 42-51, every arrival column), timed per workload
against the two-minute goal, then random, best-fit, FGD, our policy and the bound side by side at 130 %
arrival (means over the same seeds and arrivals).

Set KUBEGPU_BENCH_WORKLOADS=default,gpushare40 to run fewer workloads.
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
    files = variant_files(openb)
    bounds = {}
    print(
        f"{'workload':<12} {'bound % (mean, 10 seeds)':>26} {'LP solves':>10} {'seconds':>8}",
        f"  goal {GOAL_SECONDS:.0f} s",
    )
    for name in names:
        start, cpu = time.perf_counter(), time.process_time()
        curves = bound_curves(nodes, {name: read_pods(files[name])}, SEEDS)
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
        bounds[name] = summarize_bounds(curves)[name]
        solves = sum(c.lp_solves for c in curves)
        print(
            f"{name:<12} {bounds[name].mean:>26.2f} {solves:>10} {seconds:>8.1f} (cpu {cpu:5.1f} s)"
            f"   ratio {GOAL_SECONDS / seconds:.2f}x",
            flush=True,
        )
    print()
    print("| workload | random | bestfit | fgd | ours | bound | ours: share of the FGD–bound gap closed |")
    print("|---|---|---|---|---|---|---|")
    for name in names:
        results = run_matrix(nodes, {name: read_pods(files[name])}, POLICIES, SEEDS, workers=2)
        means = {s.policy: s.gpu_alloc_ratio_mean for s in summarize(results)}
        bound = bounds[name].mean
        gap = bound - means["fgd"]
        closed = (means["ours"] - means["fgd"]) / gap if gap > 0 else float("nan")
        cells = " | ".join(f"{means[p]:.2f}" for p in POLICIES)
        print(f"| {name} | {cells} | {bound:.2f} | {100 * closed:.1f} % |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
