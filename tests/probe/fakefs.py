"""Write fake sysfs/procfs/cgroup trees from a NodeTopology, the way Linux lays them out.

Used to prove that the probe recovers a preset exactly and that the in-pod check judges an aligned
and a misaligned container correctly. Layout: Linux Documentation/ABI (sysfs-devices-system-cpu,
sysfs-devices-node, sysfs-bus-pci), proc(5), cgroup-v1/cpusets and cgroup-v2.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from kubegpu.topology.cpulist import format_cpulist
from kubegpu.topology.model import NodeTopology
from kubegpu.topology.nvml import NvmlGPU, RecordedNvml
from kubegpu.topology.sysfs import Roots

NVIDIA_DEVICE_IDS = {"NVIDIA H100 80GB HBM3": 0x2330, "NVIDIA L40S": 0x26B9, "NVIDIA GB200": 0x2941}
PAGE_KIB = {"2Mi": 2048, "1Gi": 1048576}


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "\n", encoding="utf-8")


@dataclass(frozen=True)
class FakeMachine:
    """Where the fake trees are: sysfs, procfs and the cgroup mount."""

    roots: Roots
    cgroup: Path


def write_machine(
    topo: NodeTopology,
    root: Path,
    *,
    offline: Iterable[int] = (),
    numa: bool = True,
    driver_procfs: bool = True,
    hostname: str = "fake-node",
    sibling_file: str = "core_cpus_list",
) -> FakeMachine:
    """Host view of `topo`: CPUs (with `offline` ones), NUMA nodes (or none), PCI GPUs, procfs."""
    sys_root, proc_root = root / "sys", root / "proc"
    cpu_base = sys_root / "devices/system/cpu"
    offline_set = set(offline)
    all_ids = [c.id for c in topo.cpus]
    online = [c for c in all_ids if c not in offline_set]
    _write(cpu_base / "online", format_cpulist(online))
    _write(cpu_base / "present", format_cpulist(all_ids))
    _write(cpu_base / "possible", format_cpulist(all_ids))
    for cpu in topo.cpus:
        folder = cpu_base / f"cpu{cpu.id}"
        if cpu.id in offline_set:  # an offline CPU keeps its directory but loses topology/
            _write(folder / "online", "0")
            continue
        siblings = [s for s in topo.siblings(cpu.id) if s not in offline_set]
        core_in_package = sorted({c.core for c in topo.cpus if c.socket == cpu.socket}).index(cpu.core)
        _write(folder / "topology" / sibling_file, format_cpulist(siblings))
        _write(folder / "topology/core_id", str(core_in_package))
        _write(folder / "topology/physical_package_id", str(cpu.socket))
    mem_total = sum(n.memory_bytes for n in topo.numa_nodes)
    _write(proc_root / "meminfo", f"MemTotal:       {mem_total // 1024} kB\nMemFree:        1024 kB")
    _write(proc_root / "sys/kernel/hostname", hostname)
    if numa:
        node_base = sys_root / "devices/system/node"
        ids = [n.id for n in topo.numa_nodes]
        _write(node_base / "online", format_cpulist(ids))
        _write(node_base / "possible", format_cpulist(ids))
        for node in topo.numa_nodes:
            folder = node_base / f"node{node.id}"
            cpus = [c for c in topo.cpus_in_numa(node.id) if c not in offline_set]
            _write(folder / "cpulist", format_cpulist(cpus))
            _write(folder / "distance", " ".join(str(node.distances.get(j, 20)) for j in ids))
            kib = node.memory_bytes // 1024
            _write(
                folder / "meminfo",
                f"Node {node.id} MemTotal:       {kib} kB\nNode {node.id} MemFree: 1 kB",
            )
            for size, total in node.hugepages_bytes.items():
                page = PAGE_KIB[size]
                _write(
                    folder / f"hugepages/hugepages-{page}kB/nr_hugepages",
                    str(total // (page * 1024)),
                )
    else:
        for size, total in (topo.numa_nodes[0].hugepages_bytes if topo.numa_nodes else {}).items():
            page = PAGE_KIB[size]
            _write(
                sys_root / f"kernel/mm/hugepages/hugepages-{page}kB/nr_hugepages",
                str(total // (page * 1024)),
            )
    pci = sys_root / "bus/pci/devices"
    for gpu in topo.gpus:
        folder = pci / gpu.pci_bus_id
        vendor = 0x10DE if gpu.vendor == "nvidia" else 0x1002
        pci_class = 0x030200 if gpu.vendor == "nvidia" else 0x120000
        _write(folder / "vendor", f"{vendor:#06x}")
        _write(folder / "device", f"{NVIDIA_DEVICE_IDS.get(gpu.model, 0x74A1):#06x}")
        _write(folder / "class", f"{pci_class:#08x}")
        _write(folder / "numa_node", str(-1 if gpu.numa_node is None or not numa else gpu.numa_node))
        local = [c for c in gpu.local_cpus if c not in offline_set] if numa else online
        _write(folder / "local_cpulist", format_cpulist(local))
        if gpu.vendor == "amd":
            _write(folder / "product_name", gpu.model)
            drm = sys_root / f"class/drm/renderD{128 + gpu.index}"
            drm.mkdir(parents=True, exist_ok=True)
            (drm / "device").symlink_to(Path("../../../bus/pci/devices") / gpu.pci_bus_id)
            if gpu.memory_bytes is not None:
                _write(folder / "mem_info_vram_total", str(gpu.memory_bytes))
            if gpu.nvlink_domain == "xgmi":
                _write(folder / "xgmi_hive_info/xgmi_hive_id", "13470508233524453642")
        elif driver_procfs:
            _write(
                proc_root / f"driver/nvidia/gpus/{gpu.pci_bus_id}/information",
                _information(gpu.index, gpu.model, gpu.pci_bus_id),
            )
    # A probe must skip these: an NVSwitch (NVIDIA bridge class), an ASPEED VGA, AMD audio.
    for bus, vendor, pci_class in (
        ("0000:f5:00.0", 0x10DE, 0x068000),
        ("0000:f2:00.0", 0x1A03, 0x030000),
        ("0000:f3:00.1", 0x1002, 0x040300),
    ):
        _write(pci / bus / "vendor", f"{vendor:#06x}")
        _write(pci / bus / "class", f"{pci_class:#08x}")
        _write(pci / bus / "numa_node", "0")
    return FakeMachine(roots=Roots(sys=sys_root, proc=proc_root), cgroup=root / "cgroup")


def gpu_uuid(index: int) -> str:
    return f"GPU-{index:08x}-0000-4000-8000-{index:012x}"


def _information(index: int, model: str, bus_id: str) -> str:
    return "\n".join(
        [
            f"Model: \t\t {model}",
            "IRQ:             10",
            f"GPU UUID: \t {gpu_uuid(index)}",
            "Bus Type:        PCIe",
            f"Bus Location: \t {bus_id}",
            f"Device Minor: \t {index}",
        ]
    )


def recorded_nvml(topo: NodeTopology) -> RecordedNvml:
    """NVML facts for the preset's GPUs as NVML writes them (8-hex-digit domains, upper case)."""
    out = []
    for g in topo.gpus:
        if g.vendor != "nvidia":  # NVML sees NVIDIA GPUs only
            continue
        domain, rest = g.pci_bus_id.split(":", 1)
        out.append(
            NvmlGPU(
                pci_bus_id=f"{int(domain, 16):08X}:{rest.upper()}",
                model=g.model,
                memory_bytes=g.memory_bytes,
                uuid=gpu_uuid(g.index),
                memory_numa_node=g.memory_numa_node,
                nvlink_domain=g.nvlink_domain,
            )
        )
    return RecordedNvml(tuple(out))


def write_container(
    machine: FakeMachine,
    topo: NodeTopology,
    *,
    cpus: Iterable[int],
    mems: Iterable[int],
    gpus: Iterable[int],
    cgroup_version: int = 2,
    shm_bytes: int | None = 64 << 20,
    cpu_quota: float | None = None,
    env_devices: bool = False,
) -> Mapping[str, str]:
    """Container view inside `machine`: status, cgroup, the driver's GPU list, /dev/shm mount.

    Returns the environment the container would have (NVIDIA_VISIBLE_DEVICES when `env_devices`,
    in which case /proc/driver/nvidia/gpus is left out, as with CDI or a non-NVIDIA runtime).
    """
    proc = machine.roots.proc
    cpu_text, mem_text = format_cpulist(cpus), format_cpulist(mems)
    _write(
        proc / "self/status",
        f"Name:\tpython\nCpus_allowed_list:\t{cpu_text}\nMems_allowed_list:\t{mem_text}",
    )
    pod_path = "/kubepods.slice/kubepods-pod1234.slice/cri-containerd-abc.scope"
    cg = machine.cgroup
    if cgroup_version == 2:
        _write(proc / "self/cgroup", f"0::{pod_path}")
        _write(cg / "cgroup.controllers", "cpuset cpu io memory pids")
        folder = cg / pod_path.strip("/")
        _write(folder / "cpuset.cpus.effective", cpu_text)
        _write(folder / "cpuset.mems.effective", mem_text)
        _write(
            folder / "cpu.max",
            "max 100000" if cpu_quota is None else f"{int(cpu_quota * 100000)} 100000",
        )
        _write(folder / "memory.max", "max")
    else:
        _write(
            proc / "self/cgroup",
            "\n".join(
                [
                    f"12:cpuset:{pod_path}",
                    f"4:cpu,cpuacct:{pod_path}",
                    f"3:memory:{pod_path}",
                ]
            ),
        )
        _write(cg / "cpuset" / pod_path.strip("/") / "cpuset.effective_cpus", cpu_text)
        _write(cg / "cpuset" / pod_path.strip("/") / "cpuset.effective_mems", mem_text)
        quota = -1 if cpu_quota is None else int(cpu_quota * 100000)
        _write(cg / "cpu,cpuacct" / pod_path.strip("/") / "cpu.cfs_quota_us", str(quota))
        _write(cg / "cpu,cpuacct" / pod_path.strip("/") / "cpu.cfs_period_us", "100000")
        _write(cg / "memory" / pod_path.strip("/") / "memory.limit_in_bytes", str(9223372036854771712))
    chosen = list(gpus)
    driver = proc / "driver/nvidia/gpus"
    for gpu in topo.gpus:  # libnvidia-container re-exposes only the injected GPUs
        info = driver / gpu.pci_bus_id
        if gpu.vendor != "nvidia":
            continue
        if gpu.index in chosen and not env_devices:
            _write(info / "information", _information(gpu.index, gpu.model, gpu.pci_bus_id))
            continue
        for child in sorted(info.glob("*")):
            child.unlink()
        if info.exists():
            info.rmdir()
    dri = machine.roots.sys.parent / "dev/dri"
    for gpu in topo.gpus:  # the AMD device plugin mounts the granted GPUs' render nodes
        node = dri / f"renderD{128 + gpu.index}"
        if gpu.vendor == "amd" and gpu.index in chosen:
            dri.mkdir(parents=True, exist_ok=True)
            node.touch()
        elif node.exists():
            node.unlink()
    mounts = [
        "overlay / overlay rw,relatime 0 0",
        "proc /proc proc rw,nosuid,nodev,noexec,relatime 0 0",
    ]
    if shm_bytes is not None:
        mounts.append(f"shm /dev/shm tmpfs rw,nosuid,nodev,noexec,relatime,size={shm_bytes // 1024}k 0 0")
    _write(proc / "self/mounts", "\n".join(mounts))
    env = {}
    if env_devices:
        env["NVIDIA_VISIBLE_DEVICES"] = ",".join(gpu_uuid(i) for i in chosen)
    return env
