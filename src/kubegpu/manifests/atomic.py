"""Write a file atomically: a temp file in the same folder, fsync, rename; the one writer of every command.

A failed write leaves the old file as it was. A replaced file keeps its permission bits (and owner when
allowed); a new file gets the usual mode (0666 less the umask) and its folder is created. `replace_in_place`
rewrites a file that was read (what `fix` does): only a regular file with one link that its mode lets be
written, never through a symbolic link, and only while its folder entry is still the file that was read.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path

from kubegpu.errors import InputError
from kubegpu.manifests.regular_file import _kind_of  # a FIFO, a device...: the words the readers use

TEMP_SUFFIX = ".kubegpu.tmp"  # temp files are `.NAME.PID.RANDOM.kubegpu.tmp`: the PID tells a dead writer's
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
_EFFECTIVE_IDS = os.access in os.supports_effective_ids


def write_atomic(path: Path, data: bytes | str, before_replace: Callable[[Path], None] | None = None) -> None:
    """Replace or create `path` with `data` (str is written as UTF-8); InputError naming the file on failure.

    A link at `path` is followed (the command line named it). `before_replace(target)` runs once the new text is
    on disk, right before the rename; an exception from it (a KubegpuError: the file changed meanwhile) leaves
    the file as it is and removes the temp file.
    """
    target = path.resolve()
    try:
        info: os.stat_result | None = target.stat()
    except FileNotFoundError:
        info = None
    except OSError as err:
        raise InputError(f"cannot write: {err.strerror or err}", file=str(path)) from err
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise InputError(f"cannot write here: {err.strerror or err}", file=str(path)) from err
    _write(path, target.parent, target.name, data, info, before_replace, None)


def editable(path: Path) -> os.stat_result:
    """`path`'s own status (a link not followed) when `replace_in_place` may rewrite it, else InputError with
    the one-line reason: a symbolic link, not a regular file, more than one hard link, or read-only."""
    try:
        info = os.lstat(path)
    except OSError as err:
        raise InputError(f"cannot read: {err.strerror or err}", file=str(path)) from err
    problem = _refusal(info)
    # A rename replaces a file whatever its mode (only the folder's counts): the caller must be allowed to write
    # the file itself.
    if problem is None and not os.access(path, os.W_OK, effective_ids=_EFFECTIVE_IDS, follow_symlinks=False):
        problem = "is not writable by this user"
    if problem is not None:
        raise InputError(problem, file=str(path))
    return info


def _refusal(info: os.stat_result) -> str | None:
    """Why a file of this status is not rewritten in place, or None."""
    if stat.S_ISLNK(info.st_mode):
        return "is a symbolic link: written only as the file it points to, by that name"
    if not stat.S_ISREG(info.st_mode):
        return _kind_of(info.st_mode)
    if info.st_nlink > 1:
        return f"has {info.st_nlink} hard links: rewriting it would leave the other names with the old text"
    if not info.st_mode & 0o222:  # no write bit: read-only, for root too (who may write anything)
        return f"is read-only (mode {stat.filemode(info.st_mode)})"
    return None


def replace_in_place(
    path: Path, data: bytes | str, read: os.stat_result, before_replace: Callable[[Path], None] | None = None
) -> None:
    """Rewrite the existing file `path`, whose status was `read` when it was read, atomically, keeping its mode.

    The folder is opened once and the temp file, the last checks and the rename all go through that
    descriptor, so the name cannot be made to point elsewhere meanwhile: right before the rename, the folder's
    entry must still be the same regular file (device and inode) and pass `editable`, else InputError and
    nothing is written. The rename replaces the entry itself, never a link's target.
    """
    try:
        folder = os.open(path.parent, _DIR_FLAGS)
    except OSError as err:
        raise InputError(f"cannot write here: {err.strerror or err}", file=str(path)) from err
    try:

        def still_the_same(target: Path) -> None:
            try:
                now = os.stat(path.name, dir_fd=folder, follow_symlinks=False)
            except OSError as err:
                raise InputError(f"is gone or unreadable: {err.strerror or err}", file=str(path)) from err
            if (now.st_dev, now.st_ino) != (read.st_dev, read.st_ino):
                raise InputError("was replaced since it was read; run kubegpu fix again", file=str(path))
            problem = _refusal(now)
            if problem is not None:
                raise InputError(problem, file=str(path))
            if before_replace is not None:
                before_replace(target)

        _write(path, path.parent, path.name, data, read, still_the_same, folder)
    finally:
        os.close(folder)


def _write(
    path: Path,
    parent: Path,
    name: str,
    data: bytes | str,
    info: os.stat_result | None,
    before_replace: Callable[[Path], None] | None,
    folder: int | None,
) -> None:
    """The temp file in `parent` (through the descriptor `folder` when given), its mode, then the rename."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    try:
        fd, tmp_name = tempfile.mkstemp(prefix=f".{name}.{os.getpid()}.", suffix=TEMP_SUFFIX, dir=parent)
    except OSError as err:
        raise InputError(f"cannot write here: {err.strerror or err}", file=str(path)) from err
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            if info is None:
                os.fchmod(handle.fileno(), 0o666 & ~_umask())
            else:
                os.fchmod(handle.fileno(), stat.S_IMODE(info.st_mode))
                with contextlib.suppress(OSError):
                    os.fchown(handle.fileno(), info.st_uid, info.st_gid)
            os.fsync(handle.fileno())
        if before_replace is not None:
            before_replace(parent / name)
        if folder is None:
            os.replace(tmp, parent / name)
        else:  # the temp file must be in that folder: if `parent` was swapped for another, this rename fails
            os.replace(tmp.name, name, src_dir_fd=folder, dst_dir_fd=folder)
    except InputError:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    except OSError as err:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise InputError(f"cannot write: {err.strerror or err}", file=str(path)) from err
    _fsync_dir(parent, folder)


def _umask() -> int:
    """The process umask (reading it means setting it; it is put straight back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _fsync_dir(parent: Path, folder: int | None) -> None:
    """Make the rename durable; some filesystems cannot open a directory, which is harmless here."""
    if folder is not None:
        with contextlib.suppress(OSError):
            os.fsync(folder)
        return
    try:
        fd = os.open(parent, os.O_RDONLY)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)
