"""Property tests: the layout generator's CPU lists obey the kubelet's view of a machine."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubegpu.topology.layout import NUMBERINGS, layout_cpus
from kubegpu.topology.pci import is_gpu, normalize_bus_id

MACHINES = st.tuples(
    st.integers(1, 4),  # sockets
    st.integers(1, 12),  # NUMA nodes per socket
    st.integers(1, 6),  # cores per NUMA node
    st.integers(1, 4),  # threads per core
    st.sampled_from(NUMBERINGS),
)


@given(MACHINES)
def test_layout_invariants(machine: tuple[int, int, int, int, str]) -> None:
    sockets, numa_per_socket, cores_per_numa, threads, numbering = machine
    cpus = layout_cpus(sockets, numa_per_socket * cores_per_numa, threads, numa_per_socket, numbering)
    total = sockets * numa_per_socket * cores_per_numa * threads
    assert [c.id for c in cpus] == list(range(total))
    per_core = Counter(c.core for c in cpus)
    assert set(per_core.values()) == {threads}
    for cpu in cpus:
        siblings = [c for c in cpus if c.core == cpu.core]
        assert cpu.core == min(c.id for c in siblings)  # the kubelet's core naming
        assert {(c.socket, c.numa) for c in siblings} == {(cpu.socket, cpu.numa)}
        assert cpu.numa // numa_per_socket == cpu.socket
    assert Counter(c.numa for c in cpus) == {n: cores_per_numa * threads for n in range(sockets * numa_per_socket)}


def test_layout_rejects_bad_shapes() -> None:
    with pytest.raises(ValueError, match="divisible"):
        layout_cpus(2, 10, 2, numa_per_socket=3)
    with pytest.raises(ValueError, match="numbering"):
        layout_cpus(1, 2, 2, numbering="random")
    with pytest.raises(ValueError, match="socket_order"):
        layout_cpus(2, 2, 1, socket_order=[0, 0])


@given(
    st.integers(0, 0xFFFF),
    st.integers(0, 0xFF),
    st.integers(0, 0x1F),
    st.integers(0, 7),
    st.booleans(),
    st.booleans(),
)
def test_bus_id_forms_normalise(domain: int, bus: int, dev: int, fn: int, wide: bool, upper: bool) -> None:
    text = f"{domain:08x}:{bus:02x}:{dev:02x}.{fn}" if wide else f"{domain:04x}:{bus:02x}:{dev:02x}.{fn}"
    text = text.upper() if upper else text
    assert normalize_bus_id(text) == f"{domain:04x}:{bus:02x}:{dev:02x}.{fn}"


def test_bus_id_examples() -> None:
    assert normalize_bus_id("00000000:1B:00.0") == "0000:1b:00.0"
    assert normalize_bus_id("1b:00.0") == "0000:1b:00.0"
    assert normalize_bus_id("10000:e0:00.0") == "10000:e0:00.0"  # Intel VMD domain
    with pytest.raises(ValueError):
        normalize_bus_id("GPU-1234")


def test_gpu_classes() -> None:
    assert is_gpu(0x10DE, 0x030200) and is_gpu(0x10DE, 0x030000)
    assert not is_gpu(0x10DE, 0x068000)  # NVSwitch bridge
    assert is_gpu(0x1002, 0x120000) and is_gpu(0x1002, 0x038000)
    assert not is_gpu(0x1002, 0x040300) and not is_gpu(0x1A03, 0x030000)
