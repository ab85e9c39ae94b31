"""Read inputs for fixing (keeping a BOM) and write results atomically (kubegpu.manifests.atomic: temp file,
fsync, rename, same mode); a failed write leaves the original file as it was.

Right before the rename the file must still be what was read (size, mtime, SHA-256), else it is left alone.
Temp files are named `.NAME.PID.RANDOM.kubegpu.tmp`; those of a process that is gone (killed mid-write) are
removed by the next run in that folder.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from kubegpu.errors import InputError
from kubegpu.fix.engine import fix_text
from kubegpu.fix.model import FileOutcome, FixOptions
from kubegpu.fix.protocols import LintFunction
from kubegpu.manifests import NotReadable, discover, read_regular_stat
from kubegpu.manifests.atomic import TEMP_SUFFIX, write_atomic

BOM = "\ufeff"
DEFAULT_MAX_BYTES = 20 * 1024 * 1024
_TEMP_NAME = re.compile(r"^\..+\.(\d+)\.[^.]+" + re.escape(TEMP_SUFFIX) + "$")


@dataclass(frozen=True)
class Stamp:
    """What a file was when read: size, modification time and content hash."""

    size: int
    mtime_ns: int
    sha256: str


@dataclass(frozen=True)
class InputFile:
    """A manifest to fix: its display name, its path and its text (without BOM), or why it cannot be read."""

    name: str
    path: Path | None
    text: str | None
    bom: bool = False
    error: str | None = None
    stamp: Stamp | None = None


class ChangedSinceRead(InputError):
    """The file changed on disk between reading and writing: it is left as it is now."""


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
        raw, info = read_regular_stat(path, max_bytes)
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
    return InputFile(name, path, text, bom, stamp=Stamp(len(raw), info.st_mtime_ns, hashlib.sha256(raw).hexdigest()))


def fix_input(item: InputFile, lint: LintFunction, options: FixOptions) -> FileOutcome:
    """Fix one input's text (nothing is written here)."""
    if item.text is None:
        return FileOutcome(item.name, "", "", error=item.error)
    outcome = fix_text(item.name, item.text, lint, options)
    return FileOutcome(
        outcome.name,
        outcome.original,
        outcome.fixed,
        outcome.applied,
        outcome.remaining,
        outcome.skipped,
        outcome.error,
        outcome.passes,
        outcome.converged,
        item.bom,
    )


def write_outcome(item: InputFile, outcome: FileOutcome) -> bool:
    """Write a changed, error-free outcome back to its file; True when the file was rewritten.

    ChangedSinceRead (nothing written) when the file is no longer what was read."""
    if item.path is None or outcome.error is not None or not outcome.changed:
        return False
    stamp = item.stamp
    write_atomic(
        item.path,
        encode(outcome.fixed, item.bom),
        before_replace=None if stamp is None else lambda target: _check_unchanged(target, stamp),
    )
    return True


def _check_unchanged(path: Path, stamp: Stamp) -> None:
    """Raise ChangedSinceRead unless `path` still has the size, mtime and content it had when read."""
    try:
        raw, info = read_regular_stat(path, stamp.size)
    except OSError as err:  # grew past what was read, was replaced by something else, or is gone
        raise ChangedSinceRead(
            "changed since it was read (another program wrote it); not fixed, run kubegpu fix again", file=str(path)
        ) from err
    if (len(raw), info.st_mtime_ns, hashlib.sha256(raw).hexdigest()) != (stamp.size, stamp.mtime_ns, stamp.sha256):
        raise ChangedSinceRead(
            "changed since it was read (another program wrote it); not fixed, run kubegpu fix again", file=str(path)
        )


def remove_leftovers(folder: Path) -> list[Path]:
    """Delete temp files of earlier runs in `folder` whose process is gone (killed mid-write); the removed ones."""
    removed: list[Path] = []
    try:
        names = os.listdir(folder)
    except OSError:
        return removed
    for name in names:
        match = _TEMP_NAME.match(name)
        if match is None or _alive(int(match.group(1))):
            continue
        with contextlib.suppress(OSError):
            (folder / name).unlink()
            removed.append(folder / name)
    return removed


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return pid > 0  # someone else's live process (or a pid no process can have)
    return True
