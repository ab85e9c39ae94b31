"""Draw a fixed random sample of findings from `kubegpu lint -o json` reports, to judge each against its source.

    .venv/bin/python -m tests.lint.sample_findings /tmp/kserve.json --per-repo 30 --seed 25

Prints one tab-separated line per sampled finding (report, file, line, rule, message), sorted by file and line;
the same reports and seed always give the same sample (docs/accuracy.md, "Real repositories").
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

DEFAULT_SEED = 25  # the issue that asked for the sample
DEFAULT_SIZE = 30


def sample(findings: Sequence[dict[str, Any]], size: int, seed: int) -> list[dict[str, Any]]:
    """`size` findings drawn without replacement by a generator seeded with `seed`, from the findings in a fixed
    order (so that the report's own order does not matter); all of them when there are fewer."""
    ordered = sorted(findings, key=lambda f: (f["file"], f["line"], f["column"], f["rule"], f["message"]))
    if len(ordered) <= size:
        return ordered
    picked = random.Random(seed).sample(range(len(ordered)), size)
    return [ordered[i] for i in sorted(picked)]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("reports", nargs="+", type=Path, help="`kubegpu lint -o json` reports, one per repository")
    parser.add_argument("--per-repo", type=int, default=DEFAULT_SIZE)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    args = parser.parse_args(argv)
    for report in args.reports:
        findings = json.loads(report.read_text())["findings"]
        for finding in sample(findings, args.per_repo, args.seed):
            message = " ".join(str(finding["message"]).split())
            sys.stdout.write(f"{report.stem}\t{finding['file']}\t{finding['line']}\t{finding['rule']}\t{message}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
