"""Page-cache eviction, the storage-limit read and every installed loader on a small synthetic model."""

from __future__ import annotations

import errno
import os
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from kubegpu.loadbench import cache, storage
from kubegpu.loadbench.loaders import Loader, all_loaders, measure
from kubegpu.loadbench.shards import Shard


def _evictable(paths: Sequence[Path]) -> None:
    cache.evict(paths)
    state = cache.residency(paths)
    if state.resident is None:
        pytest.skip("mincore is unavailable here")
    if state.fraction and state.fraction > 0.05:
        pytest.skip(f"this filesystem keeps {state.fraction:.0%} cached after posix_fadvise(DONTNEED) (tmpfs?)")


def test_evict_then_read_fills_the_cache(paths: list[Path]) -> None:
    _evictable(paths)
    assert cache.residency(paths).resident == 0
    for path in paths:
        path.read_bytes()
    state = cache.residency(paths)
    assert state.resident == state.total and state.fraction == 1.0


@pytest.mark.parametrize("direct", [True, False])
def test_parallel_read_reads_every_byte(paths: list[Path], direct: bool) -> None:
    try:
        done, seconds = storage.parallel_read(paths, threads=3, block=1 << 20, direct=direct)
    except OSError as err:
        if direct and err.errno == errno.EINVAL:
            pytest.skip("this filesystem refuses O_DIRECT")
        raise
    assert done == sum(p.stat().st_size for p in paths) and seconds > 0


def test_parallel_read_stops_at_the_deadline(paths: list[Path]) -> None:
    done, _ = storage.parallel_read(paths, threads=2, block=1 << 20, direct=False, deadline=time.perf_counter() - 1)
    assert done == 0


def test_storage_limit_falls_back_when_o_direct_is_refused(paths: list[Path], monkeypatch: pytest.MonkeyPatch) -> None:
    real_open = os.open

    def refuse_direct(path: str, flags: int, *args: int) -> int:
        if flags & os.O_DIRECT:
            raise OSError(errno.EINVAL, os.strerror(errno.EINVAL), path)
        return real_open(path, flags, *args)

    monkeypatch.setattr(storage.os, "open", refuse_direct)
    limit = storage.storage_limit(paths, threads=2)
    assert not limit.direct and "refused O_DIRECT" in limit.note
    assert limit.bytes == sum(p.stat().st_size for p in paths) and limit.gbps > 0


def _available(model: list[Shard]) -> list[Loader]:
    return [loader for loader in all_loaders() if loader.unavailable(model) is None]


@pytest.mark.parametrize("threads", [1, 3])
def test_every_installed_loader_delivers_every_tensor(model: list[Shard], threads: int) -> None:
    loaders = _available(model)
    assert {"read", "mmap"} <= {loader.name for loader in loaders}
    for loader in loaders:
        seen: list[int] = []
        loaded = measure(loader, model, threads, seen.append)
        expected = sum(s.tensor_bytes for s in model)
        assert loaded.bytes == expected, loader.name
        assert sum(seen) == expected, loader.name


def test_mmap_faults_pages_in_on_a_cold_cache(model: list[Shard], paths: list[Path]) -> None:
    _evictable(paths)
    mmap_loader = next(loader for loader in all_loaders() if loader.name == "mmap")
    loaded = measure(mmap_loader, model, 1)
    pages = sum(s.tensor_bytes for s in model) // os.sysconf("SC_PAGE_SIZE")
    assert loaded.faults >= pages // 64  # one fault maps a batch of pages (fault-around), never none


def test_stoppable_loaders_honour_a_past_deadline(model: list[Shard]) -> None:
    for loader in _available(model):
        if loader.stoppable:
            assert measure(loader, model, 2, deadline=time.perf_counter() - 1).bytes == 0


def test_safetensors_loader_is_tested_where_installed(model: list[Shard]) -> None:
    pytest.importorskip("safetensors")
    loader = next(loader for loader in all_loaders() if loader.name == "safetensors")
    assert loader.unavailable(model) is None
