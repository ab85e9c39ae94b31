"""Write a file atomically: a temp file in the same folder, fsync, rename; the one writer of every command.

A failed write leaves the old file as it was. A replaced file keeps its permission bits (and owner when
allowed); a new file gets the usual mode (0666 less the umask) and its folder is created.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path

from kubegpu.errors import InputError

TEMP_SUFFIX = ".kubegpu.tmp"  # temp files are `.NAME.PID.RANDOM.kubegpu.tmp`: the PID tells a dead writer's


def write_atomic(path: Path, data: bytes | str, before_replace: Callable[[Path], None] | None = None) -> None:
    """Replace or create `path` with `data` (str is written as UTF-8); InputError naming the file on failure.

    `before_replace(target)` runs once the new text is on disk, right before the rename; an exception from it
    (a KubegpuError: the file changed meanwhile) leaves the file as it is and removes the temp file.
    """
    payload = data.encode("utf-8") if isinstance(data, str) else data
    target = path.resolve()
    try:
        info: os.stat_result | None = target.stat()
    except FileNotFoundError:
        info = None
    except OSError as err:
        raise InputError(f"cannot write: {err.strerror or err}", file=str(path)) from err
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.{os.getpid()}.", suffix=TEMP_SUFFIX, dir=target.parent)
    except OSError as err:
        raise InputError(f"cannot write here: {err.strerror or err}", file=str(path)) from err
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        if info is None:
            os.chmod(tmp, 0o666 & ~_umask())
        else:
            os.chmod(tmp, stat.S_IMODE(info.st_mode))
            with contextlib.suppress(OSError):
                os.chown(tmp, info.st_uid, info.st_gid)
        if before_replace is not None:
            before_replace(target)
        os.replace(tmp, target)
    except InputError:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    except OSError as err:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise InputError(f"cannot write: {err.strerror or err}", file=str(path)) from err
    _fsync_dir(target.parent)


def _umask() -> int:
    """The process umask (reading it means setting it; it is put straight back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _fsync_dir(folder: Path) -> None:
    """Make the rename durable; some filesystems cannot open a directory, which is harmless here."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)
