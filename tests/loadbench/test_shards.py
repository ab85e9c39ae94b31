"""The safetensors reader and the synthetic shard writer, checked against each other and the safetensors library."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import pytest

from kubegpu.errors import InputError
from kubegpu.loadbench.shards import (
    SYNTHETIC_DTYPE,
    find_shards,
    pick_architecture,
    read_shard,
    synthetic_tensors,
    write_synthetic,
)


def test_synthetic_model_is_sharded_like_save_pretrained(tmp_path: Path) -> None:
    paths = write_synthetic(tmp_path, 12 << 20, shard_size=5 << 20)
    assert [p.name for p in paths] == [
        f"model-{i:05d}-of-{len(paths):05d}.safetensors" for i in range(1, len(paths) + 1)
    ]
    shards = find_shards([tmp_path])
    index = json.loads((tmp_path / "model.safetensors.index.json").read_text())
    assert index["metadata"]["total_size"] == sum(s.tensor_bytes for s in shards)
    assert set(index["weight_map"]) == {t.name for s in shards for t in s.tensors}
    for shard in shards:
        assert all(index["weight_map"][t.name] == shard.path.name for t in shard.tensors)
        assert shard.data_start % 8 == 0
    names = [t.name for s in shards for t in s.tensors]
    assert "model.layers.0.self_attn.q_proj.weight" in names and names[-1] == "model.norm.weight"


@pytest.mark.parametrize(
    ("size", "name"),
    [
        (8 << 20, "SmolLM2-135M"),  # too small for 4 layers of anything: the smallest
        (200 << 20, "Qwen2.5-0.5B"),
        (1 << 30, "Llama-3.2-1B"),
        (5 << 30, "Llama-3.1-8B"),
        (200 << 30, "Llama-3.1-70B"),
    ],
)
def test_architecture_grows_with_the_model(size: int, name: str) -> None:
    assert pick_architecture(size)[0] == name
    shapes = synthetic_tensors(size)
    total = sum(int(np.prod(shape)) * 2 for _, shape in shapes)
    assert total <= size or len(shapes) <= 11  # one layer at least
    assert total >= size * 0.5


def test_synthetic_shards_load_with_the_safetensors_library(tmp_path: Path) -> None:
    safetensors_numpy = pytest.importorskip("safetensors.numpy")
    write_synthetic(tmp_path, 3 << 20)
    [shard] = find_shards([tmp_path])
    loaded = safetensors_numpy.load_file(str(shard.path))
    assert {k: v.shape for k, v in loaded.items()} == {t.name: t.shape for t in shard.tensors}
    assert all(v.dtype == np.float16 for v in loaded.values()) and SYNTHETIC_DTYPE == "F16"


def test_reader_parses_a_file_written_by_the_safetensors_library(tmp_path: Path) -> None:
    safetensors_numpy = pytest.importorskip("safetensors.numpy")
    path = tmp_path / "a.safetensors"
    safetensors_numpy.save_file({"b": np.zeros((3, 5), np.float32), "a": np.ones(7, np.int64)}, str(path))
    shard = read_shard(path)
    assert {t.name: (t.dtype, t.shape, t.nbytes) for t in shard.tensors} == {
        "a": ("I64", (7,), 56),
        "b": ("F32", (3, 5), 60),
    }
    assert shard.tensor_bytes == shard.size - shard.data_start


def _file(tmp_path: Path, header: object, data: bytes = b"", raw: bytes | None = None) -> Path:
    body = raw if raw is not None else json.dumps(header).encode()
    path = tmp_path / "x.safetensors"
    path.write_bytes(struct.pack("<Q", len(body)) + body + data)
    return path


@pytest.mark.parametrize(
    ("header", "data", "raw", "message"),
    [
        (None, b"", b"{not json", "header is not JSON"),
        ([1, 2], b"", None, "not a JSON object"),
        ({"t": {"dtype": "Q9", "shape": [1], "data_offsets": [0, 1]}}, b"x", None, "unknown dtype"),
        ({"t": {"dtype": "U8", "shape": [2], "data_offsets": [0, 1]}}, b"x", None, "is 2 bytes"),
        ({"t": {"dtype": "U8", "shape": [1], "data_offsets": [1, 2]}}, b"xx", None, "holes or overlaps"),
        ({"t": {"dtype": "U8", "shape": [1], "data_offsets": [0, 1]}}, b"xx", None, "the file has"),
        ({"t": {"dtype": "U8", "shape": [4], "data_offsets": [0, 4]}}, b"xx", None, "past the end"),
        ({"t": {"dtype": "U8", "shape": "1", "data_offsets": [0, 1]}}, b"x", None, "shape must be"),
    ],
)
def test_broken_headers_are_one_line_errors(
    tmp_path: Path, header: object, data: bytes, raw: bytes | None, message: str
) -> None:
    path = _file(tmp_path, header, data, raw)
    with pytest.raises(InputError, match=message) as caught:
        read_shard(path)
    assert caught.value.file == str(path)


def test_short_and_oversized_headers(tmp_path: Path) -> None:
    short = tmp_path / "short.safetensors"
    short.write_bytes(b"\x01\x02")
    with pytest.raises(InputError, match="8-byte"):
        read_shard(short)
    huge = tmp_path / "huge.safetensors"
    huge.write_bytes(struct.pack("<Q", 10**12) + b"{}")
    with pytest.raises(InputError, match="does not fit"):
        read_shard(huge)


def test_find_shards_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"no \*\.safetensors"):
        find_shards([tmp_path])
    with pytest.raises(InputError, match="no such file"):
        find_shards([tmp_path / "missing"])
    with pytest.raises(InputError, match="at least 1 MiB"):
        write_synthetic(tmp_path, 1000)
