"""Optional NVML facts about GPUs (model, memory, NVLink, GPU memory NUMA node) via `pynvml`.

`nvidia-ml-py` (import name `pynvml`) is not a dependency: it is imported only when asked for, and
a missing module, library or driver yields None with the reason, never an error.
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from kubegpu.topology.pci import normalize_bus_id


@dataclass(frozen=True)
class NvmlGPU:
    """What NVML says about one GPU, keyed by its normalised PCI bus id."""

    pci_bus_id: str
    model: str
    memory_bytes: int | None = None
    uuid: str | None = None
    memory_numa_node: int | None = None
    nvlink_domain: str | None = None


class NvmlSource(Protocol):
    """Anything that lists NVML GPU facts (the real library, or recorded data in tests)."""

    def gpus(self) -> Sequence[NvmlGPU]: ...


@dataclass(frozen=True)
class RecordedNvml:
    """NVML facts recorded elsewhere (a fixture, a previous probe) served as an NvmlSource."""

    recorded: tuple[NvmlGPU, ...]

    def gpus(self) -> Sequence[NvmlGPU]:
        return self.recorded


def load_nvml() -> tuple[NvmlSource | None, str]:
    """Read every GPU through pynvml once; (None, reason) when NVML is not usable here."""
    try:
        nvml: Any = importlib.import_module("pynvml")
    except ImportError:
        return None, "NVML not used: the nvidia-ml-py (pynvml) module is not installed"
    try:
        nvml.nvmlInit()
    except Exception as err:  # NVMLError_LibraryNotFound, DriverNotLoaded, ...
        return None, f"NVML not used: {err}"
    try:
        return RecordedNvml(tuple(_read_all(nvml))), "NVML used"
    except Exception as err:  # any NVML call failing mid-way leaves the sysfs facts alone
        return None, f"NVML not used: {err}"
    finally:
        with contextlib.suppress(Exception):  # shutting down NVML is best effort
            nvml.nvmlShutdown()


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _read_all(nvml: Any) -> list[NvmlGPU]:
    handles = [nvml.nvmlDeviceGetHandleByIndex(i) for i in range(nvml.nvmlDeviceGetCount())]
    bus_ids = [normalize_bus_id(_text(nvml.nvmlDeviceGetPciInfo(h).busId)) for h in handles]
    peers: list[set[str]] = []
    for handle in handles:
        linked: set[str] = set()
        for link in range(int(getattr(nvml, "NVML_NVLINK_MAX_LINKS", 18))):
            try:
                if nvml.nvmlDeviceGetNvLinkState(handle, link) != 1:
                    continue
                remote = nvml.nvmlDeviceGetNvLinkRemotePciInfo_v2(handle, link)
            except Exception:  # link index out of range or NVLink unsupported
                break
            linked.add(normalize_bus_id(_text(remote.busId)))
        peers.append(linked)
    domains = _nvlink_domains(bus_ids, peers)
    out = []
    for handle, bus_id, domain in zip(handles, bus_ids, domains, strict=True):
        try:
            numa = int(nvml.nvmlDeviceGetNumaNodeId(handle))
        except Exception:  # only coherent platforms (Grace Hopper, GB200) implement it
            numa = -1
        out.append(
            NvmlGPU(
                pci_bus_id=bus_id,
                model=_text(nvml.nvmlDeviceGetName(handle)),
                memory_bytes=int(nvml.nvmlDeviceGetMemoryInfo(handle).total),
                uuid=_text(nvml.nvmlDeviceGetUUID(handle)),
                memory_numa_node=numa if numa >= 0 else None,
                nvlink_domain=domain,
            )
        )
    return out


def _nvlink_domains(bus_ids: list[str], peers: list[set[str]]) -> list[str | None]:
    """Group GPUs joined by active NVLinks; a link to a non-GPU end (an NVSwitch) joins all such."""
    gpu_set = set(bus_ids)
    parent = list(range(len(bus_ids)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    switched = {i for i, p in enumerate(peers) if p - gpu_set}
    for i, linked in enumerate(peers):
        for other in linked & gpu_set:
            parent[find(bus_ids.index(other))] = find(i)
    out: list[str | None] = []
    for i, linked in enumerate(peers):
        if not linked:
            out.append(None)
        elif i in switched:
            out.append("nvswitch")
        else:
            out.append(f"nvlink-{bus_ids[find(i)]}")
    return out
