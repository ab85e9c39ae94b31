"""The most complex functions of kubegpu by radon's cyclomatic complexity, and how many are above the limit.

`make lint-self` enforces the limit with ruff's C901 (mccabe); radon also counts boolean operators, so its
figures are a little higher: this reports them, for refactoring notes. radon is not a kubegpu dependency:
    pip install radon && python bench/complexity.py [--top N] [--limit 30] [SRC]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def _blocks(item: dict[str, Any]) -> list[dict[str, Any]]:
    """A radon block and the methods of a class, flattened (a class's own figure is not a function's)."""
    found = [] if item.get("type") == "class" else [item]
    for method in item.get("methods") or []:
        found.extend(_blocks(method))
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("src", nargs="?", type=Path, default=ROOT / "src" / "kubegpu")
    parser.add_argument("--top", type=int, default=10)
    parser.add_argument("--limit", type=int, default=30)
    args = parser.parse_args(argv)
    radon = shutil.which("radon") or str(Path(sys.executable).parent / "radon")
    if not Path(radon).exists():
        print("radon is not installed (pip install radon)", file=sys.stderr)
        return 2
    out = subprocess.run([radon, "cc", "-j", str(args.src)], capture_output=True, text=True, check=True).stdout
    rows: dict[tuple[str, str, int], int] = {}
    for path, items in json.loads(out).items():
        for item in items:
            for block in _blocks(item):
                name = f"{block['classname']}.{block['name']}" if block.get("classname") else block["name"]
                rows[(str(Path(path).relative_to(args.src)), name, block["lineno"])] = block["complexity"]
    ranked = sorted(rows.items(), key=lambda row: (-row[1], row[0]))
    for (path, name, line), complexity in ranked[: args.top]:
        print(f"{complexity:4d}  {path}:{line}  {name}")
    above = sum(1 for _, complexity in ranked if complexity > args.limit)
    print(f"functions above {args.limit}: {above}")
    return 1 if above else 0


if __name__ == "__main__":
    sys.exit(main())
