"""Seeded fuzzing of lint, fix and the webhook's review function on mutated and hostile inputs.

`python -m tests.reliability.fuzz --lint 20000 --fix 5000 --review 5000` (what `make fuzz` runs) prints the
counts and every crash: an exception escaping lint_text, fix_text or review, or an internal error lint
reported. A small run is part of the test suite (tests/reliability/test_fuzz.py).
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import json
import random
import resource
import sys
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

import yaml

from kubegpu.fix import FindingLike, FixOptions, fix_text
from kubegpu.lint import LintConfig, engine, lint_text
from kubegpu.ruleapi import NodeTarget
from kubegpu.webhook import MalformedReview, WebhookConfig, review
from tests.reliability.hostile import HOSTILE_VALUES, case_inputs, fixture_texts, mutate, paths_of, replaced

REVIEWS_DIR = Path(__file__).parent.parent / "webhook" / "reviews"


@dataclass
class Report:
    """What a fuzz run did: inputs per target, crashes (with a reproducer), the slowest input."""

    counts: dict[str, int] = field(default_factory=lambda: {"lint": 0, "fix": 0, "review": 0})
    crashes: list[str] = field(default_factory=list)
    slowest: tuple[float, str] = (0.0, "")

    def summary(self) -> str:
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
        return (
            f"lint {self.counts['lint']}, fix {self.counts['fix']}, review {self.counts['review']} inputs; "
            f"{len(self.crashes)} crash(es); slowest input {self.slowest[0]:.2f} s ({self.slowest[1]}); "
            f"peak RSS {rss} MiB"
        )


def _seeds() -> list[tuple[str, str]]:
    """(name, text) of every case-table input and fix fixture: what the mutator starts from."""
    out = [(ci.label + (".json" if ci.text.lstrip().startswith("{") else ".yaml"), ci.text) for ci in case_inputs()]
    return out + fixture_texts()


def _hostile(text: str, rng: random.Random) -> str | None:
    """`text` with one random node replaced by a random hostile value (None when it does not parse)."""
    if "*" in text:
        return None
    try:
        docs = [d for d in yaml.safe_load_all(text)]
    except yaml.YAMLError:
        return None
    index = rng.randrange(len(docs)) if docs else 0
    paths = list(paths_of(docs[index])) if docs else []
    if not paths:
        return None
    docs[index] = replaced(docs[index], rng.choice(paths), rng.choice(HOSTILE_VALUES))
    return yaml.safe_dump_all(docs, sort_keys=False, allow_unicode=True)


def inputs(rng: random.Random, n: int) -> Iterator[tuple[str, str]]:
    """n (name, text) inputs: half hostile values at random paths, half byte-level mutations."""
    seeds = _seeds()
    made = 0
    while made < n:
        name, text = rng.choice(seeds)
        candidate = _hostile(text, rng) if rng.random() < 0.5 else None
        if candidate is None:
            candidate = mutate(text, rng, rng.randrange(1, 6))
        made += 1
        yield name, candidate


def _timed(report: Report, label: str, call: Callable[[], object]) -> None:
    start = time.perf_counter()
    try:
        call()
    except Exception as err:  # the point of fuzzing: any escaping exception is a crash
        where = traceback.extract_tb(err.__traceback__)[-1]
        report.crashes.append(
            f"{label}: {type(err).__name__}: {err} at {where.filename.split('/src/')[-1]}:{where.lineno} ({where.name})"
        )
    took = time.perf_counter() - start
    if took > report.slowest[0]:
        report.slowest = (took, label)


def _lint_one(name: str, text: str) -> None:
    result = lint_text(name, text, LintConfig())
    if result.internal_errors:
        raise AssertionError(result.internal_errors[0])


def _lint_for_fix(name: str, text: str) -> Sequence[FindingLike]:
    result = lint_text(name, text, LintConfig())
    if result.internal_errors:
        raise AssertionError(result.internal_errors[0])
    return result.findings


def _fix_one(name: str, text: str) -> None:
    outcome = fix_text(name, text, _lint_for_fix, FixOptions(unsafe=True))
    if outcome.error is None and outcome.changed:
        lint_text(name, outcome.fixed, LintConfig())  # the fixed text must read back


def _reviews(rng: random.Random, n: int) -> Iterator[tuple[str, bytes]]:
    bases = [json.loads(p.read_text()) for p in sorted(REVIEWS_DIR.glob("*.json"))]
    for i in range(n):
        base = copy.deepcopy(rng.choice(bases))
        choice = rng.random()
        if choice < 0.5:
            paths = list(paths_of(base))
            base = replaced(base, rng.choice(paths), rng.choice(HOSTILE_VALUES))
            body = json.dumps(base, allow_nan=True).encode("utf-8", "surrogatepass")
        elif choice < 0.8:
            body = mutate(json.dumps(base), rng, rng.randrange(1, 6)).encode("utf-8", "surrogatepass")
        else:
            raw = bytearray(json.dumps(base).encode())
            for _ in range(rng.randrange(1, 8)):
                raw[rng.randrange(len(raw))] = rng.randrange(256)
            body = bytes(raw)
        yield f"review {i}", body


def _review_one(body: bytes, mode: str) -> None:
    with contextlib.suppress(MalformedReview):
        review(body, "mutate" if mode == "mutate" else "validate", WebhookConfig())


def _reraise(name: str, err: BaseException) -> str:
    raise err


def run(lint_n: int, fix_n: int, review_n: int, seed: int = 17) -> Report:
    """Fuzz with lint's per-file safety net off, so that a crash shows where it happened."""
    saved = engine.internal_error
    engine.internal_error = _reraise
    try:
        return _run(lint_n, fix_n, review_n, seed)
    finally:
        engine.internal_error = saved


def _run(lint_n: int, fix_n: int, review_n: int, seed: int) -> Report:
    rng = random.Random(seed)
    report = Report()
    for i, (name, text) in enumerate(inputs(rng, lint_n)):
        report.counts["lint"] += 1
        _timed(report, f"lint seed={seed} #{i} {name}", partial(_lint_one, name, text))
    for i, (name, text) in enumerate(inputs(rng, fix_n)):
        report.counts["fix"] += 1
        _timed(report, f"fix seed={seed} #{i} {name}", partial(_fix_one, name, text))
    for label, body in _reviews(rng, review_n):
        report.counts["review"] += 1
        mode = rng.choice(("mutate", "validate"))
        _timed(report, f"{label} seed={seed} {mode}", partial(_review_one, body, mode))
    return report


def sweep(values_per_path: int | None = None, seed: int = 17, tables: Sequence[str] = ()) -> Report:
    """Every rule on every case-table input with each path replaced by hostile values: all of them
    (values_per_path None) or a seeded choice of that many per path. Lint runs with every rule enabled,
    with the case's node, kubelet configuration and options; a kubelet configuration input is varied too."""
    saved = engine.internal_error
    engine.internal_error = _reraise
    try:
        return _sweep(values_per_path, seed, tables)
    finally:
        engine.internal_error = saved


def _sweep(values_per_path: int | None, seed: int, tables: Sequence[str]) -> Report:
    from kubegpu.topology.presets import load_node

    rng = random.Random(seed)
    report = Report()
    for ci in case_inputs():
        if tables and ci.table not in tables:
            continue
        node = load_node(str(ci.case["node"])) if ci.case.get("node") else None
        kubelet = (
            yaml.safe_load(ci.case["kubelet_config"])
            if ci.field == "manifest" and ci.case.get("kubelet_config")
            else None
        )
        context = NodeTarget(node, kubelet if isinstance(kubelet, dict) else None)
        config = LintConfig(options=ci.case.get("options", {}))
        values = HOSTILE_VALUES
        for label, text in _variants(ci.text, values, values_per_path, rng):
            report.counts["lint"] += 1
            if ci.field == "manifest":
                _timed(report, f"{ci.label} {label}", partial(_lint_checked, text, config, context))
            else:
                _timed(report, f"{ci.label} {label}", partial(_lint_kubelet, ci, text, config, context))
    return report


def _variants(
    text: str, values: tuple[Any, ...], per_path: int | None, rng: random.Random
) -> Iterator[tuple[str, str]]:
    if "*" in text:
        return
    try:
        docs = list(yaml.safe_load_all(text))
    except yaml.YAMLError:
        return
    for index, doc in enumerate(docs):
        for path in paths_of(doc):
            chosen = values if per_path is None else rng.sample(values, per_path)
            for value in chosen:
                mutated = list(docs)
                mutated[index] = replaced(doc, path, value)
                yield (
                    f"doc {index} {'.'.join(map(str, path))} = {value!r:.30}",
                    yaml.safe_dump_all(mutated, sort_keys=False, allow_unicode=True),
                )


def _lint_checked(text: str, config: LintConfig, context: NodeTarget) -> None:
    result = lint_text("hostile.yaml", text, config, context)
    if result.internal_errors:
        raise AssertionError(result.internal_errors[0])


def _lint_kubelet(ci: Any, text: str, config: LintConfig, context: NodeTarget) -> None:
    _lint_checked(text, config, context)  # the configuration as an input of its own (KG8xx)
    data = yaml.safe_load(text)
    if isinstance(ci.case.get("manifest"), str) and isinstance(data, dict):  # and as the node's kubelet
        _lint_checked(ci.case["manifest"], config, replace(context, kubelet_config=data))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--lint", type=int, default=20_000)
    parser.add_argument("--fix", type=int, default=5_000)
    parser.add_argument("--review", type=int, default=5_000)
    parser.add_argument("--seed", type=int, default=17)
    parser.add_argument(
        "--sweep", action="store_true", help="instead: every hostile value at every path of every case-table input"
    )
    args = parser.parse_args(argv)
    report = sweep(None, args.seed) if args.sweep else run(args.lint, args.fix, args.review, args.seed)
    for crash in report.crashes:
        print(crash)
    print(report.summary())
    return 1 if report.crashes else 0


if __name__ == "__main__":
    sys.exit(main())
