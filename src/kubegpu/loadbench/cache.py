"""The page cache of a file: how much of it is resident (mincore), and dropping it (posix_fadvise DONTNEED).

Linux semantics (mm/fadvise.c, mm/mincore.c): DONTNEED drops clean, unmapped pages only, so a file is fsynced
first and nothing of it may stay mapped; mincore reports per page whether it is in the page cache.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import mmap
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

_PAGE = mmap.PAGESIZE


@dataclass(frozen=True)
class Residency:
    """How many of a set of files' pages are in the page cache (None when mincore is unavailable)."""

    resident: int | None
    total: int

    @property
    def fraction(self) -> float | None:
        if self.resident is None:
            return None
        return self.resident / self.total if self.total else 0.0


def _libc() -> ctypes.CDLL | None:
    name = ctypes.util.find_library("c")
    try:
        return ctypes.CDLL(name or "libc.so.6", use_errno=True)
    except OSError:
        return None


def resident_pages(path: Path) -> int | None:
    """Pages of the file now in the page cache, via mincore(2) on a private mapping; None where it cannot tell."""
    libc = _libc()
    size = path.stat().st_size
    if libc is None or size == 0:
        return None if libc is None else 0
    pages = (size + _PAGE - 1) // _PAGE
    vector = (ctypes.c_ubyte * pages)()
    with path.open("rb") as handle, mmap.mmap(handle.fileno(), size, access=mmap.ACCESS_COPY) as mapped:
        anchor = ctypes.c_char.from_buffer(mapped)  # an address for mincore; no page is touched
        try:
            libc.mincore.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_ubyte))
            result = libc.mincore(ctypes.addressof(anchor), ctypes.c_size_t(size), vector)
        finally:
            del anchor
    if result != 0:
        return None
    return sum(byte & 1 for byte in bytes(vector))


def residency(paths: Iterable[Path]) -> Residency:
    resident: int | None = 0
    total = 0
    for path in paths:
        total += (path.stat().st_size + _PAGE - 1) // _PAGE
        pages = resident_pages(path)
        resident = None if pages is None or resident is None else resident + pages
    return Residency(resident, total)


def evict(paths: Iterable[Path]) -> None:
    """Ask the kernel to drop the files' pages from the page cache (best effort; check with `residency`)."""
    for path in paths:
        fd = os.open(path, os.O_RDONLY)
        try:
            with contextlib.suppress(OSError):  # dirty pages are not dropped: write them back first
                os.fdatasync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)
