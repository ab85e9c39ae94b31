"""Node hardware as the kubelet sees it: CPUs (id -> core, socket, NUMA), NUMA memory and distances, GPUs.

`NodeTopology` is the one node profile shared by presets, `kubegpu probe` output and every `--node`
option; `to_dict`/`from_dict` define its documented JSON form (docs/node-profile.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from kubegpu.errors import InputError

PROFILE_SCHEMA_VERSION = "kubegpu.io/node-profile/v1"


@dataclass(frozen=True)
class CPUInfo:
    """One logical CPU: its id, physical core (unique across the node), socket, NUMA node and L3 group.

    `uncore_cache` is the id of the last-level (uncore, L3) cache the CPU shares; 0 when unknown.
    """

    id: int
    core: int
    socket: int
    numa: int
    uncore_cache: int = 0


@dataclass(frozen=True)
class NUMANode:
    """A NUMA node: its memory, hugepages per page size, and distances to every node (by node id)."""

    id: int
    memory_bytes: int
    distances: Mapping[int, int] = field(default_factory=dict)
    hugepages_bytes: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class GPUDevice:
    """One accelerator: index, PCI bus id, NUMA node (None when the platform reports -1) and model."""

    index: int
    pci_bus_id: str
    numa_node: int | None
    model: str
    memory_bytes: int | None = None
    vendor: str = "nvidia"
    resource_name: str = "nvidia.com/gpu"
    nvlink_domain: str | None = None
    local_cpus: tuple[int, ...] = ()
    # The memory-only NUMA node holding this GPU's own memory (Grace Hopper / GB200 in NUMA mode).
    memory_numa_node: int | None = None


@dataclass(frozen=True)
class NodeTopology:
    """A whole node: CPUs, NUMA nodes and GPUs, with where the facts came from."""

    name: str
    cpus: tuple[CPUInfo, ...]
    numa_nodes: tuple[NUMANode, ...]
    gpus: tuple[GPUDevice, ...] = ()
    description: str = ""
    sources: tuple[str, ...] = ()
    estimates: tuple[str, ...] = ()
    labels: Mapping[str, str] = field(default_factory=dict)

    @cached_property
    def cpu_by_id(self) -> dict[int, CPUInfo]:
        return {cpu.id: cpu for cpu in self.cpus}

    @property
    def num_cpus(self) -> int:
        return len(self.cpus)

    @cached_property
    def num_cores(self) -> int:
        return len({cpu.core for cpu in self.cpus})

    @cached_property
    def num_sockets(self) -> int:
        return len({cpu.socket for cpu in self.cpus})

    @cached_property
    def numa_ids(self) -> tuple[int, ...]:
        """Every NUMA node id, memory-only nodes included, sorted."""
        ids = {node.id for node in self.numa_nodes} | {cpu.numa for cpu in self.cpus}
        return tuple(sorted(ids))

    @property
    def threads_per_core(self) -> int:
        """CPUs per physical core (the SMT level full-pcpus-only aligns to); 1 without SMT."""
        if not self.cpus:
            return 1
        return max(1, self.num_cpus // max(1, self.num_cores))

    def siblings(self, cpu_id: int) -> tuple[int, ...]:
        """The logical CPUs on the same physical core as `cpu_id`, itself included, sorted."""
        core = self.cpu_by_id[cpu_id].core
        return tuple(sorted(c.id for c in self.cpus if c.core == core))

    def cpus_in_numa(self, numa: int) -> tuple[int, ...]:
        return tuple(sorted(c.id for c in self.cpus if c.numa == numa))

    def distance(self, a: int, b: int) -> int:
        """NUMA distance (sysfs semantics, 10 = local); 10/20 assumed where the profile has none."""
        for node in self.numa_nodes:
            if node.id == a and b in node.distances:
                return node.distances[b]
        return 10 if a == b else 20

    def to_dict(self) -> dict[str, Any]:
        """The documented JSON form of a node profile."""
        with_uncore = any(c.uncore_cache for c in self.cpus)
        profile: dict[str, Any] = {
            "schema": PROFILE_SCHEMA_VERSION,
            "name": self.name,
            "description": self.description,
            "sources": list(self.sources),
            "estimates": list(self.estimates),
            "labels": dict(self.labels),
            "cpus": [_cpu_dict(c, with_uncore) for c in self.cpus],
            "numa_nodes": [
                {
                    "id": n.id,
                    "memory_bytes": n.memory_bytes,
                    "hugepages_bytes": dict(n.hugepages_bytes),
                    "distances": {str(k): v for k, v in sorted(n.distances.items())},
                }
                for n in self.numa_nodes
            ],
            "gpus": [
                {
                    "index": g.index,
                    "pci_bus_id": g.pci_bus_id,
                    "numa_node": g.numa_node,
                    "model": g.model,
                    "memory_bytes": g.memory_bytes,
                    "vendor": g.vendor,
                    "resource_name": g.resource_name,
                    "nvlink_domain": g.nvlink_domain,
                    "local_cpus": list(g.local_cpus),
                    "memory_numa_node": g.memory_numa_node,
                }
                for g in self.gpus
            ],
        }
        return profile

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], source: str = "<profile>") -> NodeTopology:
        """Read a node profile; raise InputError naming the field that is missing or wrong."""
        try:
            cpus = tuple(_cpu(c) for c in _list(data, "cpus"))
            numa_nodes = tuple(_numa_node(n) for n in _list(data, "numa_nodes"))
            gpus = tuple(_gpu(g) for g in data.get("gpus") or ())
        except (KeyError, TypeError, ValueError) as err:
            raise InputError(f"not a valid node profile: {_describe(err)}", file=source) from err
        ids = [c.id for c in cpus]
        if len(ids) != len(set(ids)):
            raise InputError("not a valid node profile: duplicate CPU ids", file=source)
        return cls(
            name=str(data.get("name") or source),
            cpus=tuple(sorted(cpus, key=lambda c: c.id)),
            numa_nodes=tuple(sorted(numa_nodes, key=lambda n: n.id)),
            gpus=tuple(sorted(gpus, key=lambda g: g.index)),
            description=str(data.get("description") or ""),
            sources=tuple(str(s) for s in data.get("sources") or ()),
            estimates=tuple(str(s) for s in data.get("estimates") or ()),
            labels={str(k): str(v) for k, v in (data.get("labels") or {}).items()},
        )


def _list(data: Mapping[str, Any], key: str) -> Sequence[Mapping[str, Any]]:
    value = data[key]
    if not isinstance(value, list):
        raise TypeError(f"'{key}' must be a list")
    return value


def _cpu(raw: Mapping[str, Any]) -> CPUInfo:
    return CPUInfo(
        id=int(raw["id"]),
        core=int(raw["core"]),
        socket=int(raw["socket"]),
        numa=int(raw["numa"]),
        uncore_cache=_uncore_cache(raw),
    )


def _uncore_cache(raw: Mapping[str, Any]) -> int:
    value = raw.get("uncore_cache")
    if value is None:
        return 0
    if isinstance(value, (int, str)) and not isinstance(value, bool):
        try:
            return int(value)
        except ValueError:
            pass
    raise ValueError(f"cpu {raw.get('id')}: 'uncore_cache' must be an integer, got {value!r}")


def _cpu_dict(cpu: CPUInfo, with_uncore: bool) -> dict[str, int]:
    """One CPU entry; `uncore_cache` only when the profile carries L3 ids (older profiles round-trip)."""
    out = {"id": cpu.id, "core": cpu.core, "socket": cpu.socket, "numa": cpu.numa}
    if with_uncore:
        out["uncore_cache"] = cpu.uncore_cache
    return out


def _numa_node(raw: Mapping[str, Any]) -> NUMANode:
    distances_raw = raw.get("distances") or {}
    if isinstance(distances_raw, list):
        raise TypeError('\'distances\' must map node id to distance, e.g. {"0": 10, "1": 20}')
    return NUMANode(
        id=int(raw["id"]),
        memory_bytes=int(raw["memory_bytes"]),
        distances={int(k): int(v) for k, v in distances_raw.items()},
        hugepages_bytes={str(k): int(v) for k, v in (raw.get("hugepages_bytes") or {}).items()},
    )


def _gpu(raw: Mapping[str, Any]) -> GPUDevice:
    numa = raw.get("numa_node")
    return GPUDevice(
        index=int(raw["index"]),
        pci_bus_id=str(raw["pci_bus_id"]),
        numa_node=None if numa is None or int(numa) < 0 else int(numa),
        model=str(raw.get("model") or "unknown"),
        memory_bytes=None if raw.get("memory_bytes") is None else int(raw["memory_bytes"]),
        vendor=str(raw.get("vendor") or "nvidia"),
        resource_name=str(raw.get("resource_name") or "nvidia.com/gpu"),
        nvlink_domain=None if raw.get("nvlink_domain") is None else str(raw["nvlink_domain"]),
        local_cpus=tuple(int(c) for c in raw.get("local_cpus") or ()),
        memory_numa_node=_opt_int(raw.get("memory_numa_node")),
    )


def _opt_int(value: Any) -> int | None:
    return None if value is None else int(value)


def _describe(err: Exception) -> str:
    if isinstance(err, KeyError):
        return f"missing field {err.args[0]!r}"
    return str(err)
