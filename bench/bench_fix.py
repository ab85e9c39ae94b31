"""Fix benchmark: 2000 generated GPU workloads in 200 files, fixed in place in a temporary folder.

Baseline: round-tripping every document of every file through ruamel.yaml (what a fixer without per-document
splicing does). Ours: `kubegpu fix` (safe fixes, lint + re-lint); reports documents fixed per second and the
share of time spent in the round-trip parser and emitter. Target: all 2000 workloads in under 20 s.
"""

from __future__ import annotations

import io
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

sys.path.insert(0, str(Path(__file__).parent))
from corpus_gen import write_corpus
from kubegpu.fix import FindingLike, FixOptions, fix_input, read_inputs, write_outcome, yamlio
from kubegpu.lint import LintConfig, lint_text

TARGET_SECONDS = 20.0


def naive_round_trip(files: Sequence[Path]) -> tuple[float, float]:
    """Load and dump every document with ruamel round-trip, as a whole-file fixer would: (seconds, CPU seconds)."""
    handle = YAML(typ="rt")
    handle.width = 1 << 30
    started, cpu_started = time.perf_counter(), time.process_time()
    for path in files:
        documents = list(handle.load_all(path.read_text()))
        handle.dump_all(documents, io.StringIO())
    return time.perf_counter() - started, time.process_time() - cpu_started


class _Timer:
    """Wraps the round-trip load and dump functions of kubegpu.fix.yamlio to add up the time spent in them."""

    def __init__(self) -> None:
        self.seconds = 0.0

    def wrap(self, func: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any) -> Any:
            started = time.perf_counter()
            try:
                return func(*args)
            finally:
                self.seconds += time.perf_counter() - started

        return timed


def kubegpu_fix(folder: Path, text_edits: bool = True) -> tuple[float, float, int, int, float]:
    """Fix every file in `folder` in place: (seconds, CPU seconds, documents fixed, fixes applied, round-trip s)."""
    config = LintConfig()

    def lint(name: str, text: str) -> Sequence[FindingLike]:
        return lint_text(name, text, config).findings

    timer = _Timer()
    load, dump = yamlio.load_document, yamlio.dump_document
    yamlio.load_document, yamlio.dump_document = timer.wrap(load), timer.wrap(dump)
    try:
        started = time.perf_counter()
        cpu_started = time.process_time()
        documents = applied = 0
        for item in read_inputs([str(folder)]):
            outcome = fix_input(item, lint, FixOptions(text_edits=text_edits))
            write_outcome(item, outcome)
            documents += len({a.document for a in outcome.applied})
            applied += len(outcome.applied)
        cpu = time.process_time() - cpu_started
        return time.perf_counter() - started, cpu, documents, applied, timer.seconds
    finally:
        yamlio.load_document, yamlio.dump_document = load, dump


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="kubegpu-bench-fix-") as tmp:
        base = Path(tmp)
        files = write_corpus(base / "baseline", files=200, per_file=10)
        baseline, baseline_cpu = naive_round_trip(files)
        write_corpus(base / "ours", files=200, per_file=10)
        ours, cpu, documents, applied, round_trip = kubegpu_fix(base / "ours")
        again, _cpu, _docs, second_applied, _rt = kubegpu_fix(base / "ours")
        write_corpus(base / "rt", files=200, per_file=10)
        rt_wall, rt_cpu, rt_docs, _applied, rt_parser = kubegpu_fix(base / "rt", text_edits=False)
    print("fix benchmark: 2000 GPU workloads in 200 files (bench/corpus_gen.py), safe fixes, written in place")
    print(
        f"baseline  ruamel round-trip of every document (no lint, no fix): {baseline:.2f} s ({baseline_cpu:.2f} s CPU)"
    )
    print(
        f"kubegpu   fix: {ours:.2f} s ({cpu:.2f} s CPU), {documents} documents fixed ({applied} fixes), "
        f"{documents / cpu:.0f} documents fixed per CPU second; round-trip parser+emitter "
        f"{round_trip / ours:.0%} of the time (text edits covered every document)"
    )
    print(
        f"kubegpu   fix with text edits off (every edited document through ruamel): {rt_wall:.2f} s "
        f"({rt_cpu:.2f} s CPU), {rt_docs} documents fixed, round-trip parser+emitter {rt_parser / rt_wall:.0%}"
    )
    print(f"kubegpu   second run (idempotence): {again:.2f} s, {second_applied} fixes applied")
    print(
        f"ratio     baseline / kubegpu (CPU time): {baseline_cpu / cpu:.2f}x; target < {TARGET_SECONDS:.0f} s: "
        f"{'met' if ours < TARGET_SECONDS else 'missed'} on wall time, "
        f"{'met' if cpu < TARGET_SECONDS else 'missed'} on CPU time (wall time counts other load on the machine)"
    )


if __name__ == "__main__":
    main()
