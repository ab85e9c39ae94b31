"""Property test: any symmetric machine written as a fake sysfs tree is read back exactly."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from kubegpu.topology.layout import NUMBERINGS, expand
from kubegpu.topology.sysfs import read_node
from tests.probe.fakefs import recorded_nvml, write_machine


@settings(max_examples=25, deadline=None)
@given(
    sockets=st.integers(1, 3),
    numa_per_socket=st.integers(1, 2),
    cores_per_numa=st.integers(1, 4),
    threads=st.integers(1, 2),
    numbering=st.sampled_from(NUMBERINGS),
    gpu_nodes=st.lists(st.one_of(st.none(), st.integers(0, 5)), max_size=4),
    wide_domain=st.booleans(),
)
def test_probe_round_trip(
    sockets: int,
    numa_per_socket: int,
    cores_per_numa: int,
    threads: int,
    numbering: str,
    gpu_nodes: list[int | None],
    wide_domain: bool,
) -> None:
    numa_count = sockets * numa_per_socket
    devices = [
        {
            "pci_bus_id": f"{(0x10 if wide_domain else 0):04x}:{0x1B + 16 * i:02x}:00.0",
            "numa_node": None if n is None else n % numa_count,
        }
        for i, n in enumerate(gpu_nodes)
    ]
    desc = {
        "name": "prop",
        "sources": ["generated"],
        "cpu": {
            "sockets": sockets,
            "cores_per_socket": numa_per_socket * cores_per_numa,
            "threads_per_core": threads,
            "numa_per_socket": numa_per_socket,
            "numbering": numbering,
        },
        "memory": {
            "per_numa_bytes": 1 << 30,
            "hugepages_bytes": {"2Mi": 1 << 21},
            "distances": [[10 if a == b else 21 for b in range(numa_count)] for a in range(numa_count)],
        },
        "gpus": {"model": "NVIDIA H100 80GB HBM3", "memory_bytes": 1 << 34, "devices": devices},
    }
    topo = expand(desc, "prop")
    with tempfile.TemporaryDirectory() as tmp:
        probed = read_node(write_machine(topo, Path(tmp)).roots, nvml=recorded_nvml(topo))
    assert (probed.cpus, probed.numa_nodes, probed.gpus) == (topo.cpus, topo.numa_nodes, topo.gpus)
