"""Read inputs for fixing (keeping a BOM) and write results atomically (kubegpu.manifests.atomic: temp file,
fsync, rename, same mode); a failed write leaves the original file as it was.

Only regular files inside the root (each path named on the command line) are fixed: a symbolic link, a file
with several hard links and a read-only file are refused with the reason, in every mode (--check and --diff
say what fix would do); a link to a regular file inside the same root is fixed under that file's own name.
Right before the rename the file must still be what was read (the same inode; size, mtime, SHA-256), else it
is left alone. Temp files are named `.NAME.PID.RANDOM.kubegpu.tmp`; those of a process that is gone (killed
mid-write) are removed by the next run in that folder.
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
from kubegpu.manifests.atomic import TEMP_SUFFIX, editable, replace_in_place
from kubegpu.manifests.sources import WalkReport

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
    status: os.stat_result | None = None  # the file's own status when read: what is replaced when written


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


def read_inputs(
    paths: Sequence[str], max_bytes: int = DEFAULT_MAX_BYTES, seen: set[tuple[int, int]] | None = None
) -> Iterator[InputFile]:
    """Manifest files named or found under directories (Dockerfiles are not fixed); `-` is not read here.

    Each path is a root: what is found under it is fixed only if it is a regular file inside it. A link found
    there that points to a regular file inside the same root stands for that file (fixed once, under its own
    name); any other link is refused with the walk's reason, and so is a named path that is a link. `seen`
    holds the (device, inode) of the files already read, across calls.
    """
    seen = set() if seen is None else seen
    for root in paths:
        if root == "-":
            continue
        walk = WalkReport()
        real_root = Path(root).resolve()
        for name, path, kind in discover([root], report=walk):
            if path is None or kind != "manifest":
                continue
            if os.path.islink(path) and Path(root).is_dir():  # to a file inside the root: fixed under its own name
                name = os.path.join(root, path.resolve().relative_to(real_root))
                path = Path(name)
            item = read_input(name, path, max_bytes)
            if item.status is not None:
                key = (item.status.st_dev, item.status.st_ino)
                if key in seen:
                    continue
                seen.add(key)
            yield item
        for name, why, what in walk.skipped:  # the walk followed no link out of the root: each is refused
            if what == "link":
                yield InputFile(name, Path(name), None, error=why)


def read_input(name: str, path: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> InputFile:
    """The file to fix, or why it is not fixed: refused as atomic.editable says, unreadable, binary, not UTF-8."""
    try:
        status = editable(path)
    except InputError as err:
        return InputFile(name, path, None, error=err.message)
    try:
        raw, info = read_regular_stat(path, max_bytes)
    except NotReadable as err:
        return InputFile(name, path, None, error=str(err))
    except OSError as err:
        return InputFile(name, path, None, error=f"cannot read: {err.strerror or err}")
    if (info.st_dev, info.st_ino) != (status.st_dev, status.st_ino):  # swapped between the two looks
        return InputFile(name, path, None, error="was changed while it was read; run kubegpu fix again")
    if b"\x00" in raw[:8192]:
        return InputFile(name, path, None, error="binary file, not YAML or JSON")
    try:
        text, bom = decode(raw)
    except UnicodeDecodeError as err:
        line = raw[: err.start].count(b"\n") + 1
        return InputFile(name, path, None, error=f"line {line}: not UTF-8 text ({err.reason})")
    stamp = Stamp(len(raw), info.st_mtime_ns, hashlib.sha256(raw).hexdigest())
    return InputFile(name, path, text, bom, stamp=stamp, status=status)


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
    stamp, status = item.stamp, item.status
    if status is None:  # an input that was not read from a file cannot be written back
        raise InputError("was not read from a file: not written", file=item.name)
    replace_in_place(
        item.path,
        encode(outcome.fixed, item.bom),
        status,
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
