"""loadbench against fio, and each weight loader against the storage limit, on 1 GB of safetensors shards.

1. Storage limit: loadbench's parallel O_DIRECT read (16 threads × 4 MiB) and fio on the same file in the same run
   (rw=read, direct=1, bs=4M, libaio iodepth=16: the same 16 requests in flight), alternated, 5 runs each; the
   ratio of the medians and of the best runs (the best run is the least disturbed by other load on a shared
   machine). Goal: within 10 % of fio. fio is Debian's `fio` package; skipped with a note when it is not installed.
2. Loaders: read, mmap, safetensors (and the Run:ai streamer and fastsafetensors when installed) on a cold and a
   warm page cache at 1, 4 and 16 threads, median of 3; the best cold rate as a fraction of the storage limit
   measured on the same shards in the same run. Goal: ≥ 90 %.
The shards are written to a temporary folder under /var/tmp (KUBEGPU_SCRATCH overrides) and removed afterwards.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from kubegpu.loadbench import cache
from kubegpu.loadbench.run import Options, bench
from kubegpu.loadbench.shards import find_shards, write_synthetic
from kubegpu.loadbench.storage import BLOCK, DIRECT_THREADS, storage_limit

SIZE = 10**9
SHARD = 512 * 10**6
ROUNDS = 5


def fio_gbps(path: Path) -> float | None:
    """fio's sequential direct-read rate of the file (GB/s), or None without fio."""
    if shutil.which("fio") is None:
        return None
    command = [
        "fio",
        "--name=limit",
        f"--filename={path}",
        "--rw=read",
        "--direct=1",
        f"--bs={BLOCK}",
        "--ioengine=libaio",
        f"--iodepth={DIRECT_THREADS}",
        "--numjobs=1",
        "--output-format=json",
        "--invalidate=1",
    ]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        print(f"  fio failed: {done.stderr.strip()[:200]}")
        return None
    job = json.loads(done.stdout)["jobs"][0]["read"]
    return float(job["bw_bytes"]) / 1e9


def main() -> int:
    root = os.environ.get("KUBEGPU_SCRATCH") or "/var/tmp"
    folder = Path(tempfile.mkdtemp(prefix="kubegpu-bench-loadbench-", dir=root if os.path.isdir(root) else None))
    try:
        write_synthetic(folder, SIZE, SHARD)
        shards = find_shards([folder])
        first = shards[0].path
        print(f"loadbench: {len(shards)} shards, {sum(s.size for s in shards) / 1e9:.2f} GB of safetensors in {folder}")
        ours: list[float] = []
        theirs: list[float] = []
        direct = True
        for _ in range(ROUNDS):
            cache.evict([first])
            limit = storage_limit([first])
            direct = direct and limit.direct
            ours.append(limit.gbps)
            cache.evict([first])
            rate = fio_gbps(first)
            if rate is not None:
                theirs.append(rate)
        mine = statistics.median(ours)
        print(f"1. storage limit on {first.name} ({first.stat().st_size / 1e9:.2f} GB), median of {ROUNDS}:")
        print(
            f"  loadbench ({DIRECT_THREADS} threads × {BLOCK >> 20} MiB, "
            f"{'O_DIRECT' if direct else 'buffered: O_DIRECT refused'}) : {mine:6.2f} GB/s  "
            f"(runs {', '.join(f'{r:.2f}' for r in ours)})"
        )
        if theirs:
            fio = statistics.median(theirs)
            print(
                f"  baseline fio (libaio, iodepth {DIRECT_THREADS}, direct)     : {fio:6.2f} GB/s  "
                f"(runs {', '.join(f'{r:.2f}' for r in theirs)})"
            )
            for label, a, b in (("medians", mine, fio), ("best runs", max(ours), max(theirs))):
                verdict = "within" if abs(a / b - 1) <= 0.10 else "NOT within"
                print(f"  ratio loadbench / fio, {label:<9}              : {a / b:6.2f}x  ({verdict} 10 %)")
        else:
            print("  baseline fio: not installed (apt-get install fio), comparison skipped")
        result = bench(shards, Options(threads=(1, 4, 16), repeats=3, gpu=False))
        print(
            f"2. loaders on all shards; storage limit {result.storage.gbps:.2f} GB/s "
            f"({'O_DIRECT' if result.storage.direct else 'buffered'}) in the same run, median of 3:"
        )
        print(f"  {'method':<22}{'threads':>8}{'cold GB/s':>11}{'of limit':>10}{'warm GB/s':>11}")
        warm = {(r.method, r.threads): r for r in result.runs if r.cache == "warm"}
        for run in sorted((r for r in result.runs if r.cache == "cold"), key=lambda r: (r.method, r.threads)):
            hot = warm.get((run.method, run.threads))
            print(
                f"  {run.method:<22}{run.threads:>8}{run.gbps:>11.2f}{result.fraction(run):>10.0%}"
                f"{hot.gbps if hot else float('nan'):>11.2f}"
            )
        for skip in result.skipped:
            print(f"  skipped {skip.method}: {skip.reason}")
        for note in result.notes:
            print(f"  note: {note}")
        best = result.best()
        if best is not None:
            share = result.fraction(best)
            print(
                f"  best cold loader: {best.method} ×{best.threads} at {best.gbps:.2f} GB/s = {share:.0%} of the "
                f"storage limit ({'meets' if share >= 0.9 else 'misses'} the 90 % goal)"
            )
        print(f"  recommendation: {result.recommendation()}")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
