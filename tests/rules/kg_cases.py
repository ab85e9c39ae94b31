"""Run a YAML case table (sqlfluff-style) for the gang, placement, bin-packing, kubelet and admission rules.

Each case: `name`, `manifest`, `expect` (list of {rule, line, path[, severity, message, fix]} or `none`), and
optionally `select`, `options`, `node` (a preset name), `kubelet_config` (YAML text), `smt` (as --smt) and `fixed`
(apply the fixes, safe and unsafe, then check the text: `contains`, and that the fixed rules no longer fire).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from kubegpu.fix import FixOptions, fix_text
from kubegpu.lint import Finding, LintConfig, NodeTarget, lint_text
from kubegpu.manifests import format_path
from kubegpu.topology.presets import load_node

CASES_DIR = Path(__file__).parent / "cases"


def load_table(name: str) -> dict[str, Any]:
    table: dict[str, Any] = yaml.safe_load((CASES_DIR / name).read_text())
    return table


def case_ids(table: dict[str, Any]) -> list[str]:
    return [str(case["name"]) for case in table["cases"]]


def _expected(case: dict[str, Any]) -> list[dict[str, Any]]:
    expect = case.get("expect", "none")
    return [] if expect == "none" else list(expect)


def lint_case(table: dict[str, Any], case: dict[str, Any], text: str | None = None) -> list[Finding]:
    """Lint the case's manifest (or `text`) with its selection, options, node and kubelet config."""
    select: Sequence[str] = case.get("select", table.get("select", ()))
    config = LintConfig(select=tuple(select), options=case.get("options", {}))
    target = NodeTarget(
        load_node(str(case["node"])) if case.get("node") else None,
        yaml.safe_load(case["kubelet_config"]) if case.get("kubelet_config") else None,
        case.get("smt"),
    )
    result = lint_text(f"{case['name']}.yaml", text if text is not None else case["manifest"], config, target)
    return result.findings


def run_case(table: dict[str, Any], case: dict[str, Any]) -> None:
    findings = lint_case(table, case)
    got = sorted((f.name, f.location.line, f.location.dotted_path) for f in findings)
    want = sorted((e["rule"], e["line"], e["path"]) for e in _expected(case))
    assert got == want, [f"{f.name} {f.location.line} {f.location.dotted_path}: {f.message}" for f in findings]
    for entry in _expected(case):
        key = (entry["rule"], entry["line"], entry["path"])
        finding = next(f for f in findings if (f.name, f.location.line, f.location.dotted_path) == key)
        if "severity" in entry:
            assert finding.severity.value == entry["severity"], finding.message
        for fragment in entry.get("message", []):
            assert fragment in finding.message, finding.message
        if "fix" in entry:
            if entry["fix"] is None:
                assert finding.fix is None, finding.fix
            else:
                assert finding.fix is not None, finding.message
                assert finding.fix.safety.value == entry["fix"]["safety"]
                edits = [[e.op, format_path(e.path), e.value] for e in finding.fix.edits]
                assert edits == entry["fix"]["edits"]
    fixed = case.get("fixed")
    if fixed:
        outcome = fix_text(
            f"{case['name']}.yaml",
            case["manifest"],
            lambda name, text: lint_case(table, case, text),
            FixOptions(unsafe=True),
        )
        assert outcome.error is None, outcome.error
        for fragment in fixed.get("contains", []):
            assert fragment in outcome.fixed, outcome.fixed
        after = {f.name for f in lint_case(table, case, outcome.fixed)}
        for rule in fixed.get("gone", []):
            assert rule not in after, outcome.fixed
