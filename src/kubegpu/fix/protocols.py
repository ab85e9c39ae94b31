"""What the fix engine needs from a linter: findings with fixes made of JSON-Patch-like edits.

kubegpu.fix sits above kubegpu.rules in the layers (import-linter). The engine reads findings through these
small structural types all the same, so that it depends only on the attributes it uses and its tests can feed
it hand-made findings; kubegpu.rules.Finding satisfies them (mypy checks it at the end of this module). The
caller passes the linter in (a LintFunction bound to kubegpu.rules.lint_text and a configuration).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from kubegpu.manifests import Document, FieldPath, Location


class EditLike(Protocol):
    """One operation: `op` is add, replace or remove; `path` is relative to the object; `-` appends."""

    @property
    def op(self) -> str: ...

    @property
    def path(self) -> FieldPath: ...

    @property
    def value(self) -> Any: ...


class FixLike(Protocol):
    """A rule's fix: a description, a safety level (safe, unsafe, display-only) and its edits."""

    @property
    def description(self) -> str: ...

    @property
    def safety(self) -> str: ...

    @property
    def edits(self) -> Sequence[EditLike]: ...


class FindingLike(Protocol):
    """A lint finding as the fix engine reads it."""

    @property
    def code(self) -> str: ...

    @property
    def name(self) -> str: ...

    @property
    def severity(self) -> str: ...

    @property
    def message(self) -> str: ...

    @property
    def location(self) -> Location: ...

    @property
    def fix(self) -> FixLike | None: ...

    @property
    def document(self) -> Document | None: ...


# (display name, text) -> findings of that text; the CLI binds it to kubegpu.rules.lint_text and a config.
LintFunction = Callable[[str, str], Sequence[FindingLike]]

SAFE = "safe"
UNSAFE = "unsafe"
DISPLAY_ONLY = "display-only"


if TYPE_CHECKING:
    from kubegpu.ruleapi import Finding

    def _rules_findings_are_what_the_engine_reads(finding: Finding) -> FindingLike:
        return finding
