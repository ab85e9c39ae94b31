"""Expand a compact server description (sockets, cores, threads, NUMA, GPUs) to a NodeTopology.

Preset files state a few sourced facts; this module derives the full CPU list from them in the
order Linux enumerates CPUs, so no preset hand-lists 224 CPUs. Core ids follow the kubelet v1.35
rule (pkg/kubelet/cm/cpumanager/topology: a core is named by its lowest logical CPU id).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kubegpu.errors import InputError
from kubegpu.topology.model import CPUInfo, GPUDevice, NodeTopology, NUMANode

#: How logical CPU ids are laid out on the machine.
#: socket-blocked: first threads of socket 0, then of socket 1, ..., then the second threads in the
#: same order (Intel and AMD two-socket servers with the usual MADT order: cpu c and c + cores are
#: siblings). socket-interleaved: first threads alternate sockets (cpu c on socket c % sockets), as
#: in the kubelet's topoDualSocketHT fixture. core-blocked: the threads of a core are consecutive
#: (cpu 2k and 2k+1 are siblings), as some VMs and POWER/Arm machines number them.
NUMBERINGS = ("socket-blocked", "socket-interleaved", "core-blocked")


def expand(desc: Mapping[str, Any], source: str) -> NodeTopology:
    """Build the NodeTopology a preset description stands for; InputError names the bad field."""
    if "cpus" in desc and "cpu" not in desc:
        return NodeTopology.from_dict(desc, source=source)
    try:
        cpus = _cpus(_section(desc, "cpu"))
        numa_nodes = _numa_nodes(_section(desc, "memory"), cpus)
        gpus = _gpus(desc.get("gpus") or {}, cpus)
    except (KeyError, TypeError, ValueError) as err:
        what = f"missing field {err.args[0]!r}" if isinstance(err, KeyError) else str(err)
        raise InputError(f"not a valid preset description: {what}", file=source) from err
    return NodeTopology(
        name=str(desc.get("name") or source),
        cpus=cpus,
        numa_nodes=numa_nodes,
        gpus=gpus,
        description=str(desc.get("description") or ""),
        sources=tuple(str(s) for s in desc.get("sources") or ()),
        estimates=tuple(str(s) for s in desc.get("estimates") or ()),
        labels={str(k): str(v) for k, v in (desc.get("labels") or {}).items()},
    )


def _section(desc: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = desc[key]
    if not isinstance(value, Mapping):
        raise TypeError(f"'{key}' must be a mapping")
    return value


def layout_cpus(
    sockets: int,
    cores_per_socket: int,
    threads_per_core: int,
    numa_per_socket: int = 1,
    numbering: str = "socket-blocked",
    offline: Sequence[int] = (),
    socket_order: Sequence[int] = (),
) -> tuple[CPUInfo, ...]:
    """Every logical CPU of a symmetric machine, numbered as `numbering` says (see NUMBERINGS).

    `socket_order` lists the sockets in the order their CPU ids are handed out (default 0, 1, ...);
    offline CPUs are left out, as the kubelet (through cAdvisor) sees only online ones.
    """
    if min(sockets, cores_per_socket, threads_per_core, numa_per_socket) < 1:
        raise ValueError("sockets, cores, threads per core and NUMA per socket must be >= 1")
    if cores_per_socket % numa_per_socket:
        raise ValueError(f"cores_per_socket {cores_per_socket} is not divisible by numa_per_socket")
    if numbering not in NUMBERINGS:
        raise ValueError(f"numbering must be one of {', '.join(NUMBERINGS)}, not {numbering!r}")
    order = list(socket_order) or list(range(sockets))
    if sorted(order) != list(range(sockets)):
        raise ValueError(f"socket_order must list every socket 0..{sockets - 1} once")
    total_cores = sockets * cores_per_socket
    per_numa = cores_per_socket // numa_per_socket
    placed: list[tuple[int, int, int, int]] = []  # (cpu id, socket, core in socket, thread)
    for rank, socket in enumerate(order):
        for core in range(cores_per_socket):
            for thread in range(threads_per_core):
                if numbering == "socket-blocked":
                    cpu = thread * total_cores + rank * cores_per_socket + core
                elif numbering == "socket-interleaved":
                    cpu = thread * total_cores + core * sockets + rank
                else:
                    cpu = (rank * cores_per_socket + core) * threads_per_core + thread
                placed.append((cpu, socket, core, thread))
    first_cpu = {(s, c): cpu for cpu, s, c, t in placed if t == 0}
    skip = set(offline)
    out = [
        CPUInfo(id=cpu, core=first_cpu[(s, c)], socket=s, numa=s * numa_per_socket + c // per_numa)
        for cpu, s, c, _ in placed
        if cpu not in skip
    ]
    return tuple(sorted(out, key=lambda info: info.id))


def _cpus(cpu: Mapping[str, Any]) -> tuple[CPUInfo, ...]:
    return layout_cpus(
        sockets=int(cpu["sockets"]),
        cores_per_socket=int(cpu["cores_per_socket"]),
        threads_per_core=int(cpu.get("threads_per_core", 1)),
        numa_per_socket=int(cpu.get("numa_per_socket", 1)),
        numbering=str(cpu.get("numbering", "socket-blocked")),
        offline=[int(c) for c in cpu.get("offline") or ()],
        socket_order=[int(c) for c in cpu.get("socket_order") or ()],
    )


def _numa_nodes(memory: Mapping[str, Any], cpus: tuple[CPUInfo, ...]) -> tuple[NUMANode, ...]:
    cpu_nodes = sorted({c.numa for c in cpus})
    sizes: dict[int, int] = {n: int(memory["per_numa_bytes"]) for n in cpu_nodes}
    hugepages: dict[int, dict[str, int]] = {
        n: {str(k): int(v) for k, v in (memory.get("hugepages_bytes") or {}).items()} for n in cpu_nodes
    }
    for extra in memory.get("extra_nodes") or ():
        node_id = int(extra["id"])
        if node_id in sizes:
            raise ValueError(f"extra NUMA node {node_id} already holds CPUs")
        sizes[node_id] = int(extra["memory_bytes"])
        pages = extra.get("hugepages_bytes") or {}
        hugepages[node_id] = {str(k): int(v) for k, v in pages.items()}
    ids = sorted(sizes)
    matrix = memory.get("distances")
    if matrix is None:
        matrix = [[10 if a == b else 20 for b in ids] for a in ids]
    if len(matrix) != len(ids) or any(len(row) != len(ids) for row in matrix):
        raise ValueError(f"'distances' must be a square matrix over NUMA nodes {ids}")
    return tuple(
        NUMANode(
            id=a,
            memory_bytes=sizes[a],
            distances={b: int(matrix[i][j]) for j, b in enumerate(ids)},
            hugepages_bytes=hugepages[a],
        )
        for i, a in enumerate(ids)
    )


def _gpus(gpus: Mapping[str, Any], cpus: tuple[CPUInfo, ...]) -> tuple[GPUDevice, ...]:
    out: list[GPUDevice] = []
    for index, dev in enumerate(gpus.get("devices") or ()):
        numa = dev.get("numa_node")
        numa_node = None if numa is None or int(numa) < 0 else int(numa)
        # sysfs local_cpulist: the node's CPUs, or every online CPU when the device has no node.
        local = tuple(c.id for c in cpus if numa_node is None or c.numa == numa_node)
        mem_numa = dev.get("memory_numa_node")
        out.append(
            GPUDevice(
                index=index,
                pci_bus_id=str(dev["pci_bus_id"]).lower(),
                numa_node=numa_node,
                model=str(dev.get("model") or gpus["model"]),
                memory_bytes=_opt_int(dev.get("memory_bytes", gpus.get("memory_bytes"))),
                vendor=str(gpus.get("vendor") or "nvidia"),
                resource_name=str(gpus.get("resource_name") or "nvidia.com/gpu"),
                nvlink_domain=_opt_str(dev.get("nvlink_domain", gpus.get("nvlink_domain"))),
                local_cpus=local if dev.get("local_cpus") is None else tuple(dev["local_cpus"]),
                memory_numa_node=None if mem_numa is None else int(mem_numa),
            )
        )
    return tuple(out)


def _opt_int(value: Any) -> int | None:
    return None if value is None else int(value)


def _opt_str(value: Any) -> str | None:
    return None if value is None else str(value)
