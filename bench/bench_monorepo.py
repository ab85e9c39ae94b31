"""Monorepo benchmark: 20,000 GPU workloads in 2,000 files, generated here (never committed).

Both commands run side by side in this one run, start-up included: the bare PyYAML C-loader parse of
the same files (the baseline) and `kubegpu lint DIR -o json`, with kubegpu's bytecode compiled as an installed
package has it (as `bench_lint.py` does; PyYAML's is compiled by its install). Reported: CPU seconds (user + system, the
command and its children) and peak RSS (the largest process), and the ratio of CPU times. Targets:
lint peak memory under 250 MB, CPU time within 1.5x the bare parse.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench_lint import compile_package
from corpus_gen import write_corpus

KUBEGPU = Path(sys.executable).parent / "kubegpu"
FILES, PER_FILE = 2000, 10
MEMORY_TARGET_MB = 250
CPU_TARGET = 1.5

# Runs a command and prints its CPU seconds and peak RSS (KiB) as measured by the kernel for its children.
_MEASURE = (
    "import resource, subprocess, sys\n"
    "done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL)\n"
    "usage = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "print(done.returncode, usage.ru_utime + usage.ru_stime, usage.ru_maxrss)\n"
)
_BARE_PARSE = (
    "import sys, yaml\n"
    "for name in sys.argv[1:]:\n"
    "    with open(name) as f:\n"
    "        list(yaml.load_all(f, Loader=yaml.CSafeLoader))\n"
)


def measure(command: list[str]) -> tuple[int, float, float]:
    """(exit code, CPU seconds, peak RSS in MB) of one run of `command`."""
    out = subprocess.run([sys.executable, "-c", _MEASURE, *command], capture_output=True, text=True, check=True)
    code, cpu, rss_kib = out.stdout.split()
    return int(code), float(cpu), int(rss_kib) / 1024


def best_of(command: list[str], runs: int = 3) -> tuple[int, float, float]:
    results = [measure(command) for _ in range(runs)]
    return min(results, key=lambda r: r[1])


def main() -> None:
    runs = int(sys.argv[sys.argv.index("--runs") + 1]) if "--runs" in sys.argv else 3
    with tempfile.TemporaryDirectory(prefix="kubegpu-monorepo-") as folder:
        files = write_corpus(Path(folder) / "gitops", files=FILES, per_file=PER_FILE)
        print(
            f"corpus: {FILES * PER_FILE} GPU workloads in {len(files)} files, "
            f"{sum(f.stat().st_size for f in files) / 1e6:.1f} MB"
        )
        compile_package()
        _code, bare_cpu, bare_rss = best_of([sys.executable, "-c", _BARE_PARSE, *map(str, files)], runs)
        rows = []
        for label, extra in (("one process (--jobs 1)", ["--jobs", "1"]), ("default (--jobs 0)", [])):
            code, cpu, rss = best_of([str(KUBEGPU), "lint", str(Path(folder) / "gitops"), "-o", "json", *extra], runs)
            assert code in (0, 1), f"kubegpu lint exited {code}"
            rows.append((label, cpu, rss))
        print(f"baseline: bare PyYAML C-loader parse as a command: {bare_cpu:.2f} s CPU, {bare_rss:.0f} MB peak RSS")
        for label, cpu, rss in rows:
            ratio = cpu / bare_cpu
            print(
                f"kubegpu lint {label}: {cpu:.2f} s CPU ({ratio:.2f}x the bare parse; target <= {CPU_TARGET}x: "
                f"{'met' if ratio <= CPU_TARGET else 'NOT met'}), {rss:.0f} MB peak RSS (target < "
                f"{MEMORY_TARGET_MB} MB: {'met' if rss < MEMORY_TARGET_MB else 'NOT met'})"
            )
        print(
            json.dumps(
                {
                    "bare_cpu_s": round(bare_cpu, 3),
                    "bare_rss_mb": round(bare_rss, 1),
                    "lint": {label: {"cpu_s": round(cpu, 3), "rss_mb": round(rss, 1)} for label, cpu, rss in rows},
                }
            )
        )


if __name__ == "__main__":
    main()
