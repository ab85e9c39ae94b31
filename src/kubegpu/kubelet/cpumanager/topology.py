"""The CPU manager's view of a node: CPU -> core, socket, NUMA node, uncore (L3) cache, as bitsets.

Follows kubernetes v1.35 pkg/kubelet/cm/cpumanager/topology (CPUTopology, CPUDetails, UncoreCacheID);
the bitsets are precomputed once per node so that allocations stay cheap.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from kubegpu.kubelet.cpumanager.cpuset import bits_of
from kubegpu.topology.model import CPUInfo, NodeTopology

CoreList = tuple[tuple[int, int], ...]  # (core id, CPU bits of the core)


@dataclass(frozen=True)
class CPUTopology:
    """CPU layout with precomputed masks: cores, sockets and NUMA nodes as CPU bitsets."""

    cpus: tuple[CPUInfo, ...]
    num_cpus: int
    num_cores: int
    num_sockets: int
    num_numa_nodes: int
    all_bits: int
    core_bits: dict[int, int] = field(repr=False)
    socket_bits: dict[int, int] = field(repr=False)
    numa_bits: dict[int, int] = field(repr=False)
    cpu_core: dict[int, int] = field(repr=False)
    cpu_socket: dict[int, int] = field(repr=False)
    cpu_numa: dict[int, int] = field(repr=False)
    cores_in_socket: dict[int, CoreList] = field(repr=False, default_factory=dict)
    cores_in_numa: dict[int, CoreList] = field(repr=False, default_factory=dict)
    uncore_bits: dict[int, int] = field(repr=False, default_factory=dict)
    cpu_uncore: dict[int, int] = field(repr=False, default_factory=dict)

    @classmethod
    def from_cpus(cls, cpus: Sequence[CPUInfo]) -> CPUTopology:
        """Core ids become the lowest CPU id of the core, as topology.Discover makes them."""
        lowest: dict[int, int] = {}
        for cpu in cpus:
            lowest[cpu.core] = min(lowest.get(cpu.core, cpu.id), cpu.id)
        cpus = [CPUInfo(c.id, lowest[c.core], c.socket, c.numa, c.uncore_cache) for c in cpus]
        core_bits: dict[int, int] = {}
        socket_bits: dict[int, int] = {}
        numa_bits: dict[int, int] = {}
        uncore_bits: dict[int, int] = {}
        for cpu in cpus:
            core_bits[cpu.core] = core_bits.get(cpu.core, 0) | 1 << cpu.id
            socket_bits[cpu.socket] = socket_bits.get(cpu.socket, 0) | 1 << cpu.id
            numa_bits[cpu.numa] = numa_bits.get(cpu.numa, 0) | 1 << cpu.id
            uncore_bits[cpu.uncore_cache] = uncore_bits.get(cpu.uncore_cache, 0) | 1 << cpu.id
        return cls(
            cpus=tuple(sorted(cpus, key=lambda c: c.id)),
            num_cpus=len(cpus),
            num_cores=len(core_bits),
            num_sockets=len(socket_bits),
            num_numa_nodes=len(numa_bits),
            all_bits=bits_of(c.id for c in cpus),
            core_bits=dict(sorted(core_bits.items())),
            socket_bits=dict(sorted(socket_bits.items())),
            numa_bits=dict(sorted(numa_bits.items())),
            cpu_core={c.id: c.core for c in cpus},
            cpu_socket={c.id: c.socket for c in cpus},
            cpu_numa={c.id: c.numa for c in cpus},
            cores_in_socket=_cores_within(core_bits, socket_bits),
            cores_in_numa=_cores_within(core_bits, numa_bits),
            uncore_bits=dict(sorted(uncore_bits.items())),
            cpu_uncore={c.id: c.uncore_cache for c in cpus},
        )

    @classmethod
    def from_node(cls, node: NodeTopology) -> CPUTopology:
        return cls.from_cpus(node.cpus)

    @property
    def cpus_per_core(self) -> int:
        return self.num_cpus // self.num_cores if self.num_cores else 0

    @property
    def cpus_per_socket(self) -> int:
        return self.num_cpus // self.num_sockets if self.num_sockets else 0

    @property
    def num_uncore_caches(self) -> int:
        return len(self.uncore_bits)

    @property
    def cpus_per_uncore_cache(self) -> int:
        """Average CPUs per L3 group (CPUTopology.CPUsPerUncore): the gate for taking whole groups."""
        return self.num_cpus // self.num_uncore_caches if self.uncore_bits else 0

    def numa_ids(self) -> tuple[int, ...]:
        """NUMA nodes that hold CPUs (CPUDetails.NUMANodes())."""
        return tuple(self.numa_bits)

    def cpus_in_numas(self, numas: Sequence[int]) -> int:
        bits = 0
        for n in numas:
            bits |= self.numa_bits.get(n, 0)
        return bits

    def sockets_in_numas(self, numas: Sequence[int]) -> tuple[int, ...]:
        wanted = self.cpus_in_numas(numas)
        return tuple(s for s, b in self.socket_bits.items() if b & wanted)

    def siblings_bits(self, cpus: int) -> int:
        """Every CPU sharing a core with a CPU of `cpus` (the reserved physical CPUs)."""
        out = 0
        for core, bits in self.core_bits.items():
            del core
            if bits & cpus:
                out |= bits
        return out


def _cores_within(core_bits: dict[int, int], unit_bits: dict[int, int]) -> dict[int, tuple[tuple[int, int], ...]]:
    """Per socket or NUMA node: (core id, core CPU bits) of the cores with CPUs in it."""
    return {unit: tuple((c, b) for c, b in sorted(core_bits.items()) if b & bits) for unit, bits in unit_bits.items()}
