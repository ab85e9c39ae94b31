"""The optional NVML reader against a stand-in `pynvml` module: names, bus ids, NVLink domains."""

from __future__ import annotations

import sys
import types
from dataclasses import dataclass
from pathlib import Path

import pytest

from kubegpu.topology.nvml import load_nvml
from kubegpu.topology.presets import load_preset
from kubegpu.topology.sysfs import read_node
from tests.probe.fakefs import write_machine


@dataclass
class _Pci:
    busId: bytes  # pynvml's field name


@dataclass
class _Memory:
    total: int


class NVMLError(Exception):
    pass


def _fake_pynvml(bus_ids: list[str], links: dict[int, list[str]], numa: list[int]) -> types.ModuleType:
    """The subset of nvidia-ml-py the reader calls, answering like NVML (bytes, 8-digit domains)."""
    mod = types.ModuleType("pynvml")
    mod.NVML_NVLINK_MAX_LINKS = 18  # type: ignore[attr-defined]
    calls: list[str] = []
    mod.calls = calls  # type: ignore[attr-defined]
    mod.nvmlInit = lambda: calls.append("init")  # type: ignore[attr-defined]
    mod.nvmlShutdown = lambda: calls.append("shutdown")  # type: ignore[attr-defined]
    mod.nvmlDeviceGetCount = lambda: len(bus_ids)  # type: ignore[attr-defined]
    mod.nvmlDeviceGetHandleByIndex = lambda i: i  # type: ignore[attr-defined]
    mod.nvmlDeviceGetPciInfo = lambda h: _Pci(bus_ids[h].encode())  # type: ignore[attr-defined]
    mod.nvmlDeviceGetName = lambda h: b"NVIDIA H100 80GB HBM3"  # type: ignore[attr-defined]
    mod.nvmlDeviceGetUUID = lambda h: f"GPU-{h:04d}"  # type: ignore[attr-defined]
    mod.nvmlDeviceGetMemoryInfo = lambda h: _Memory(85520809984)  # type: ignore[attr-defined]

    def state(h: int, link: int) -> int:
        if link >= 18:
            raise NVMLError("invalid argument")
        return 1 if link < len(links.get(h, [])) else 0

    def remote(h: int, link: int) -> _Pci:
        return _Pci(links[h][link].encode())

    def numa_id(h: int) -> int:
        if numa[h] < 0:
            raise NVMLError("not supported")
        return numa[h]

    mod.nvmlDeviceGetNvLinkState = state  # type: ignore[attr-defined]
    mod.nvmlDeviceGetNvLinkRemotePciInfo_v2 = remote  # type: ignore[attr-defined]
    mod.nvmlDeviceGetNumaNodeId = numa_id  # type: ignore[attr-defined]
    return mod


def test_nvml_missing_is_a_reason_not_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", None)  # makes `import pynvml` raise ImportError
    source, why = load_nvml()
    assert source is None and "not installed" in why


def test_nvml_init_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    mod = types.ModuleType("pynvml")

    def boom() -> None:
        raise NVMLError("NVML Shared Library Not Found")

    mod.nvmlInit = boom  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "pynvml", mod)
    source, why = load_nvml()
    assert source is None and "Shared Library Not Found" in why


def test_nvml_facts_merge_into_the_probe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    preset = load_preset("dgx-h100")
    nvml_ids = [f"00000000:{g.pci_bus_id[5:].upper()}" for g in preset.gpus]
    switch = "00000000:05:00.0"  # an NVSwitch at the far end of every link
    links = {i: [switch] * 18 for i in range(8)}
    fake = _fake_pynvml(nvml_ids, links, numa=[0, 0, 0, 0, 1, 1, 1, 1])
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    source, why = load_nvml()
    assert source is not None and why == "NVML used"
    assert fake.calls == ["init", "shutdown"]
    probed = read_node(write_machine(preset, tmp_path).roots, nvml=source)
    assert probed.gpus == preset.gpus  # memory and the NVSwitch domain come from NVML
    # On x86 NVML's NUMA id names the CPU node: it is not GPU memory.
    assert all(g.memory_numa_node is None for g in probed.gpus)


def test_direct_nvlink_pairs_form_domains(monkeypatch: pytest.MonkeyPatch) -> None:
    ids = ["00000000:1B:00.0", "00000000:43:00.0", "00000000:52:00.0"]
    links = {0: [ids[1], ids[1]], 1: [ids[0], ids[0]]}  # GPUs 0 and 1 bridged, GPU 2 alone
    monkeypatch.setitem(sys.modules, "pynvml", _fake_pynvml(ids, links, numa=[-1, -1, -1]))
    source, _ = load_nvml()
    assert source is not None
    domains = [g.nvlink_domain for g in source.gpus()]
    assert domains[0] == domains[1] == "nvlink-0000:1b:00.0" and domains[2] is None
