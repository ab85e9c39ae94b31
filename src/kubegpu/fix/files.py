"""Read inputs for fixing (keeping a BOM) and write results atomically (kubegpu.manifests.atomic: temp file,
fsync, rename, same mode); a failed write leaves the original file as it was.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from kubegpu.fix.engine import fix_text
from kubegpu.fix.model import FileOutcome, FixOptions
from kubegpu.fix.protocols import LintFunction
from kubegpu.manifests import NotReadable, discover, read_regular
from kubegpu.manifests.atomic import write_atomic

BOM = "\ufeff"
DEFAULT_MAX_BYTES = 20 * 1024 * 1024


@dataclass(frozen=True)
class InputFile:
    """A manifest to fix: its display name, its path and its text (without BOM), or why it cannot be read."""

    name: str
    path: Path | None
    text: str | None
    bom: bool = False
    error: str | None = None


def decode(raw: bytes) -> tuple[str, bool]:
    """UTF-8 text and whether it started with a byte-order mark; raises UnicodeDecodeError."""
    text = raw.decode("utf-8")
    if text.startswith(BOM):
        return text[1:], True
    return text, False


def encode(text: str, bom: bool) -> bytes:
    return ((BOM if bom else "") + text).encode("utf-8")


def read_inputs(paths: Sequence[str], max_bytes: int = DEFAULT_MAX_BYTES) -> Iterator[InputFile]:
    """Manifest files named or found under directories (Dockerfiles are not fixed); `-` is not read here."""
    for name, path, kind in discover(paths):
        if path is None or kind != "manifest":
            continue
        yield read_input(name, path, max_bytes)


def read_input(name: str, path: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> InputFile:
    try:
        raw = read_regular(path, max_bytes)
    except NotReadable as err:
        return InputFile(name, path, None, error=str(err))
    except OSError as err:
        return InputFile(name, path, None, error=f"cannot read: {err.strerror or err}")
    if b"\x00" in raw[:8192]:
        return InputFile(name, path, None, error="binary file, not YAML or JSON")
    try:
        text, bom = decode(raw)
    except UnicodeDecodeError as err:
        line = raw[: err.start].count(b"\n") + 1
        return InputFile(name, path, None, error=f"line {line}: not UTF-8 text ({err.reason})")
    return InputFile(name, path, text, bom)


def fix_input(item: InputFile, lint: LintFunction, options: FixOptions) -> FileOutcome:
    """Fix one input's text (nothing is written here)."""
    if item.text is None:
        return FileOutcome(item.name, "", "", error=item.error)
    outcome = fix_text(item.name, item.text, lint, options)
    return FileOutcome(outcome.name, outcome.original, outcome.fixed, outcome.applied, outcome.remaining,
                       outcome.skipped, outcome.error, outcome.passes, outcome.converged, item.bom)


def write_outcome(item: InputFile, outcome: FileOutcome) -> bool:
    """Write a changed, error-free outcome back to its file; True when the file was rewritten."""
    if item.path is None or outcome.error is not None or not outcome.changed:
        return False
    write_atomic(item.path, encode(outcome.fixed, item.bom))
    return True
