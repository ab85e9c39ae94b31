"""Run every bench/bench_*.py in turn (each prints its baseline, our figure and the ratio)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def main() -> int:
    failures = 0
    only = sys.argv[1:]
    for script in sorted(Path(__file__).parent.glob("bench_*.py")):
        if only and script.stem.removeprefix("bench_") not in only:
            continue
        print(f"== {script.name}", flush=True)
        failures += subprocess.run([sys.executable, str(script)], check=False).returncode != 0
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
