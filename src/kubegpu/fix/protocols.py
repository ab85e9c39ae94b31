"""What the fix engine needs from a linter: findings with fixes made of JSON-Patch-like edits.

Structural types, so that kubegpu.fix stays independent of kubegpu.rules (a sibling layer); the CLI passes a linter in.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

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
