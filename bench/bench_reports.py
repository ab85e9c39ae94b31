"""Report benchmark: the findings of 2000 GPU workloads in 200 files rendered in every format, against the bare
json.dumps of the same findings as dicts (the least a report can cost).

Every figure is from this one run: CPU seconds (process_time, steadier on a shared machine), the best of five.
The text report reads each file's source lines for its excerpts, as `kubegpu lint` does. What this measures is
the reporters' own cost, escaping of what they print from the input included (report/escape.py).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from corpus_gen import write_corpus
from kubegpu.lint import LintConfig, LintResult, lint_paths
from kubegpu.report.findings_github import render_github
from kubegpu.report.findings_json import render_json
from kubegpu.report.findings_junit import render_junit
from kubegpu.report.findings_sarif import render_sarif
from kubegpu.report.findings_text import write_text

RUNS = 5


def _cpu(run: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(RUNS):
        start = time.process_time()
        run()
        best = min(best, time.process_time() - start)
    return best


def _bare(result: LintResult) -> None:
    json.dumps(
        [
            {
                "file": f.location.file,
                "line": f.location.line,
                "column": f.location.column,
                "rule": f.code,
                "message": f.message,
                "path": f.location.dotted_path,
            }
            for f in result.findings
        ]
    )


def _text(result: LintResult) -> None:
    parts: list[str] = []
    write_text(result, parts.append)


def main() -> None:
    folder = Path(tempfile.mkdtemp(prefix="kubegpu-bench-reports-"))
    cwd = os.getcwd()
    try:
        write_corpus(folder, files=200, per_file=10)
        os.chdir(folder)  # SARIF makes paths relative to the working directory
        result = lint_paths(["."], LintConfig())
        bare = _cpu(lambda: _bare(result))
        print(
            f"reports: {len(result.findings)} findings of 2000 GPU workloads in 200 files, CPU seconds, best of {RUNS}"
        )
        print(f"  bare json.dumps of the findings as dicts: {bare:6.3f} s")
        for name, render in (
            ("text (with excerpts)", _text),
            ("json", render_json),
            ("github", render_github),
            ("junit", render_junit),
            ("sarif", render_sarif),
        ):
            seconds = _cpu(lambda render=render: render(result))
            print(f"  {name:<41}: {seconds:6.3f} s  ratio to bare {seconds / bare:5.2f}x")
    finally:
        os.chdir(cwd)
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
