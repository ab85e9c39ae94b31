"""Every run the FGD authors published (17 openb workloads × 6 policies × 10 seeds), replayed and compared.

`make fgd-grid` runs it (two worker processes by default; not part of `make bench`, it takes a while). It
prints how many runs equal their published row in every column, per policy, how many of all the columns
are identical, where the others first differ, and the wall time.
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from kubegpu.scheduler.gpu.registry import PAPER_POLICIES
from kubegpu.scheduler.gpu.state import GpuPod, NodeSpec
from kubegpu.sim.experiment import run_policy
from kubegpu.sim.published import RowComparison, compare_row, read_published
from kubegpu.sim.traces.openb import default_openb_dir, node_list, published_file, read_nodes, read_pods, variant_files


@dataclass(frozen=True)
class Outcome:
    comparison: RowComparison
    failed_pods: int
    pods: int
    seconds: float
    cpu_seconds: float
    ours: float  # allocation % at the last column (130 % arrival)
    published: float


@cache
def _nodes(folder: str) -> list[NodeSpec]:
    return read_nodes(node_list(Path(folder)))


@cache
def _trace(folder: str, workload: str) -> list[GpuPod]:
    return read_pods(variant_files(Path(folder))[workload])


def _run(job: tuple[str, str, str, float, int, tuple[tuple[int, float], ...]]) -> Outcome:
    folder, workload, policy, tune, seed, row = job
    start, cpu = time.perf_counter(), time.process_time()
    result = run_policy(_nodes(folder), _trace(folder, workload), policy, seed, tune, workload)
    published = dict(row)
    comparison = compare_row(workload, policy, seed, result.discrete, published)
    column = round(tune * 100)
    return Outcome(
        comparison,
        result.failed_pods,
        result.pods,
        time.perf_counter() - start,
        time.process_time() - cpu,
        result.alloc_at_arrival,
        published.get(column, float("nan")),
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--data", type=Path, default=None, help="an openb folder (default: the shipped trace)")
    parser.add_argument("--policy", action="append", choices=PAPER_POLICIES, help="only these policies")
    parser.add_argument("--workload", action="append", help="only these workloads")
    parser.add_argument("--markdown", type=Path, help="also write the mean per workload and policy here")
    args = parser.parse_args(argv)
    folder = args.data or default_openb_dir()
    source = published_file(folder)
    if source is None:
        print(f"no published results (analysis_allo_discrete.csv) in {folder}")
        return 1
    published = read_published(source)
    keys = [
        k
        for k in sorted(published.rows)
        if (not args.policy or k[1] in args.policy) and (not args.workload or k[0] in args.workload)
    ]
    workloads = sorted({k[0] for k in keys})
    print(
        f"{len(keys)} published runs: {len(workloads)} workloads × {len({k[1] for k in keys})} policies × "
        f"{len({k[3] for k in keys})} seeds ({source})",
        flush=True,
    )
    # the slowest policy first, so that the two workers finish together
    order = {"fgd": 0, "dotprod": 1, "packing": 2, "clustering": 3, "bestfit": 4, "random": 5}
    jobs = [
        (str(folder), w, p, tune, seed, tuple(sorted(published.rows[(w, p, tune, seed)].items())))
        for w, p, tune, seed in sorted(keys, key=lambda k: (order.get(k[1], 9), k))
    ]
    start = time.perf_counter()
    outcomes: list[Outcome] = []
    with multiprocessing.get_context("fork").Pool(processes=max(1, args.workers)) as pool:
        for outcome in pool.imap_unordered(_run, jobs):
            outcomes.append(outcome)
            if len(outcomes) % 60 == 0:
                done = sum(o.comparison.matches for o in outcomes)
                print(
                    f"  {len(outcomes)}/{len(jobs)} runs, {done} identical, {time.perf_counter() - start:.0f} s",
                    flush=True,
                )
    wall = time.perf_counter() - start
    _report(outcomes, wall, args.workers)
    if args.markdown is not None:
        args.markdown.write_text(_means_markdown(outcomes))
    return 0


def _means_markdown(outcomes: Sequence[Outcome]) -> str:
    """Per workload: ours / published mean over the seeds (difference) for each policy, at 130 % arrival."""
    policies = [p for p in PAPER_POLICIES if any(o.comparison.policy == p for o in outcomes)]
    lines = ["| workload | " + " | ".join(policies) + " |", "|---|" + "---|" * len(policies)]
    for workload in sorted({o.comparison.workload for o in outcomes}, key=lambda w: (w != "default", w)):
        cells = []
        for policy in policies:
            mine = [o for o in outcomes if o.comparison.workload == workload and o.comparison.policy == policy]
            ours = sum(o.ours for o in mine) / len(mine)
            published = sum(o.published for o in mine) / len(mine)
            cells.append(f"{ours:.2f} / {published:.2f} ({ours - published:+.2f})")
        lines.append(f"| {workload} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _report(outcomes: Sequence[Outcome], wall: float, workers: int) -> None:
    print(f"\n{'policy':<12} {'runs identical in every column':>32} {'columns identical':>22}")
    for policy in PAPER_POLICIES:
        mine = [o.comparison for o in outcomes if o.comparison.policy == policy]
        if mine:
            rows = sum(c.matches for c in mine)
            cols = sum(c.identical for c in mine)
            total = sum(c.columns for c in mine)
            print(f"{policy:<12} {rows:>20} of {len(mine):<9} {cols:>12} of {total}")
    comparisons = [o.comparison for o in outcomes]
    rows = sum(c.matches for c in comparisons)
    cols = sum(c.identical for c in comparisons)
    total = sum(c.columns for c in comparisons)
    print(f"{'all':<12} {rows:>20} of {len(comparisons):<9} {cols:>12} of {total}")
    different = [c for c in comparisons if not c.matches]
    if different:
        print(f"\nruns that differ ({len(different)}), by policy and first different column:")
        for policy, count in Counter(c.policy for c in different).most_common():
            firsts = sorted(c.first_difference or 0 for c in different if c.policy == policy)
            largest = max(c.largest_difference for c in different if c.policy == policy)
            print(
                f"  {policy}: {count} runs, first different column {firsts[0]}–{firsts[-1]} "
                f"(median {firsts[len(firsts) // 2]}), largest difference {largest:.2f} points"
            )
    busy = sum(o.seconds for o in outcomes)
    cpu = sum(o.cpu_seconds for o in outcomes)
    print(
        f"\nwall time {wall:.0f} s ({wall / 60:.1f} min) on {workers} worker(s); "
        f"{busy:.0f} s of runs, {busy / max(1, len(outcomes)):.2f} s per run; "
        f"CPU time {cpu:.0f} s ({cpu / max(1, len(outcomes)):.2f} s per run, {cpu / 60 / max(1, workers):.1f} min "
        f"of {workers} cores when nothing else runs)",
        flush=True,
    )


if __name__ == "__main__":
    sys.exit(main())
