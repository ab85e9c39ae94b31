"""The safetensors file format: read a shard's header, find the shards of a model folder, write synthetic shards.

Follows the safetensors format (huggingface/safetensors, 0.8): an 8-byte little-endian header length N, N bytes of
JSON (`dtype`, `shape`, `data_offsets` per tensor, optional `__metadata__` string map, at most 100 MB), then one
contiguous byte buffer that the tensors tile without holes; shard names and the index file follow transformers'
`save_pretrained` (`model-00001-of-00004.safetensors`, `model.safetensors.index.json`).
"""

from __future__ import annotations

import json
import math
import os
import struct
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from kubegpu.errors import InputError

MAX_HEADER = 100_000_000
DTYPE_BYTES = {
    "BOOL": 1,
    "U8": 1,
    "I8": 1,
    "F8_E4M3": 1,
    "F8_E5M2": 1,
    "F8_E8M0": 1,
    "F4": 1,
    "I16": 2,
    "U16": 2,
    "F16": 2,
    "BF16": 2,
    "I32": 4,
    "U32": 4,
    "F32": 4,
    "I64": 8,
    "U64": 8,
    "F64": 8,
}
SUFFIX = ".safetensors"


@dataclass(frozen=True)
class TensorInfo:
    """One tensor of a shard: its name, dtype, shape and byte range in the file (absolute offsets)."""

    name: str
    dtype: str
    shape: tuple[int, ...]
    start: int
    end: int

    @property
    def nbytes(self) -> int:
        return self.end - self.start


@dataclass(frozen=True)
class Shard:
    """A safetensors file: where it is, its size and its tensors."""

    path: Path
    size: int
    data_start: int
    tensors: tuple[TensorInfo, ...]

    @property
    def tensor_bytes(self) -> int:
        return sum(t.nbytes for t in self.tensors)


def read_shard(path: Path) -> Shard:
    """Parse and check a safetensors header (the data is not read)."""
    try:
        with path.open("rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            head = handle.read(8)
            if len(head) < 8:
                raise InputError("not a safetensors file: shorter than its 8-byte header length", file=str(path))
            (length,) = struct.unpack("<Q", head)
            if length > MAX_HEADER or length + 8 > size:
                raise InputError(
                    f"not a safetensors file: header length {length} does not fit the file of {size} bytes",
                    file=str(path),
                )
            raw = handle.read(length)
    except OSError as err:
        raise InputError(f"cannot read: {err.strerror or err}", file=str(path)) from err
    try:
        header = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise InputError(f"not a safetensors file: its header is not JSON ({err})", file=str(path)) from err
    if not isinstance(header, dict):
        raise InputError("not a safetensors file: its header is not a JSON object", file=str(path))
    data_start = 8 + length
    tensors: list[TensorInfo] = []
    for name, info in header.items():
        if name == "__metadata__":
            continue
        tensors.append(_tensor(path, name, info, data_start, size))
    tensors.sort(key=lambda t: t.start)
    cursor = data_start
    for tensor in tensors:
        if tensor.start != cursor:
            raise InputError(
                f"tensor '{tensor.name}' starts at byte {tensor.start - data_start} of the data, "
                f"expected {cursor - data_start} (holes or overlaps)",
                file=str(path),
            )
        cursor = tensor.end
    if cursor != size:
        raise InputError(f"the tensors end at byte {cursor} but the file has {size}", file=str(path))
    return Shard(path, size, data_start, tuple(tensors))


def _tensor(path: Path, name: str, info: object, data_start: int, size: int) -> TensorInfo:
    if not isinstance(info, dict):
        raise InputError(f"tensor '{name}': its header entry is not an object", file=str(path))
    dtype, shape, offsets = info.get("dtype"), info.get("shape"), info.get("data_offsets")
    if dtype not in DTYPE_BYTES:
        raise InputError(f"tensor '{name}': unknown dtype {dtype!r}", file=str(path))
    if not isinstance(shape, list) or not all(isinstance(d, int) and d >= 0 for d in shape):
        raise InputError(f"tensor '{name}': shape must be a list of non-negative integers", file=str(path))
    if (
        not isinstance(offsets, list)
        or len(offsets) != 2
        or not all(isinstance(o, int) for o in offsets)
        or not 0 <= offsets[0] <= offsets[1]
    ):
        raise InputError(f"tensor '{name}': data_offsets must be [begin, end]", file=str(path))
    start, end = data_start + offsets[0], data_start + offsets[1]
    if end > size:
        raise InputError(f"tensor '{name}' ends past the end of the file", file=str(path))
    expected = math.prod(shape) * DTYPE_BYTES[str(dtype)]
    if str(dtype) != "F4" and expected != end - start:
        raise InputError(
            f"tensor '{name}': shape {shape} of {dtype} is {expected} bytes, its range is {end - start}", file=str(path)
        )
    return TensorInfo(name, str(dtype), tuple(shape), start, end)


def find_shards(paths: Iterable[Path]) -> list[Shard]:
    """The safetensors files named, or found under the folders named (sorted, symlinks followed, as in a HF cache)."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            found = sorted(p for p in path.rglob(f"*{SUFFIX}") if p.is_file())
            if not found:
                raise InputError("no *.safetensors files in this folder", file=str(path))
            files.extend(found)
        elif path.is_file():
            files.append(path)
        else:
            raise InputError("no such file or folder", file=str(path))
    unique = list(dict.fromkeys(p.resolve() for p in files))
    return [read_shard(p) for p in unique]


# --- synthetic shards ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Architecture:
    """The shapes of a decoder-only transformer (the Llama family's layout, as transformers names its tensors)."""

    hidden: int
    intermediate: int
    kv_dim: int
    vocab: int

    def layer(self, index: int) -> list[tuple[str, tuple[int, ...]]]:
        h, i, kv = self.hidden, self.intermediate, self.kv_dim
        p = f"model.layers.{index}."
        return [
            (p + "input_layernorm.weight", (h,)),
            (p + "self_attn.q_proj.weight", (h, h)),
            (p + "self_attn.k_proj.weight", (kv, h)),
            (p + "self_attn.v_proj.weight", (kv, h)),
            (p + "self_attn.o_proj.weight", (h, h)),
            (p + "post_attention_layernorm.weight", (h,)),
            (p + "mlp.gate_proj.weight", (i, h)),
            (p + "mlp.up_proj.weight", (i, h)),
            (p + "mlp.down_proj.weight", (h, i)),
        ]


#: Real configurations (config.json of the named models), smallest first; a synthetic model takes the largest one
#: that still gives it at least MIN_LAYERS layers, so a 20 MB test file and a 10 GB benchmark both look real.
ARCHITECTURES: tuple[tuple[str, Architecture], ...] = (
    ("SmolLM2-135M", Architecture(576, 1536, 192, 49152)),
    ("Qwen2.5-0.5B", Architecture(896, 4864, 128, 151936)),
    ("Llama-3.2-1B", Architecture(2048, 8192, 512, 128256)),
    ("Llama-3.1-8B", Architecture(4096, 14336, 1024, 128256)),
    ("Llama-3.1-70B", Architecture(8192, 28672, 1024, 128256)),
)
MIN_LAYERS = 4
SYNTHETIC_DTYPE = "F16"  # numpy reads it, so the safetensors library loads it without torch
_CHUNK = 16 << 20


def _layer_bytes(arch: Architecture) -> int:
    return sum(math.prod(shape) for _, shape in arch.layer(0)) * DTYPE_BYTES[SYNTHETIC_DTYPE]


def pick_architecture(total: int) -> tuple[str, Architecture]:
    """The largest known architecture with at least MIN_LAYERS layers in `total` bytes (the smallest otherwise)."""
    chosen = ARCHITECTURES[0]
    for entry in ARCHITECTURES:
        if _layer_bytes(entry[1]) * MIN_LAYERS <= total:
            chosen = entry
    return chosen


def synthetic_tensors(total: int) -> list[tuple[str, tuple[int, ...]]]:
    """Tensor names and shapes of a model of about `total` bytes: whole layers, then a final norm.

    The embedding and LM head are left out when they would take more than a quarter of the model (small sizes).
    """
    _, arch = pick_architecture(total)
    itemsize = DTYPE_BYTES[SYNTHETIC_DTYPE]
    out: list[tuple[str, tuple[int, ...]]] = []
    used = 0
    embed = arch.vocab * arch.hidden * itemsize
    if 2 * embed <= total // 4:
        out.append(("model.embed_tokens.weight", (arch.vocab, arch.hidden)))
        used += embed
    index = 0
    per_layer = _layer_bytes(arch)
    reserve = embed if out else 0  # the LM head, added last
    while used + per_layer + reserve <= total or index == 0:
        out.extend(arch.layer(index))
        used += per_layer
        index += 1
    out.append(("model.norm.weight", (arch.hidden,)))
    if out[0][0] == "model.embed_tokens.weight":
        out.append(("lm_head.weight", (arch.vocab, arch.hidden)))
    return out


def _header(tensors: Sequence[tuple[str, tuple[int, ...]]]) -> bytes:
    itemsize = DTYPE_BYTES[SYNTHETIC_DTYPE]
    entries: dict[str, object] = {"__metadata__": {"format": "pt"}}
    offset = 0
    for name, shape in tensors:
        size = math.prod(shape) * itemsize
        entries[name] = {"dtype": SYNTHETIC_DTYPE, "shape": list(shape), "data_offsets": [offset, offset + size]}
        offset += size
    raw = json.dumps(entries, separators=(",", ":")).encode()
    raw += b" " * (-len(raw) % 8)  # the data starts 8-byte aligned, as safetensors writes it
    return struct.pack("<Q", len(raw)) + raw


def write_synthetic(
    folder: Path, total: int, shard_size: int = 5 * 10**9, progress: Callable[[int], None] | None = None, seed: int = 0
) -> list[Path]:
    """Write a model of about `total` bytes as safetensors shards of at most `shard_size` bytes plus the index.

    The data is random (incompressible), written in 16 MiB chunks and fsynced, so it reaches the disk.
    """
    if total < 1 << 20:
        raise InputError(f"--synthetic must be at least 1 MiB, not {total} bytes")
    tensors = synthetic_tensors(total)
    itemsize = DTYPE_BYTES[SYNTHETIC_DTYPE]
    groups: list[list[tuple[str, tuple[int, ...]]]] = [[]]
    current = 0
    for name, shape in tensors:
        size = math.prod(shape) * itemsize
        if groups[-1] and current + size > shard_size:
            groups.append([])
            current = 0
        groups[-1].append((name, shape))
        current += size
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    paths: list[Path] = []
    weight_map: dict[str, str] = {}
    for number, group in enumerate(groups, start=1):
        path = folder / f"model-{number:05d}-of-{len(groups):05d}{SUFFIX}"
        data_bytes = sum(math.prod(shape) for _, shape in group) * itemsize
        with path.open("wb") as handle:
            handle.write(_header(group))
            left = data_bytes
            while left:
                step = min(_CHUNK, left)
                handle.write(rng.bytes(step))
                left -= step
                if progress is not None:
                    progress(step)
            handle.flush()
            os.fsync(handle.fileno())
        paths.append(path)
        weight_map.update((name, path.name) for name, _ in group)
    index = {"metadata": {"total_size": sum(math.prod(s) for _, s in tensors) * itemsize}, "weight_map": weight_map}
    (folder / "model.safetensors.index.json").write_text(json.dumps(index, indent=2) + "\n")
    return paths
