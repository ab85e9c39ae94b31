"""Read a regular file with a size limit: never a FIFO, a device or a socket, never more than the limit.

Every reader of user files (inputs, configuration, .gitignore, charts) reads through here.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path


class NotReadable(OSError):
    """A path that is not read: not a regular file (a FIFO, a device, a socket), or over the size limit."""


def _kind_of(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "is a directory"
    if stat.S_ISFIFO(mode):
        return "is a named pipe (FIFO), not a regular file"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "is a device, not a regular file"
    if stat.S_ISSOCK(mode):
        return "is a socket, not a regular file"
    return "is not a regular file"


def read_regular(path: Path, max_bytes: int) -> bytes:
    """The bytes of a regular file (links followed), at most `max_bytes`; NotReadable (an OSError) otherwise."""
    return read_regular_stat(path, max_bytes)[0]


def read_regular_stat(path: Path, max_bytes: int) -> tuple[bytes, os.stat_result]:
    """The bytes of a regular file (links followed), at most `max_bytes`; NotReadable (an OSError) otherwise.

    The file is opened without blocking (a FIFO would wait for a writer forever) and checked with fstat on
    that descriptor, so a link swapped in between cannot send us to /dev/zero; the limit applies to the
    bytes read, whatever stat said.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotReadable(_kind_of(info.st_mode))
        if info.st_size > max_bytes:
            raise NotReadable(
                f"file is {info.st_size} bytes, over the {max_bytes}-byte limit (raise it with --max-file-size)"
            )
        chunks: list[bytes] = []
        size = 0
        while True:
            chunk = os.read(fd, min(1 << 20, max_bytes + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if size > max_bytes:
                raise NotReadable(f"input is over the {max_bytes}-byte limit (raise it with --max-file-size)")
        return b"".join(chunks), info
    finally:
        os.close(fd)
