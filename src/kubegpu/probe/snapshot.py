"""Copy exactly the files `kubegpu probe` and `probe --check` read into a folder, so a machine can
be probed again elsewhere (`--sysfs-root DIR/sys --procfs-root DIR/proc --cgroup-root DIR/cgroup`).

Used to turn a real node (a GPU machine, a bug report) into a test fixture; NVML facts and the GPU
environment variables are saved beside the trees (nvml.json, env.json).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict
from pathlib import Path

from kubegpu.errors import InputError
from kubegpu.topology.nvml import NvmlGPU, NvmlSource, RecordedNvml
from kubegpu.topology.sysfs import Roots

_CPU_FILES = (
    "topology/core_cpus_list",
    "topology/thread_siblings_list",
    "topology/core_id",
    "topology/physical_package_id",
    "online",
)
_NODE_FILES = ("cpulist", "distance", "meminfo")
_PCI_ALL = ("vendor", "class")
_PCI_GPU = (
    "device",
    "numa_node",
    "local_cpulist",
    "product_name",
    "mem_info_vram_total",
    "xgmi_hive_info/xgmi_hive_id",
)
_CGROUP_V2 = ("cpuset.cpus.effective", "cpuset.mems.effective", "cpu.max", "memory.max")
_CGROUP_V1 = {
    "cpuset": ("cpuset.effective_cpus", "cpuset.cpus", "cpuset.effective_mems", "cpuset.mems"),
    "cpu,cpuacct": ("cpu.cfs_quota_us", "cpu.cfs_period_us"),
    "cpu": ("cpu.cfs_quota_us", "cpu.cfs_period_us"),
    "memory": ("memory.limit_in_bytes",),
}
ENV_KEYS = (
    "NVIDIA_VISIBLE_DEVICES",
    "CUDA_VISIBLE_DEVICES",
    "ROCR_VISIBLE_DEVICES",
    "HIP_VISIBLE_DEVICES",
)


def _copy(src: Path, dest: Path) -> None:
    try:
        data = src.read_bytes()
    except OSError:
        return  # absent or unreadable on this machine: the probe treats it the same way
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_bytes(data)


def _copy_lines(src: Path, dest: Path, keep: Callable[[str], bool]) -> None:
    try:
        lines = src.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text("".join(f"{line}\n" for line in lines if keep(line)), encoding="utf-8")


def _children(folder: Path, pattern: str) -> list[Path]:
    regex = re.compile(pattern)
    try:
        return sorted(p for p in folder.iterdir() if regex.match(p.name))
    except OSError:
        return []


def _copy_many(src_root: Path, dest_root: Path, rels: Iterable[str]) -> None:
    for rel in rels:
        _copy(src_root / rel, dest_root / rel)


def snapshot(
    roots: Roots,
    cgroup_root: Path,
    dest: Path,
    env: Mapping[str, str],
    nvml: NvmlSource | None,
    dev_root: Path = Path("/dev"),
) -> None:
    """Write DIR/sys, DIR/proc, DIR/cgroup, DIR/dev, DIR/env.json and (with NVML) DIR/nvml.json."""
    if dest.exists() and any(dest.iterdir()):
        raise InputError("snapshot folder must be empty or absent", file=str(dest))
    sys_out, proc_out, cg_out = dest / "sys", dest / "proc", dest / "cgroup"
    cpu = "devices/system/cpu"
    _copy_many(roots.sys, sys_out, (f"{cpu}/online", f"{cpu}/present", f"{cpu}/possible"))
    for folder in _children(roots.sys / cpu, r"^cpu\d+$"):
        _copy_many(roots.sys, sys_out, (f"{cpu}/{folder.name}/{f}" for f in _CPU_FILES))
    node = "devices/system/node"
    _copy_many(roots.sys, sys_out, (f"{node}/online", f"{node}/possible"))
    for folder in _children(roots.sys / node, r"^node\d+$"):
        _copy_many(roots.sys, sys_out, (f"{node}/{folder.name}/{f}" for f in _NODE_FILES))
        for pages in _children(folder / "hugepages", r"^hugepages-\d+kB$"):
            rel = f"{node}/{folder.name}/hugepages/{pages.name}/nr_hugepages"
            _copy(roots.sys / rel, sys_out / rel)
    for pages in _children(roots.sys / "kernel/mm/hugepages", r"^hugepages-\d+kB$"):
        rel = f"kernel/mm/hugepages/{pages.name}/nr_hugepages"
        _copy(roots.sys / rel, sys_out / rel)
    pci = "bus/pci/devices"
    for device in _children(roots.sys / pci, r"^[0-9a-fA-F:.]+$"):
        _copy_many(roots.sys, sys_out, (f"{pci}/{device.name}/{f}" for f in _PCI_ALL))
        vendor = (
            (sys_out / pci / device.name / "vendor").read_text().strip()
            if (sys_out / pci / device.name / "vendor").exists()
            else ""
        )
        if vendor.lower() in ("0x10de", "0x1002"):
            _copy_many(roots.sys, sys_out, (f"{pci}/{device.name}/{f}" for f in _PCI_GPU))
    _copy_many(roots.proc, proc_out, ("meminfo", "sys/kernel/hostname", "self/cgroup"))
    # Only the lines the check reads: status and mounts otherwise carry ids and host paths.
    _copy_lines(
        roots.proc / "self/status",
        proc_out / "self/status",
        lambda line: line.startswith(("Cpus_allowed_list:", "Mems_allowed_list:")),
    )
    _copy_lines(
        roots.proc / "self/mounts",
        proc_out / "self/mounts",
        lambda line: len(line.split()) > 2 and line.split()[1] == "/dev/shm",
    )
    for gpu in _children(roots.proc / "driver/nvidia/gpus", r"."):
        rel = f"driver/nvidia/gpus/{gpu.name}/information"
        _copy(roots.proc / rel, proc_out / rel)
    _copy_cgroup(roots.proc, cgroup_root, cg_out)
    _copy_render_nodes(dev_root, roots.sys, dest)
    dest.mkdir(parents=True, exist_ok=True)
    saved_env = {k: env[k] for k in ENV_KEYS if k in env}
    (dest / "env.json").write_text(json.dumps(saved_env, indent=2) + "\n")
    if nvml is not None:
        facts = [asdict(g) for g in nvml.gpus()]
        (dest / "nvml.json").write_text(json.dumps(facts, indent=2) + "\n")


def _copy_cgroup(proc: Path, cgroup_root: Path, out: Path) -> None:
    paths: dict[str, str] = {}
    try:
        lines = (proc / "self/cgroup").read_text().splitlines()
    except OSError:
        lines = []
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) == 3:
            for name in parts[1].split(",") if parts[1] else [""]:
                paths[name] = parts[2]
            if "," in parts[1]:
                paths[parts[1]] = parts[2]
    if (cgroup_root / "cgroup.controllers").exists():
        _copy(cgroup_root / "cgroup.controllers", out / "cgroup.controllers")
        _copy_along(cgroup_root, out, paths.get("", "/"), _CGROUP_V2)
        return
    for controller, files in _CGROUP_V1.items():
        rel = paths.get(controller, paths.get(controller.split(",")[0], "/"))
        _copy_along(cgroup_root / controller, out / controller, rel, files)


def _copy_along(root: Path, out: Path, rel: str, files: Iterable[str]) -> None:
    """Copy `files` from every directory between `root` and `root/rel` (the probe walks upwards)."""
    parts = [p for p in rel.strip("/").split("/") if p]
    names = tuple(files)
    for depth in range(len(parts) + 1):
        folder = Path(*parts[:depth]) if depth else Path()
        for name in names:
            _copy(root / folder / name, out / folder / name)


def _copy_render_nodes(dev_root: Path, sys_root: Path, dest: Path) -> None:
    """Record /dev/dri/renderD* (as empty files) and each node's PCI device as a relative link."""
    for node in _children(dev_root / "dri", r"^renderD\d+$"):
        try:
            bus = (sys_root / "class/drm" / node.name / "device").resolve(strict=True).name
        except OSError:
            continue
        (dest / "dev/dri").mkdir(parents=True, exist_ok=True)
        (dest / "dev/dri" / node.name).touch()
        link = dest / "sys/class/drm" / node.name / "device"
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(Path("../../../bus/pci/devices") / bus)


def load_recorded(folder: Path) -> tuple[RecordedNvml | None, dict[str, str]]:
    """NVML facts and environment saved by `snapshot` (None when NVML was not used)."""
    env_file, nvml_file = folder / "env.json", folder / "nvml.json"
    try:
        env = json.loads(env_file.read_text()) if env_file.exists() else {}
        raw = json.loads(nvml_file.read_text()) if nvml_file.exists() else None
        nvml = None if raw is None else RecordedNvml(tuple(NvmlGPU(**g) for g in raw))
    except (OSError, ValueError, TypeError) as err:
        raise InputError(f"unreadable snapshot: {err}", file=str(folder)) from err
    return nvml, {str(k): str(v) for k, v in env.items()}
