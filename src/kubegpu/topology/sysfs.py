"""Read the machine's CPU, NUMA and GPU topology from sysfs/procfs into a NodeTopology.

Mirrors what the kubelet v1.35 sees through cAdvisor (online CPUs only; a core is named by its
lowest sibling CPU id; NUMA nodes from /sys/devices/system/node, one node 0 when there are none)
and what the NVIDIA device plugin reads for GPU NUMA affinity (/sys/bus/pci/devices/*/numa_node).
Roots are parameters so tests can point at generated trees.
"""

from __future__ import annotations

import re
import socket as socket_module
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from kubegpu.errors import InputError
from kubegpu.topology.cpulist import parse_cpulist
from kubegpu.topology.model import CPUInfo, GPUDevice, NodeTopology, NUMANode
from kubegpu.topology.nvml import NvmlGPU, NvmlSource
from kubegpu.topology.pci import RESOURCE_NAMES, VENDOR_NAMES, is_gpu, normalize_bus_id

_NODE_DIR = re.compile(r"^node(\d+)$")
_CPU_DIR = re.compile(r"^cpu(\d+)$")
_PAGES_DIR = re.compile(r"^hugepages-(\d+)kB$")


@dataclass(frozen=True)
class Roots:
    """Where sysfs and procfs are mounted (the host's, or a test tree)."""

    sys: Path = Path("/sys")
    proc: Path = Path("/proc")


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None


def _cpulist(path: Path) -> tuple[int, ...] | None:
    text = _read(path)
    if text is None:
        return None
    try:
        return parse_cpulist(text)
    except ValueError as err:
        raise InputError(f"not a CPU list: {err}", file=str(path)) from err


def _int(path: Path, base: int = 10) -> int | None:
    text = _read(path)
    if text is None or text == "":
        return None
    try:
        return int(text, base)
    except ValueError as err:
        raise InputError(f"expected an integer, found {text!r}", file=str(path)) from err


def online_cpus(roots: Roots) -> tuple[int, ...]:
    """Online CPU ids: /sys/devices/system/cpu/online, else every cpuN directory."""
    base = roots.sys / "devices/system/cpu"
    listed = _cpulist(base / "online")
    if listed is not None:
        return listed
    if not base.is_dir():
        raise InputError("no CPU information (missing /sys/devices/system/cpu)", file=str(base))
    return tuple(sorted(int(m[1]) for p in base.iterdir() if (m := _CPU_DIR.match(p.name))))


def all_cpus(roots: Roots) -> tuple[int, ...]:
    """Every CPU the kernel knows of (present), online or not."""
    base = roots.sys / "devices/system/cpu"
    present = _cpulist(base / "present")
    if present is not None:
        return present
    if not base.is_dir():
        return ()
    return tuple(sorted(int(m[1]) for p in base.iterdir() if (m := _CPU_DIR.match(p.name))))


def _cpu_numa(roots: Roots, online: tuple[int, ...]) -> dict[int, int]:
    out: dict[int, int] = {}
    for node_id, path in _node_dirs(roots):
        for cpu in _cpulist(path / "cpulist") or ():
            if cpu in online:
                out[cpu] = node_id
    return out


def _node_dirs(roots: Roots) -> list[tuple[int, Path]]:
    base = roots.sys / "devices/system/node"
    if not base.is_dir():
        return []
    found = [(int(m[1]), p) for p in base.iterdir() if (m := _NODE_DIR.match(p.name))]
    return sorted(found)


def read_cpus(roots: Roots) -> tuple[CPUInfo, ...]:
    """Online CPUs with core (lowest online sibling id), socket (package id) and NUMA node."""
    online = online_cpus(roots)
    online_set = set(online)
    numa = _cpu_numa(roots, online)
    out = []
    for cpu in online:
        topo = roots.sys / f"devices/system/cpu/cpu{cpu}/topology"
        siblings = _cpulist(topo / "core_cpus_list")
        if siblings is None:
            siblings = _cpulist(topo / "thread_siblings_list")
        package = _int(topo / "physical_package_id")
        socket = 0 if package is None or package < 0 else package
        if siblings is None:
            core_id = _int(topo / "core_id")
            siblings = (cpu,) if core_id is None else _siblings_by_core_id(roots, online, socket, core_id)
        alive = [s for s in siblings if s in online_set] or [cpu]
        out.append(
            CPUInfo(
                id=cpu,
                core=min(alive),
                socket=socket,
                numa=numa.get(cpu, 0),
                uncore_cache=uncore_cache_id(roots, cpu),
            )
        )
    return tuple(out)


def uncore_cache_id(roots: Roots, cpu: int) -> int:
    """Id of the CPU's first cache above level 2 (cpuN/cache/indexM/id), as cAdvisor reports UncoreCaches.

    The kubelet keys prefer-align-cpus-by-uncorecache on it; 0 when sysfs shows no such cache.
    """
    base = roots.sys / f"devices/system/cpu/cpu{cpu}/cache"
    if not base.is_dir():
        return 0
    for folder in sorted(p for p in base.iterdir() if p.name.startswith("index")):
        level = _int(folder / "level")
        if level is not None and level > 2:
            found = _int(folder / "id")
            if found is not None:
                return found
    return 0


def _siblings_by_core_id(roots: Roots, online: tuple[int, ...], socket: int, core: int) -> tuple[int, ...]:
    found = []
    for cpu in online:
        topo = roots.sys / f"devices/system/cpu/cpu{cpu}/topology"
        package = _int(topo / "physical_package_id") or 0
        if max(package, 0) == socket and _int(topo / "core_id") == core:
            found.append(cpu)
    return tuple(found)


def _meminfo_total(path: Path) -> int | None:
    text = _read(path)
    if text is None:
        return None
    for line in text.splitlines():
        parts = line.replace(":", " ").split()
        if "MemTotal" in parts:
            value = parts[parts.index("MemTotal") + 1]
            unit = parts[parts.index("MemTotal") + 2] if len(parts) > parts.index("MemTotal") + 2 else ""
            try:
                return int(value) * (1024 if unit.lower() == "kb" else 1)
            except ValueError as err:
                raise InputError(f"unreadable MemTotal {value!r}", file=str(path)) from err
    raise InputError("no MemTotal line", file=str(path))


def page_size_key(kib: int) -> str:
    """A hugepage size in kB as Kubernetes names it: 2048 -> "2Mi", 1048576 -> "1Gi"."""
    for unit, size in (("Gi", 1 << 20), ("Mi", 1 << 10)):
        if kib % size == 0:
            return f"{kib // size}{unit}"
    return f"{kib}Ki"


def _hugepages(folder: Path) -> dict[str, int]:
    out: dict[str, int] = {}
    if not folder.is_dir():
        return out
    for entry in sorted(folder.iterdir()):
        match = _PAGES_DIR.match(entry.name)
        if not match:
            continue
        count = _int(entry / "nr_hugepages") or 0
        if count:
            kib = int(match[1])
            out[page_size_key(kib)] = count * kib * 1024
    return out


def read_numa_nodes(roots: Roots) -> tuple[tuple[NUMANode, ...], bool]:
    """NUMA nodes with memory, hugepages and distances; (nodes, True) when sysfs had NUMA info."""
    dirs = _node_dirs(roots)
    if not dirs:
        total = _meminfo_total(roots.proc / "meminfo") or 0
        pages = _hugepages(roots.sys / "kernel/mm/hugepages")
        return (NUMANode(id=0, memory_bytes=total, distances={0: 10}, hugepages_bytes=pages),), False
    ids = [node_id for node_id, _ in dirs]
    online_nodes = _cpulist(roots.sys / "devices/system/node/online")
    order = list(online_nodes) if online_nodes else ids
    nodes = []
    for node_id, path in dirs:
        raw = (_read(path / "distance") or "").split()
        try:
            values = [int(v) for v in raw]
        except ValueError as err:
            raise InputError(f"distances must be integers, found {raw!r}", file=str(path / "distance")) from err
        distances = dict(zip(order, values, strict=False)) if len(values) == len(order) else {}
        if not distances:
            distances = {node_id: 10}
        nodes.append(
            NUMANode(
                id=node_id,
                memory_bytes=_meminfo_total(path / "meminfo") or 0,
                distances=distances,
                hugepages_bytes=_hugepages(path / "hugepages"),
            )
        )
    return tuple(nodes), True


@dataclass(frozen=True)
class PciGPU:
    """A GPU as sysfs and the driver's procfs describe it, before NVML facts are merged in."""

    pci_bus_id: str
    vendor: int
    device: int
    numa_node: int | None
    local_cpus: tuple[int, ...]
    model: str | None
    memory_bytes: int | None
    uuid: str | None
    link_domain: str | None = None  # AMD Infinity Fabric (XGMI) hive membership


def read_pci_gpus(roots: Roots, online: tuple[int, ...]) -> tuple[PciGPU, ...]:
    """NVIDIA and AMD GPUs from /sys/bus/pci/devices, sorted by bus id (nvidia-smi's order)."""
    base = roots.sys / "bus/pci/devices"
    if not base.is_dir():
        return ()
    online_set = set(online)
    found = []
    for entry in sorted(base.iterdir()):
        vendor = _int(entry / "vendor", 16)
        pci_class = _int(entry / "class", 16)
        if vendor is None or pci_class is None or not is_gpu(vendor, pci_class):
            continue
        try:
            bus_id = normalize_bus_id(entry.name)
        except ValueError as err:
            raise InputError(str(err), file=str(entry)) from err
        numa = _int(entry / "numa_node")
        local = _cpulist(entry / "local_cpulist")
        info = _driver_info(roots, bus_id)
        model = info.get("Model") or _read(entry / "product_name") or None
        vram = _int(entry / "mem_info_vram_total")
        hive = _read(entry / "xgmi_hive_info/xgmi_hive_id")
        found.append(
            PciGPU(
                pci_bus_id=bus_id,
                vendor=vendor,
                device=_int(entry / "device", 16) or 0,
                numa_node=None if numa is None or numa < 0 else numa,
                local_cpus=tuple(c for c in (local or online) if c in online_set),
                model=model,
                memory_bytes=vram,
                uuid=info.get("GPU UUID"),
                link_domain="xgmi" if hive not in (None, "", "0") else None,
            )
        )
    return tuple(sorted(found, key=lambda g: g.pci_bus_id))


def _driver_info(roots: Roots, bus_id: str) -> dict[str, str]:
    """`/proc/driver/nvidia/gpus/<bus>/information` as a mapping (empty without the driver)."""
    base = roots.proc / "driver/nvidia/gpus"
    for name in (bus_id, bus_id.upper(), f"0000{bus_id}"):
        text = _read(base / name / "information")
        if text is not None:
            return driver_information(text)
    return {}


def driver_information(text: str) -> dict[str, str]:
    """Parse the NVIDIA driver's `information` file ("Model:  NVIDIA H100 80GB HBM3" lines)."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            out[key.strip()] = value.strip()
    return out


def read_node(
    roots: Roots = Roots(),
    nvml: NvmlSource | None = None,
    name: str | None = None,
    notes: tuple[str, ...] = (),
) -> NodeTopology:
    """The whole machine as a node profile; `notes` (e.g. why NVML was skipped) go to `sources`."""
    cpus = read_cpus(roots)
    online = tuple(c.id for c in cpus)
    numa_nodes, have_numa = read_numa_nodes(roots)
    known = {n.id for n in numa_nodes}
    # NVML's NUMA node id is the GPU's own memory only where that node has no CPUs (Grace
    # Hopper, GB200); on x86 PCIe machines it names the nearest CPU node instead.
    memory_only = known - {c.numa for c in cpus}
    nvml_by_bus = _by_bus(nvml.gpus() if nvml else ())
    gpus = []
    estimates = []
    for index, raw in enumerate(read_pci_gpus(roots, online)):
        facts = nvml_by_bus.get(raw.pci_bus_id)
        numa = raw.numa_node if raw.numa_node in known else None
        mem_numa = None if facts is None else facts.memory_numa_node
        gpus.append(
            GPUDevice(
                index=index,
                pci_bus_id=raw.pci_bus_id,
                numa_node=numa,
                model=(facts.model if facts else None) or raw.model or _fallback_model(raw),
                memory_bytes=(facts.memory_bytes if facts else None) or raw.memory_bytes,
                vendor=VENDOR_NAMES.get(raw.vendor, f"{raw.vendor:#06x}"),
                resource_name=RESOURCE_NAMES.get(raw.vendor, "gpu"),
                nvlink_domain=facts.nvlink_domain if facts else raw.link_domain,
                local_cpus=raw.local_cpus,
                memory_numa_node=mem_numa if mem_numa in memory_only else None,
            )
        )
        if numa is None:
            estimates.append(f"GPU {index} ({raw.pci_bus_id}) reports no NUMA node (numa_node -1)")
    offline = sorted(set(all_cpus(roots)) - set(online))
    sources = [f"probe: {roots.sys} and {roots.proc} of {name or _hostname(roots)}", *notes]
    if offline:
        sources.append(f"offline CPUs left out (the kubelet does not see them): {_short(offline)}")
    if not have_numa:
        estimates.append("no NUMA information in sysfs: one NUMA node 0 holding every CPU assumed")
    return NodeTopology(
        name=name or _hostname(roots),
        cpus=cpus,
        numa_nodes=numa_nodes,
        gpus=tuple(gpus),
        description="probed by kubegpu probe",
        sources=tuple(sources),
        estimates=tuple(estimates),
    )


def _by_bus(gpus: Iterable[NvmlGPU]) -> Mapping[str, NvmlGPU]:
    """NVML facts keyed by sysfs-form bus id (NVML writes 8-digit upper-case domains)."""
    out = {}
    for gpu in gpus:
        try:
            out[normalize_bus_id(gpu.pci_bus_id)] = gpu
        except ValueError:
            continue
    return out


def _fallback_model(raw: PciGPU) -> str:
    vendor = VENDOR_NAMES.get(raw.vendor, f"{raw.vendor:04x}")
    return f"{vendor} device {raw.device:#06x}"


def _hostname(roots: Roots) -> str:
    return _read(roots.proc / "sys/kernel/hostname") or socket_module.gethostname() or "probed-node"


def _short(ids: list[int]) -> str:
    from kubegpu.topology.cpulist import format_cpulist

    return format_cpulist(ids)
