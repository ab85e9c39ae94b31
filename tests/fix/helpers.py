"""Shared test helpers for kubegpu fix: a linter bound to a config, fixture discovery, comparisons."""

from __future__ import annotations

import copy
import tomllib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kubegpu.fix import AppliedFix, FindingLike, FixOptions, LintFunction
from kubegpu.lint import LintConfig, NodeTarget, lint_text
from kubegpu.manifests import Document, FieldPath, Location


@dataclass(frozen=True)
class FakeEdit:
    """An edit as a rule makes one, for driving the fix engine without the rules."""

    op: str
    path: FieldPath
    value: Any = None


@dataclass(frozen=True)
class FakeFix:
    description: str
    safety: str
    edits: tuple[FakeEdit, ...]


@dataclass(frozen=True)
class FakeFinding:
    code: str
    name: str
    severity: str
    message: str
    location: Location
    fix: FakeFix | None
    document: Document | None


FIXTURES = Path(__file__).parent / "fixtures"
# Fixtures pin the rules they exercise, so rules added later do not change their expected output.
DEFAULT_SELECT = ("KG1", "KG2")


def linter(config: LintConfig | None = None, target: NodeTarget | None = None) -> LintFunction:
    bound = config or LintConfig()

    def lint(name: str, text: str) -> Sequence[FindingLike]:
        return lint_text(name, text, bound, target).findings

    return lint


@dataclass(frozen=True)
class Case:
    """One fixture: before/after files and the options from its config.toml."""

    name: str
    before: Path
    after: Path
    options: FixOptions
    config: LintConfig


def fixture_cases() -> list[Case]:
    cases = []
    for folder in sorted(p for p in FIXTURES.iterdir() if p.is_dir()):
        settings: dict[str, Any] = {}
        if (folder / "config.toml").is_file():
            settings = tomllib.loads((folder / "config.toml").read_text())
        options = FixOptions(unsafe=bool(settings.get("unsafe", False)))
        config = LintConfig(select=tuple(settings.get("select", DEFAULT_SELECT)), options=settings.get("options", {}))
        for before in sorted((folder / "before").iterdir()):
            cases.append(Case(f"{folder.name}/{before.name}", before, folder / "after" / before.name, options, config))
    return cases


def comment_lines(text: str) -> Counter[str]:
    """Every full-line comment, by its text (indentation may change with the document's re-emission)."""
    return Counter(line.strip() for line in text.splitlines() if line.strip().startswith("#"))


def inline_comments(text: str) -> Counter[str]:
    """Comments that follow a value on the same line (`key: value  # why`), by their text."""
    out: Counter[str] = Counter()
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("#") or " #" not in stripped or '"' in stripped or "'" in stripped:
            continue
        out[stripped[stripped.index(" #") + 1 :]] += 1
    return out


def strip_paths(data: Any, paths: Sequence[FieldPath]) -> Any:
    """A deep copy of `data` without the given paths (a `-` step removes the whole list it appends to)."""
    out = copy.deepcopy(data)
    for path in paths:
        steps = list(path)
        if "-" in steps:
            steps = steps[: steps.index("-")]
        node = out
        for step in steps[:-1]:
            try:
                node = node[step]
            except (KeyError, IndexError, TypeError):
                node = None
                break
        if node is None or not steps:
            continue
        if isinstance(node, dict):
            node.pop(steps[-1], None)
        elif isinstance(node, list) and isinstance(steps[-1], int) and steps[-1] < len(node):
            node[steps[-1]] = "<touched>"
    return out


def touched_by_document(applied: Sequence[AppliedFix], documents: Sequence[Document]) -> dict[int, list[FieldPath]]:
    """Paths each object's fixes touched, relative to the object (its prefix removed)."""
    prefixes = {doc.index: doc.prefix for doc in documents}
    out: dict[int, list[FieldPath]] = {}
    for fix in applied:
        prefix = prefixes.get(fix.document, ())
        for path in fix.paths:
            out.setdefault(fix.document, []).append(tuple(path[len(prefix) :]))
    return out


CORE_GROUPS = ("v1", "apps/v1", "batch/v1")
K8S_VERSION = "1.35.0"


def schema_errors(data: Any) -> str | None:
    """The first kubernetes-validate error of a core object (Kubernetes 1.35 schema), or None."""
    import kubernetes_validate

    try:
        kubernetes_validate.validate(data, K8S_VERSION, strict=False)
    except kubernetes_validate.ValidationError as err:
        return str(err.message)
    return None
