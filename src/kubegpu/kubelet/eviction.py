"""The kubelet's hard-eviction defaults and the memory threshold that Node Allocatable subtracts.

Follows kubernetes v1.35 pkg/kubelet/eviction/defaults_linux.go (five signals since v1.30,
imagefs.inodesFree added by kubernetes PR 121834), cmd/kubelet/app/server.go loadConfigFile
(evictionHard omitted: the defaults; mergeDefaultEvictionSettings, v1.33+, fills missing signals)
and pkg/kubelet/eviction/helpers.go (percentages parsed as float32, 0% and 100% disable a signal).
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from dataclasses import dataclass

from kubegpu.errors import QuantityError
from kubegpu.units.quantity import format_bytes, parse_quantity

MEMORY_AVAILABLE = "memory.available"
DEFAULT_EVICTION_HARD: Mapping[str, str] = {
    MEMORY_AVAILABLE: "100Mi",
    "nodefs.available": "10%",
    "nodefs.inodesFree": "5%",
    "imagefs.available": "15%",
    "imagefs.inodesFree": "5%",
}
# The first release whose KubeletConfiguration has mergeDefaultEvictionSettings (kubernetes PR 127577).
MERGE_DEFAULTS_SINCE = (1, 33)


def has_merge_default_eviction_settings(version: str) -> bool:
    """Whether the kubelet release knows mergeDefaultEvictionSettings (older ones ignore the field)."""
    major, minor = (int(p) for p in version.split(".")[:2])
    return (major, minor) >= MERGE_DEFAULTS_SINCE


def hard_thresholds(given: Mapping[str, str] | None, merge: bool, version: str) -> Mapping[str, str]:
    """evictionHard as the kubelet uses it: the defaults when omitted; with mergeDefaultEvictionSettings
    (where the release has it) the given signals over the defaults; else exactly the given signals."""
    if given is None:
        return DEFAULT_EVICTION_HARD
    if merge and has_merge_default_eviction_settings(version):
        return {**DEFAULT_EVICTION_HARD, **given}
    return given


def _float32(value: float) -> float:
    packed: tuple[float] = struct.unpack("f", struct.pack("f", value))
    return packed[0]


@dataclass(frozen=True)
class MemoryThreshold:
    """The hard-eviction memory.available threshold: bytes (None: a percentage without a node's
    capacity, or not a quantity) and where the value comes from, in words."""

    bytes: int | None
    source: str
    error: str | None = None


def memory_threshold(
    given: Mapping[str, str] | None, merge: bool, version: str, capacity: int | None
) -> MemoryThreshold:
    """The memory.available hard-eviction threshold the kubelet subtracts from memory capacity."""
    if given is None:
        return MemoryThreshold(
            _bytes(DEFAULT_EVICTION_HARD[MEMORY_AVAILABLE]),
            f"the default evictionHard memory.available {DEFAULT_EVICTION_HARD[MEMORY_AVAILABLE]}",
        )
    raw = given.get(MEMORY_AVAILABLE)
    if raw is None:
        if merge and has_merge_default_eviction_settings(version):
            default = DEFAULT_EVICTION_HARD[MEMORY_AVAILABLE]
            return MemoryThreshold(_bytes(default), f"memory.available {default} merged from the defaults")
        return MemoryThreshold(
            0, "no memory.available in evictionHard (other signals given, so its default is dropped)"
        )
    text = str(raw).strip()
    if text.endswith("%"):
        if text in ("0%", "100%"):
            return MemoryThreshold(0, f"evictionHard memory.available {text} (disabled)")
        try:
            percent = _float32(float(text[:-1]))
        except ValueError:
            return MemoryThreshold(None, f"evictionHard memory.available {raw!r}", f"bad percentage {text!r}")
        if capacity is None:
            return MemoryThreshold(None, f"evictionHard memory.available {text} of the node's memory")
        fraction = _float32(percent / 100)
        return MemoryThreshold(
            int(float(capacity) * fraction), f"evictionHard memory.available {text} of {format_bytes(capacity)}"
        )
    try:
        value = parse_quantity(raw).ceil
    except QuantityError as err:
        return MemoryThreshold(None, f"evictionHard memory.available {raw!r} (not a quantity)", err.message)
    return MemoryThreshold(value, f"evictionHard memory.available {raw}")


def _bytes(text: str) -> int:
    return parse_quantity(text).ceil
