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
                yield t.name, _Tensor(np.frombuffer(data[t.start:t.end], dtype=np.float16))


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
