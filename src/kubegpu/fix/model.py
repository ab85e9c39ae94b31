"""What a fix run tells the user: fixes applied, findings that remain and why, files left untouched and why.

Plain frozen records, rendered by the CLI; no YAML or rule logic here.
"""

from __future__ import annotations

from dataclasses import dataclass

from kubegpu.manifests import FieldPath

REASON_NO_FIX = "no automatic fix"
REASON_UNSAFE = "unsafe fix withheld: use --unsafe-fixes"
REASON_DISPLAY = "fix is shown for review only, never applied"


@dataclass(frozen=True)
class FixOptions:
    """Which fixes to apply and how hard to try: unsafe ones too, and how many fix-and-relint passes."""

    unsafe: bool = False
    max_passes: int = 5
    text_edits: bool = True  # simple edits as text insertions; False sends every edit through the round-trip emitter


@dataclass(frozen=True)
class AppliedFix:
    """A fix that was applied: rule, what it did, its safety, the line of the finding when it was found, the
    object (index in the stream) and paths (from the root of its YAML document) it edited, and the trailing comments
    it removed because they sat on a line it rewrote (they described the old value)."""

    code: str
    name: str
    description: str
    safety: str
    line: int
    document: int = 0
    paths: tuple[FieldPath, ...] = ()
    dropped_comments: tuple[str, ...] = ()  # trailing comments removed from the lines it rewrote (`# ...`)


@dataclass(frozen=True)
class Remaining:
    """A finding still present after fixing, with its message and why it was not fixed."""

    code: str
    name: str
    severity: str
    line: int
    message: str
    reason: str


@dataclass(frozen=True)
class FileOutcome:
    """One input after fixing: the text before and after, what was applied and what remains.

    `error` is set when the file was left untouched (does not parse, or its fixed form would not).
    """

    name: str
    original: str
    fixed: str
    applied: tuple[AppliedFix, ...] = ()
    remaining: tuple[Remaining, ...] = ()
    skipped: tuple[str, ...] = ()
    error: str | None = None
    passes: int = 0
    converged: bool = True
    bom: bool = False

    @property
    def changed(self) -> bool:
        return self.fixed != self.original
