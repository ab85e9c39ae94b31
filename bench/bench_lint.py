"""Lint benchmark: 2000 GPU workloads in 200 files, against the bare PyYAML C-loader parse and checkov.

Prints each figure from one run and the ratios; peak memory is the lint subprocess's max RSS.
"""

from __future__ import annotations

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
    started = time.perf_counter()
    for path in files:
        for _ in yaml.load_all(path.read_text(), Loader=yaml.CSafeLoader):
            pass
    return time.perf_counter() - started


def kubegpu_lint(folder: Path) -> tuple[float, int]:
    started = time.perf_counter()
    result = lint_paths([str(folder)], LintConfig())
    return time.perf_counter() - started, len(result.findings)


def peak_rss_mb(folder: Path) -> float:
    code = (f"from kubegpu.rules import LintConfig, lint_paths; r = lint_paths([{str(folder)!r}], LintConfig()); "
            "import resource; print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return int(out.stdout.strip()) / 1024


def checkov(folder: Path) -> float | None:
    if not CHECKOV.exists():
        return None
    started = time.perf_counter()
    subprocess.run([str(CHECKOV), "-d", str(folder), "--framework", "kubernetes", "--quiet", "--compact",
                    "-o", "json"], capture_output=True, check=False)
    return time.perf_counter() - started


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
            print(f"  checkov 3.3 -d --framework kubernetes: {theirs:7.3f} s  "
                  f"kubegpu is {theirs / ours:.1f}x faster (target >= 20x)")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
