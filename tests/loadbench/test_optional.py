"""The optional stages and loaders where their packages are absent: stand-ins with the packages' documented API
(torch without CUDA, runai_model_streamer's SafetensorsStreamer) check our side of the glue, and the real
packages are used instead wherever they are installed."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest

from kubegpu.loadbench.gpu import host_to_device
from kubegpu.loadbench.loaders import RunaiLoader, measure
from kubegpu.loadbench.shards import Shard, read_shard


def test_gpu_stage_is_skipped_with_a_reason_without_cuda(monkeypatch: pytest.MonkeyPatch) -> None:
    if importlib.util.find_spec("torch") is None:
        assert host_to_device().skipped == "torch is not installed"
        fake = types.ModuleType("torch")
        fake.cuda = types.SimpleNamespace(is_available=lambda: False)  # type: ignore[attr-defined]
        fake.__spec__ = importlib.machinery.ModuleSpec("torch", None)
        monkeypatch.setitem(sys.modules, "torch", fake)
    else:
        torch = pytest.importorskip("torch")
        if torch.cuda.is_available():
            stage = host_to_device(64 << 20, 2)
            assert stage.skipped is None and stage.pinned_gbps and stage.pageable_gbps
            return
    stage = host_to_device()
    assert stage.skipped == "torch finds no CUDA device" and stage.as_dict()["pinned_gbps"] is None


class _Tensor:
    def __init__(self, array: np.ndarray[Any, Any]) -> None:
        self.array = array

    def numel(self) -> int:
        return int(self.array.size)

    def element_size(self) -> int:
        return int(self.array.itemsize)


class _Streamer:
    """SafetensorsStreamer's documented surface: a context manager, stream_files(paths), get_tensors()."""

    seen_concurrency: ClassVar[list[str]] = []

    def __enter__(self) -> _Streamer:
        self.paths: list[str] = []
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def stream_files(self, paths: list[str]) -> None:
        _Streamer.seen_concurrency.append(os.environ["RUNAI_STREAMER_CONCURRENCY"])
        self.paths = paths

    def get_tensors(self) -> Iterator[tuple[str, _Tensor]]:
        for path in self.paths:
            shard = read_shard(Path(path))
            data = Path(path).read_bytes()
            for t in shard.tensors:
                yield t.name, _Tensor(np.frombuffer(data[t.start : t.end], dtype=np.float16))


def test_runai_glue(model: list[Shard], monkeypatch: pytest.MonkeyPatch) -> None:
    if importlib.util.find_spec("runai_model_streamer") is None:
        fake = types.ModuleType("runai_model_streamer")
        fake.SafetensorsStreamer = _Streamer  # type: ignore[attr-defined]
        fake.__spec__ = importlib.machinery.ModuleSpec("runai_model_streamer", None)
        monkeypatch.setitem(sys.modules, "runai_model_streamer", fake)
    monkeypatch.delenv("RUNAI_STREAMER_CONCURRENCY", raising=False)
    loader = RunaiLoader()
    assert loader.unavailable(model) is None
    assert measure(loader, model, 8).bytes == sum(s.tensor_bytes for s in model)
    assert "RUNAI_STREAMER_CONCURRENCY" not in os.environ  # restored
    if sys.modules["runai_model_streamer"].SafetensorsStreamer is _Streamer:
        assert _Streamer.seen_concurrency[-1] == "8"


class _Buffers:
    def __init__(self, files: list[str]) -> None:
        self.arrays = {}
        for path in files:
            data = Path(path).read_bytes()
            for t in read_shard(Path(path)).tensors:
                self.arrays[t.name] = np.frombuffer(data[t.start : t.end], dtype=np.float16)
        self.closed = False

    def get_tensor(self, tensor_name: str) -> _Tensor:
        return _Tensor(self.arrays[tensor_name])

    def close(self) -> None:
        self.closed = True


class _FileLoader:
    """SafeTensorsFileLoader's surface in fastsafetensors 0.5: (pg, device, nogds=, max_threads=), add_filenames,
    copy_files_to_device, close."""

    made: ClassVar[list[_FileLoader]] = []

    def __init__(self, pg: object, device: str, nogds: bool = False, max_threads: int = 16) -> None:
        self.args = (device, nogds, max_threads)
        self.files: list[str] = []
        self.closed = False
        _FileLoader.made.append(self)

    def add_filenames(self, filenames: dict[int, list[str]]) -> None:
        self.files = filenames[0]

    def copy_files_to_device(self) -> _Buffers:
        return _Buffers(self.files)

    def close(self) -> None:
        self.closed = True


def test_fastsafetensors_glue(model: list[Shard], monkeypatch: pytest.MonkeyPatch) -> None:
    from kubegpu.loadbench.loaders import FastsafetensorsLoader

    fake_module = importlib.util.find_spec("fastsafetensors") is None
    if fake_module:
        fake = types.ModuleType("fastsafetensors")
        fake.SafeTensorsFileLoader = _FileLoader  # type: ignore[attr-defined]
        fake.SingleGroup = object  # type: ignore[attr-defined]
        fake.__spec__ = importlib.machinery.ModuleSpec("fastsafetensors", None)
        monkeypatch.setitem(sys.modules, "fastsafetensors", fake)
    loader = FastsafetensorsLoader()
    assert loader.unavailable(model) is None
    assert measure(loader, model, 4).bytes == sum(s.tensor_bytes for s in model)
    if fake_module:
        assert _FileLoader.made[-1].args == ("cpu", True, 4) and _FileLoader.made[-1].closed
