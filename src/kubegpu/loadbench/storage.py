"""The storage limit: how fast the device behind the files delivers them to parallel, large, direct reads.

This is what fio reports for `rw=read, direct=1` with several jobs: O_DIRECT bypasses the page cache (Linux
open(2): buffer, offset and length aligned to the logical block size, here page-aligned buffers from anonymous
mmap and 4 MiB blocks). Where the filesystem refuses O_DIRECT (tmpfs, some FUSE and network mounts), the files'
page cache is dropped and plain reads are used instead, and the result says so.
"""

from __future__ import annotations

import errno
import mmap
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from kubegpu.loadbench import cache

BLOCK = 4 << 20
DIRECT_THREADS = 16


@dataclass(frozen=True)
class StorageLimit:
    """Bytes read, seconds and the rate of one parallel large-block read of every file."""

    bytes: int
    seconds: float
    threads: int
    block: int
    direct: bool
    note: str = ""

    @property
    def gbps(self) -> float:
        return self.bytes / self.seconds / 1e9 if self.seconds > 0 else 0.0


def _blocks(sizes: Sequence[int], block: int) -> list[tuple[int, int]]:
    """(file index, offset) of every block, interleaved across files so all of them are read at once."""
    per_file = [[(i, off) for off in range(0, size, block)] for i, size in enumerate(sizes)]
    out: list[tuple[int, int]] = []
    depth = max((len(b) for b in per_file), default=0)
    for k in range(depth):
        out.extend(b[k] for b in per_file if k < len(b))
    return out


def _open_all(paths: Sequence[Path], direct: bool) -> list[int]:
    flags = os.O_RDONLY | (os.O_DIRECT if direct else 0)
    fds: list[int] = []
    try:
        for path in paths:
            fds.append(os.open(path, flags))
    except OSError:
        for fd in fds:
            os.close(fd)
        raise
    return fds


def parallel_read(
    paths: Sequence[Path],
    threads: int = DIRECT_THREADS,
    block: int = BLOCK,
    direct: bool = True,
    progress: Callable[[int], None] | None = None,
    deadline: float | None = None,
) -> tuple[int, float]:
    """Read every byte of the files with `threads` threads of `block`-sized preads; (bytes, seconds).

    No block is started after `deadline` (time.perf_counter seconds): the rate of what was read stands.
    Raises OSError(EINVAL) when the filesystem refuses O_DIRECT.
    """
    sizes = [p.stat().st_size for p in paths]
    work = _blocks(sizes, block)
    fds = _open_all(paths, direct)
    lock = threading.Lock()
    position = [0]
    total = [0]
    failure: list[OSError] = []

    def worker() -> None:
        buffer = mmap.mmap(-1, block)  # page-aligned, as O_DIRECT needs
        view = memoryview(buffer)
        done = 0
        try:
            while not failure:
                with lock:
                    if position[0] >= len(work) or (deadline is not None and time.perf_counter() > deadline):
                        break
                    index, offset = work[position[0]]
                    position[0] += 1
                got = os.preadv(fds[index], [view], offset)
                done += got
                if progress is not None:
                    progress(got)
        except OSError as err:
            failure.append(err)
        finally:
            view.release()
            buffer.close()
            with lock:
                total[0] += done

    pool = [threading.Thread(target=worker, daemon=True) for _ in range(max(1, threads))]
    start = time.perf_counter()
    try:
        for thread in pool:
            thread.start()
        for thread in pool:
            thread.join()
    finally:
        seconds = time.perf_counter() - start
        for fd in fds:
            os.close(fd)
    if failure:
        raise failure[0]
    return total[0], seconds


def storage_limit(
    paths: Sequence[Path],
    threads: int = DIRECT_THREADS,
    block: int = BLOCK,
    progress: Callable[[int], None] | None = None,
    deadline: float | None = None,
) -> StorageLimit:
    """The storage limit of the files: O_DIRECT where allowed, else buffered reads of an evicted cache."""
    try:
        done, seconds = parallel_read(paths, threads, block, True, progress, deadline)
        return StorageLimit(done, seconds, threads, block, True)
    except OSError as err:
        if err.errno not in (errno.EINVAL, errno.EOPNOTSUPP, errno.ENOTSUP):
            raise
        reason = os.strerror(err.errno)
    cache.evict(paths)
    left = cache.residency(paths)
    done, seconds = parallel_read(paths, threads, block, False, progress, deadline)
    note = f"the filesystem refused O_DIRECT ({reason}): buffered reads after dropping the files' page cache"
    if left.fraction is not None and left.fraction > 0.05:
        note += f", of which {left.fraction:.0%} stayed cached (the figure is then too high)"
    return StorageLimit(done, seconds, threads, block, False, note)
