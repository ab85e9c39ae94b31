"""How fix time grows with the input: JSON Lists of n GPU pods (each needing a /dev/shm fix) and one pod with n
volumes, n doubling. Baseline: lint of the same text in the same run. Linear growth keeps the fix/lint ratio
flat and the per-doubling factor near 2 (it was about 4: 1,250 -> 10,000 pods took 2.4 s -> 54.8 s).

`python bench/bench_fix_scaling.py [--sizes 1250,2500,5000,10000]` (default a quicker 625..5000).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from kubegpu.fix import FindingLike, FixOptions, fix_text
from kubegpu.lint import LintConfig, lint_text

LIMITS = {"nvidia.com/gpu": 1, "memory": "8Gi"}


def pod_list(n: int) -> str:
    items = [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": f"p{i}"},
            "spec": {"containers": [{"name": "a", "image": "b:1", "resources": {"limits": LIMITS}}]},
        }
        for i in range(n)
    ]
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": items}, indent=2)


def pod_with_volumes(n: int) -> str:
    volumes = [{"name": f"v{i}", "emptyDir": {}} for i in range(n)]
    mounts = [{"name": f"v{i}", "mountPath": f"/data/{i}"} for i in range(n)]
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "many"},
        "spec": {
            "containers": [{"name": "a", "image": "b:1", "resources": {"limits": LIMITS}, "volumeMounts": mounts}],
            "volumes": volumes,
        },
    }
    return json.dumps(pod, indent=2)


def _lint(name: str, text: str) -> Sequence[FindingLike]:
    return lint_text(name, text, LintConfig()).findings


def _seconds(call: Callable[[], object]) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="625,1250,2500,5000")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    for label, make in (("JSON List of n pods", pod_list), ("one pod with n volumes", pod_with_volumes)):
        print(f"{label}: n, lint s (baseline), fix s, fix/lint, fix growth per step")
        previous = None
        for n in sizes:
            text = make(n)
            lint_s = _seconds(partial(lint_text, "bench.json", text, LintConfig()))
            outcome = None

            def run(text: str = text) -> None:
                nonlocal outcome
                outcome = fix_text("bench.json", text, _lint, FixOptions(unsafe=True))

            fix_s = _seconds(run)
            assert outcome is not None and outcome.error is None and outcome.changed
            growth = "" if previous is None else f"{fix_s / previous:.2f}x"
            print(f"  {n:>6}  {lint_s:7.2f}  {fix_s:7.2f}  {fix_s / lint_s:6.1f}  {growth}", flush=True)
            previous = fix_s
    return 0


if __name__ == "__main__":
    sys.exit(main())
