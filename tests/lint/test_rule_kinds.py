"""Document rules that declare the kinds they read are called for those kinds only: the declaration must hold."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubegpu.lint.config import LintConfig
from kubegpu.lint.engine import lint_text
from kubegpu.lint.registry import all_rules
from kubegpu.manifests import Document
from kubegpu.manifests.loader import load_text
from kubegpu.ruleapi import Rule, RuleContext, Target

ROOT = Path(__file__).resolve().parents[2]
# Objects of many kinds: the shipped examples, the fixture repositories and the rule test cases' manifests.
SOURCES = sorted([*ROOT.glob("examples/*.yaml"), *ROOT.glob("tests/fixtures/repos/**/*.yaml")])
KIND_RULES = [r for r in all_rules() if r.target is Target.DOCUMENT and r.kinds is not None]


def _documents() -> list[Document]:
    docs: list[Document] = []
    for path in SOURCES:
        docs.extend(load_text(str(path), path.read_text(errors="replace")).documents)
    for text in _case_texts():
        docs.extend(load_text("case.yaml", text).documents)
    return docs


def _case_texts() -> list[str]:
    """The objects of the rule test cases (each case holds its manifest as text)."""
    import yaml

    texts: list[str] = []
    for path in sorted(ROOT.glob("tests/rules/cases/*.yaml")):
        cases = (yaml.safe_load(path.read_text()) or {}).get("cases", [])
        texts.extend(case["manifest"] for case in cases if isinstance(case.get("manifest"), str))
    return texts


def test_some_rules_declare_kinds() -> None:
    assert {r.name for r in KIND_RULES} >= {"kubelet-cpu-manager-not-static", "scheduler-spreads-gpus"}


@pytest.mark.parametrize("rule", KIND_RULES, ids=lambda r: r.name)
def test_rule_finds_nothing_in_other_kinds(rule: Rule) -> None:
    docs = _documents()
    assert rule.kinds is not None and rule.check is not None
    others = [d for d in docs if d.kind not in rule.kinds]
    assert len({d.kind for d in others}) > 20  # the gang rules take 21 kinds: about 25 others remain
    config = LintConfig()
    ctx = RuleContext(
        options=config.options, all_documents=tuple(docs), accelerator_resources=config.accelerator_resources
    )
    assert [d.kind for d in others if list(rule.check(d, ctx))] == []


def test_kind_rules_still_run_on_their_kind() -> None:
    text = (ROOT / "examples/kubelet-config.yaml").read_text()
    found = {f.name for f in lint_text("kubelet-config.yaml", text).findings}
    assert found & {r.name for r in KIND_RULES if "KubeletConfiguration" in (r.kinds or ())}
