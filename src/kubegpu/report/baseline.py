"""A baseline: the findings a repository already has, written once, so that a pull request fails only on new ones.

A finding is known by the fingerprint SARIF gives it (rule, file, object, field path: not its line), counted, so two
identical findings in the baseline excuse two, and a third is new. The file is untrusted input: bounded and checked.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from kubegpu.errors import InputError
from kubegpu.lint import LintResult
from kubegpu.manifests.regular_file import NotReadable, read_regular
from kubegpu.report.findings_sarif import fingerprint

FORMAT = "kubegpu-baseline"
VERSION = 1
MAX_BYTES = 64 * 1024 * 1024  # a baseline of a million findings is about 200 MB; a real one is kilobytes


@dataclass(frozen=True)
class Baseline:
    """How many times each fingerprint is excused, and the file it came from (named in notices)."""

    counts: Mapping[str, int]
    file: str


def baseline_text(result: LintResult) -> str:
    """The baseline of a run: each finding's fingerprint and, for the reader, its rule, file, object and field."""
    entries = []
    for f in result.findings:
        obj = "" if f.obj is None else "/".join(p for p in (f.obj.kind, f.obj.namespace or "", f.obj.name) if p)
        entries.append(
            {
                "fingerprint": fingerprint(f),
                "rule": f.code,
                "file": f.location.file,
                "object": obj,
                "path": f.location.dotted_path,
            }
        )
    entries.sort(key=lambda e: (e["file"], e["rule"], e["object"], e["path"], e["fingerprint"]))
    return json.dumps({"format": FORMAT, "version": VERSION, "findings": entries}, indent=2, ensure_ascii=False) + "\n"


def read_baseline(path: Path) -> Baseline:
    """The baseline file at `path`; an InputError naming it and what is wrong otherwise."""
    name = str(path)
    try:
        raw = read_regular(path, MAX_BYTES)
    except (NotReadable, OSError) as err:
        raise InputError(
            f"cannot read the baseline: {err.strerror if isinstance(err, OSError) and err.strerror else err}", file=name
        ) from None
    if len(raw) > MAX_BYTES:
        raise InputError(f"the baseline is over {MAX_BYTES} bytes", file=name)
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        line = getattr(err, "lineno", None)
        raise InputError(f"not a kubegpu baseline (not JSON: {err})", file=name, line=line) from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise InputError(
            f'not a kubegpu baseline (no "format": "{FORMAT}"); write one with --write-baseline', file=name
        )
    if data.get("version") != VERSION:
        raise InputError(
            f"baseline version {data.get('version')!r} is not one this kubegpu reads ({VERSION})", file=name
        )
    findings = data.get("findings")
    if not isinstance(findings, list):
        raise InputError('the baseline\'s "findings" is not a list', file=name)
    counts: Counter[str] = Counter()
    for i, entry in enumerate(findings):
        key = entry.get("fingerprint") if isinstance(entry, dict) else None
        if not isinstance(key, str) or not key:
            raise InputError(f'finding {i + 1} of the baseline has no "fingerprint"', file=name)
        counts[key] += 1
    return Baseline(dict(counts), name)


def without_baseline(result: LintResult, baseline: Baseline) -> tuple[LintResult, int]:
    """The result without the findings the baseline excuses (each as many times as it holds it), and how many."""
    left = Counter(baseline.counts)
    kept = []
    for f in result.findings:
        key = fingerprint(f)
        if left[key] > 0:
            left[key] -= 1
        else:
            kept.append(f)
    return replace(result, findings=kept), len(result.findings) - len(kept)
