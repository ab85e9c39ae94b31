"""Monorepo benchmark: 20,000 GPU workloads in 2,000 files, generated here (never committed).

Both commands run side by side in this one run, in turn (bare, lint, lint, bare, ...), start-up included:
the bare PyYAML C-loader parse of the same files (the baseline) and `kubegpu lint DIR -o json`, with kubegpu's
bytecode compiled as an installed package has it (as `bench_lint.py` does; PyYAML's is compiled by its
install). Reported: CPU seconds (user + system, the command and its children) and peak RSS (the largest
process), and the ratio of CPU times. Targets: lint peak memory under 250 MB, CPU time within 1.5x the bare
parse.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench_lint import ROOT, compile_package
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


def best_interleaved(commands: list[list[str]], runs: int) -> list[tuple[int, float, float]]:
    """Each command's fastest run (CPU), the commands run in turn `runs` times: a shared machine's speed drifts
    over minutes, and running each command's repeats back to back would charge that drift to one of them."""
    results: list[list[tuple[int, float, float]]] = [[] for _ in commands]
    for _ in range(runs):
        for i, command in enumerate(commands):
            results[i].append(measure(command))
    return [min(r, key=lambda item: item[1]) for r in results]


def source_at(revision: str, into: Path) -> Path:
    """The `src` tree of a git revision of this repository, with its bytecode compiled as an install has it."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", revision, "src"], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(into / "src")], check=True, capture_output=True)
    return into / "src"


def main() -> None:
    """Options: --runs N (default 3); --against REV also runs the code of git revision REV, in turn with the
    others, so that a change's effect is measured side by side rather than against another evening's figure."""
    runs = int(sys.argv[sys.argv.index("--runs") + 1]) if "--runs" in sys.argv else 3
    against = sys.argv[sys.argv.index("--against") + 1] if "--against" in sys.argv else None
    with tempfile.TemporaryDirectory(prefix="kubegpu-monorepo-") as folder:
        files = write_corpus(Path(folder) / "gitops", files=FILES, per_file=PER_FILE)
        print(
            f"corpus: {FILES * PER_FILE} GPU workloads in {len(files)} files, "
            f"{sum(f.stat().st_size for f in files) / 1e6:.1f} MB"
        )
        compile_package()
        labels: tuple[str, ...] = ("one process (--jobs 1)", "default (--jobs 0)")
        lint = [str(KUBEGPU), "lint", str(Path(folder) / "gitops"), "-o", "json"]
        commands = [[sys.executable, "-c", _BARE_PARSE, *map(str, files)], [*lint, "--jobs", "1"], lint]
        if against is not None:
            labels = (*labels, f"at {against} (--jobs 1)")
            older = source_at(against, Path(folder))
            commands.append(["env", f"PYTHONPATH={older}", *lint, "--jobs", "1"])  # found before this install
        (_code, bare_cpu, bare_rss), *measured = best_interleaved(commands, runs)
        rows = []
        for label, (code, cpu, rss) in zip(labels, measured, strict=True):
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
        if against is not None:
            print(f"this code takes {rows[0][1] / rows[-1][1]:.3f}x the CPU of the code at {against} (--jobs 1)")
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
