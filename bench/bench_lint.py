"""Lint benchmark: 2000 GPU workloads in 200 files, against the bare PyYAML C-loader parse and checkov.

Every figure is from this one run, side by side. In-process figures are given both as CPU seconds
(process_time: the work, steadier on a shared machine) and wall seconds (what a user waits; `--jobs`
spreads the work over the CPUs). Commands are timed as a user runs them, start-up included, with
their modules' bytecode compiled as an installed package has it. Peak memory is the lint process's
max RSS.
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).parent))
from corpus_gen import write_corpus
from kubegpu.lint import LintConfig, lint_paths

ROOT = Path(__file__).resolve().parent.parent
CHECKOV = ROOT / "bench" / ".venv-checkov" / "bin" / "checkov"
KUBEGPU = Path(sys.executable).parent / "kubegpu"


def _times(run: Callable[[], object]) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of `run()` in this process."""
    cpu, wall = time.process_time(), time.perf_counter()
    run()
    return time.process_time() - cpu, time.perf_counter() - wall


def bare_parse(files: list[Path]) -> tuple[float, float]:
    def run() -> None:
        for path in files:
            for _ in yaml.load_all(path.read_text(), Loader=yaml.CSafeLoader):
                pass

    return _times(run)


def kubegpu_lint(folder: Path, jobs: int) -> tuple[float, float, int]:
    found: list[int] = []
    cpu, wall = _times(lambda: found.append(len(lint_paths([str(folder)], LintConfig(), jobs=jobs).findings)))
    return cpu, wall, found[0]


def peak_rss_mb(folder: Path) -> float:
    code = (
        f"from kubegpu.lint import LintConfig, lint_paths; r = lint_paths([{str(folder)!r}], LintConfig()); "
        "import resource; print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return int(out.stdout.strip()) / 1024


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def command(argv: list[str]) -> tuple[float, float]:
    """(CPU seconds of the command and its workers, wall seconds), start-up included.

    The report goes to a file, as in CI (a pipe read by this process would take CPU from the command).
    """
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    with tempfile.TemporaryFile() as report:
        before, started = _children_cpu(), time.perf_counter()
        subprocess.run(argv, stdout=report, stderr=subprocess.DEVNULL, check=False, env=env)
        return _children_cpu() - before, time.perf_counter() - started


def compile_package() -> None:
    """Write our modules' bytecode, as `pip install` does for an installed package (an editable one has none)."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "src")], check=True, capture_output=True)


def best(runs: list[tuple[float, ...]]) -> tuple[float, ...]:
    """The fastest run of each figure (the least disturbed by the rest of the machine)."""
    return tuple(min(column) for column in zip(*runs, strict=True))


def main() -> None:
    folder = Path(tempfile.mkdtemp(prefix="kubegpu-bench-lint-"))
    try:
        files = write_corpus(folder, files=200, per_file=10)
        # First, while this process is small: Linux carries a process's peak RSS across fork+exec.
        rss = peak_rss_mb(folder)
        compile_package()
        # In turn, not each command's repeats back to back: a shared machine's speed drifts over a minute.
        bare_runs: list[tuple[float, ...]] = []
        one_runs: list[tuple[float, ...]] = []
        auto_runs: list[tuple[float, ...]] = []
        for _ in range(5):
            bare_runs.append(bare_parse(files))
            one_runs.append(kubegpu_lint(folder, 1))
            auto_runs.append(kubegpu_lint(folder, 0))
        bare_cpu, bare_wall = best(bare_runs)
        one_cpu, one_wall, findings = best(one_runs)
        _, auto_wall, _ = best(auto_runs)
        print(f"lint: 2000 GPU workloads in 200 files, {findings} findings, {os.cpu_count()} CPUs")
        print(f"  bare PyYAML CSafeLoader parse       : {bare_cpu:6.3f} s CPU {bare_wall:6.3f} s wall")
        print(
            f"  kubegpu lint, one process (--jobs 1): {one_cpu:6.3f} s CPU {one_wall:6.3f} s wall  "
            f"CPU ratio to bare parse {one_cpu / bare_cpu:.2f}x (target <= 1.5x)"
        )
        print(
            f"  kubegpu lint, default (--jobs 0)    :            {auto_wall:6.3f} s wall  "
            f"wall ratio to bare parse {auto_wall / bare_wall:.2f}x (target <= 1.5x)"
        )
        print(f"  kubegpu lint peak RSS (one process) : {rss:6.1f} MB (target < 150 MB)")
        if not CHECKOV.exists():
            print("  checkov 3.3: not installed (make bench-checkov creates bench/.venv-checkov)")
            return
        lint_argv = [str(KUBEGPU), "lint", str(folder), "-o", "json"]
        ours_cpu, ours_wall = best([command(lint_argv) for _ in range(5)])
        one_cmd_cpu, one_cmd_wall = best([command([*lint_argv, "--jobs", "1"]) for _ in range(5)])
        theirs_cpu, theirs_wall = command(
            [str(CHECKOV), "-d", str(folder), "--framework", "kubernetes", "--quiet", "--compact", "-o", "json"]
        )
        print(f"  kubegpu lint DIR -o json            : {ours_cpu:6.3f} s CPU {ours_wall:6.3f} s wall")
        print(f"  the same with --jobs 1              : {one_cmd_cpu:6.3f} s CPU {one_cmd_wall:6.3f} s wall")
        print(f"  checkov -d DIR --framework kubernetes: {theirs_cpu:6.3f} s CPU {theirs_wall:6.3f} s wall")
        print(
            f"  kubegpu is {theirs_wall / ours_wall:.1f}x faster in wall time (target >= 20x), "
            f"{theirs_cpu / ours_cpu:.1f}x in CPU time; with --jobs 1 {theirs_wall / one_cmd_wall:.1f}x wall, "
            f"{theirs_cpu / one_cmd_cpu:.1f}x CPU"
        )
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
