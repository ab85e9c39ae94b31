"""The weight loaders a serving pod can use, each reading every tensor of the shards into process memory.

- read: plain buffered preads of 16 MiB chunks, spread over the threads (the Run:ai streamer's pattern);
- mmap: the files mapped and every tensor copied out, so each page is faulted in (safetensors' default path);
- safetensors: the library's `safe_open(...).get_tensor` (0.8), tensors spread over the threads;
- runai-model-streamer (0.17, `SafetensorsStreamer`, concurrency from RUNAI_STREAMER_CONCURRENCY) and
  fastsafetensors (0.5, `SafeTensorsFileLoader(SingleGroup(), "cpu", nogds=True, max_threads=N)`), when installed.
"""

from __future__ import annotations

import importlib.util
import mmap
import os
import resource
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from kubegpu.loadbench.shards import Shard

CHUNK = 16 << 20
Progress = Callable[[int], None]


@dataclass(frozen=True)
class Loaded:
    """What one load did: bytes delivered and page faults taken (minor + major, the whole process)."""

    bytes: int
    faults: int


class Loader(Protocol):
    name: str

    def unavailable(self, shards: Sequence[Shard]) -> str | None:
        """Why this loader cannot run here (a missing package), or None."""

    def load(self, shards: Sequence[Shard], threads: int, progress: Progress | None, deadline: float | None) -> int:
        """Read every tensor (or, for a loader that can stop, those read by `deadline`); the bytes delivered."""

    @property
    def stoppable(self) -> bool:
        """Whether `load` honours a deadline (the loaders driven by our own threads do)."""


def _faults() -> int:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_minflt + usage.ru_majflt


def measure(
    loader: Loader,
    shards: Sequence[Shard],
    threads: int,
    progress: Progress | None = None,
    deadline: float | None = None,
) -> Loaded:
    before = _faults()
    done = loader.load(shards, threads, progress, deadline)
    return Loaded(done, _faults() - before)


def _run_pool(
    threads: int, units: Sequence[Any], work: Callable[[Any, dict[str, Any]], int], deadline: float | None = None
) -> int:
    """Run `work(unit, state)` over the units with `threads` threads, each with its own state; total bytes.

    No unit is started after `deadline` (time.perf_counter seconds).
    """
    lock = threading.Lock()
    position = [0]
    total = [0]
    errors: list[BaseException] = []

    def worker() -> None:
        state: dict[str, Any] = {}
        done = 0
        try:
            while not errors:
                with lock:
                    if position[0] >= len(units) or (deadline is not None and time.perf_counter() > deadline):
                        break
                    unit = units[position[0]]
                    position[0] += 1
                done += work(unit, state)
        except BaseException as err:  # re-raised in the caller's thread
            errors.append(err)
        finally:
            with ExitStack() as stack:
                for value in state.values():
                    if hasattr(value, "close"):
                        stack.callback(value.close)
            with lock:
                total[0] += done

    pool = [threading.Thread(target=worker, daemon=True) for _ in range(max(1, threads))]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    if errors:
        raise errors[0]
    return total[0]


def _chunks(shards: Sequence[Shard]) -> list[tuple[Path, int, int]]:
    """(file, offset, length) pieces of at most CHUNK bytes covering every tensor, interleaved across files."""
    per_file = [[(s.path, off, min(CHUNK, s.size - off)) for off in range(s.data_start, s.size, CHUNK)] for s in shards]
    out: list[tuple[Path, int, int]] = []
    for k in range(max((len(p) for p in per_file), default=0)):
        out.extend(p[k] for p in per_file if k < len(p))
    return out


class ReadLoader:
    stoppable = True
    name = "read"

    def unavailable(self, shards: Sequence[Shard]) -> str | None:
        return None

    def load(self, shards: Sequence[Shard], threads: int, progress: Progress | None, deadline: float | None) -> int:
        def work(unit: tuple[Path, int, int], state: dict[str, Any]) -> int:
            path, offset, length = unit
            key = str(path)
            if key not in state:
                state[key] = _Fd(path)
            if "_buffer" not in state:  # one buffer per thread, reused for every chunk
                state["_buffer"] = bytearray(CHUNK)
            buffer: bytearray = state["_buffer"]
            got = os.preadv(state[key].fd, [memoryview(buffer)[:length]], offset)
            if progress is not None:
                progress(got)
            return got

        return _run_pool(threads, _chunks(shards), work, deadline)


class _Fd:
    def __init__(self, path: Path) -> None:
        self.fd = os.open(path, os.O_RDONLY)

    def close(self) -> None:
        os.close(self.fd)


class MmapLoader:
    stoppable = True
    name = "mmap"

    def unavailable(self, shards: Sequence[Shard]) -> str | None:
        return None

    def load(self, shards: Sequence[Shard], threads: int, progress: Progress | None, deadline: float | None) -> int:
        with ExitStack() as stack:
            maps: dict[Path, np.ndarray[Any, np.dtype[np.uint8]]] = {}
            for shard in shards:
                handle = stack.enter_context(shard.path.open("rb"))
                mapped = stack.enter_context(mmap.mmap(handle.fileno(), shard.size, access=mmap.ACCESS_READ))
                maps[shard.path] = np.frombuffer(mapped, dtype=np.uint8)
                stack.callback(maps.pop, shard.path)  # views go before their map closes

            def work(unit: tuple[Path, int, int], state: dict[str, Any]) -> int:
                path, offset, length = unit
                if "_scratch" not in state:  # one buffer per thread, reused for every chunk
                    state["_scratch"] = np.empty(CHUNK, dtype=np.uint8)
                scratch = state["_scratch"]
                np.copyto(scratch[:length], maps[path][offset : offset + length])
                if progress is not None:
                    progress(length)
                return length

            return _run_pool(threads, _chunks(shards), work, deadline)


class SafetensorsLoader:
    stoppable = True
    name = "safetensors"

    def unavailable(self, shards: Sequence[Shard]) -> str | None:
        if importlib.util.find_spec("safetensors") is None:
            return "the safetensors package is not installed (pip install 'kubegpu[loadbench]')"
        if self._framework(shards) is None:
            return "these shards hold dtypes numpy cannot represent (e.g. BF16) and torch is not installed"
        return None

    @staticmethod
    def _framework(shards: Sequence[Shard]) -> str | None:
        if importlib.util.find_spec("torch") is not None:
            return "pt"
        numpy_dtypes = {"BOOL", "U8", "I8", "I16", "U16", "F16", "I32", "U32", "F32", "I64", "U64", "F64"}
        if all(t.dtype in numpy_dtypes for s in shards for t in s.tensors):
            return "numpy"
        return None

    def load(self, shards: Sequence[Shard], threads: int, progress: Progress | None, deadline: float | None) -> int:
        from safetensors import safe_open

        framework = self._framework(shards) or "numpy"
        units = [(s.path, t.name, t.nbytes) for s in shards for t in s.tensors]

        def work(unit: tuple[Path, str, int], state: dict[str, Any]) -> int:
            path, name, nbytes = unit
            key = str(path)
            if key not in state:
                state[key] = _Opened(safe_open(key, framework=framework))
            tensor = state[key].handle.get_tensor(name)
            del tensor
            if progress is not None:
                progress(nbytes)
            return nbytes

        return _run_pool(threads, units, work, deadline)


class _Opened:
    def __init__(self, context: Any) -> None:
        self._context = context
        self.handle = context.__enter__()

    def close(self) -> None:
        self._context.__exit__(None, None, None)


@contextmanager
def _env(name: str, value: str) -> Iterator[None]:
    old = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = old


class RunaiLoader:
    stoppable = False
    name = "runai-model-streamer"

    def unavailable(self, shards: Sequence[Shard]) -> str | None:
        if importlib.util.find_spec("runai_model_streamer") is None:
            return "runai-model-streamer is not installed (it needs torch; pip install runai-model-streamer)"
        return None

    def load(self, shards: Sequence[Shard], threads: int, progress: Progress | None, deadline: float | None) -> int:
        from runai_model_streamer import SafetensorsStreamer

        done = 0
        with _env("RUNAI_STREAMER_CONCURRENCY", str(threads)), SafetensorsStreamer() as streamer:
            streamer.stream_files([str(s.path) for s in shards])
            for _, tensor in streamer.get_tensors():
                size = int(tensor.numel()) * int(tensor.element_size())
                done += size
                if progress is not None:
                    progress(size)
        return done


class FastsafetensorsLoader:
    stoppable = False
    name = "fastsafetensors"

    def unavailable(self, shards: Sequence[Shard]) -> str | None:
        if importlib.util.find_spec("fastsafetensors") is None:
            return "fastsafetensors is not installed (it needs torch; pip install fastsafetensors)"
        return None

    def load(self, shards: Sequence[Shard], threads: int, progress: Progress | None, deadline: float | None) -> int:
        from fastsafetensors import SafeTensorsFileLoader, SingleGroup

        loader = SafeTensorsFileLoader(SingleGroup(), "cpu", nogds=True, max_threads=threads)
        done = 0
        try:
            loader.add_filenames({0: [str(s.path) for s in shards]})
            buffers = loader.copy_files_to_device()
            try:
                for shard in shards:
                    for tensor_info in shard.tensors:
                        tensor = buffers.get_tensor(tensor_name=tensor_info.name)
                        done += int(tensor.numel()) * int(tensor.element_size())
                        if progress is not None:
                            progress(tensor_info.nbytes)
            finally:
                buffers.close()
        finally:
            loader.close()
        return done


def all_loaders() -> tuple[Loader, ...]:
    return (ReadLoader(), MmapLoader(), SafetensorsLoader(), RunaiLoader(), FastsafetensorsLoader())
