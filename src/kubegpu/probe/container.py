"""What a container may use, read from inside it: CPUs, memory nodes, cgroup limits, GPUs, /dev/shm.

Sources as the kernel and the NVIDIA container stack define them: /proc/self/status
(Cpus_allowed_list, Mems_allowed_list), cgroup v2 cpuset.cpus.effective / cpuset.mems.effective /
cpu.max / memory.max or their cgroup v1 equivalents, /proc/driver/nvidia/gpus (libnvidia-container
shows only the injected GPUs there), NVIDIA_VISIBLE_DEVICES / CUDA_VISIBLE_DEVICES, and the
/dev/shm mount (/proc/self/mounts size=, else statvfs).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from kubegpu.errors import InputError
from kubegpu.topology.cpulist import parse_cpulist
from kubegpu.topology.pci import normalize_bus_id
from kubegpu.topology.sysfs import Roots, driver_information


@dataclass(frozen=True)
class CgroupView:
    """The container's cgroup: version, cpuset and limits (None = not set or not readable)."""

    version: int | None
    path: str
    cpus: tuple[int, ...] | None
    mems: tuple[int, ...] | None
    cpu_quota: float | None  # CPUs per period (cpu.max 400000 100000 -> 4.0); None = no limit
    memory_limit: int | None


@dataclass(frozen=True)
class DriverGPU:
    """A GPU the NVIDIA driver shows inside the container (/proc/driver/nvidia/gpus/<bus>)."""

    pci_bus_id: str
    model: str | None
    uuid: str | None


@dataclass(frozen=True)
class ContainerView:
    """Everything the in-pod check compares against the node topology."""

    cpus_allowed: tuple[int, ...] | None
    mems_allowed: tuple[int, ...] | None
    cgroup: CgroupView
    driver_gpus: tuple[DriverGPU, ...]
    nvidia_visible_devices: str | None
    cuda_visible_devices: str | None
    shm_bytes: int | None
    shm_source: str
    render_gpus: tuple[str, ...] = ()  # PCI bus ids behind the /dev/dri/renderD* nodes it holds
    rocr_visible_devices: str | None = None

    @property
    def cpus(self) -> tuple[int, ...] | None:
        """The CPUs this process may run on: the affinity list, narrowed by the cgroup cpuset."""
        if self.cpus_allowed is None:
            return self.cgroup.cpus
        if self.cgroup.cpus is None:
            return self.cpus_allowed
        return tuple(sorted(set(self.cpus_allowed) & set(self.cgroup.cpus)))

    @property
    def mems(self) -> tuple[int, ...] | None:
        if self.mems_allowed is None:
            return self.cgroup.mems
        if self.cgroup.mems is None:
            return self.mems_allowed
        return tuple(sorted(set(self.mems_allowed) & set(self.cgroup.mems)))


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None


def _list(text: str | None, where: Path) -> tuple[int, ...] | None:
    if text is None:
        return None
    try:
        return parse_cpulist(text)
    except ValueError as err:
        raise InputError(f"not a CPU/node list: {err}", file=str(where)) from err


def read_status(proc: Path) -> tuple[tuple[int, ...] | None, tuple[int, ...] | None]:
    """Cpus_allowed_list and Mems_allowed_list of /proc/self/status."""
    path = proc / "self/status"
    text = _read(path)
    if text is None:
        return None, None
    fields = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            fields[key.strip()] = value.strip()
    return (
        _list(fields.get("Cpus_allowed_list"), path),
        _list(fields.get("Mems_allowed_list"), path),
    )


def _cgroup_paths(proc: Path) -> dict[str, str]:
    """controller -> path from /proc/self/cgroup ('' is the cgroup v2 unified entry)."""
    text = _read(proc / "self/cgroup") or ""
    out: dict[str, str] = {}
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        for name in controllers.split(",") if controllers else [""]:
            out[name] = path
    return out


def _first_existing(root: Path, rel: str, filename: str) -> Path | None:
    """The cgroup directory at `rel` under `root` (or its nearest ancestor) holding `filename`."""
    parts = [p for p in rel.strip("/").split("/") if p]
    while True:
        candidate = root.joinpath(*parts) / filename
        if candidate.exists():
            return candidate
        if not parts:
            return None
        parts.pop()


def read_cgroup(cgroup_root: Path, proc: Path) -> CgroupView:
    """cgroup v2 (unified, cgroup.controllers at the root) or v1 (one hierarchy per controller)."""
    paths = _cgroup_paths(proc)
    if (cgroup_root / "cgroup.controllers").exists():
        rel = paths.get("", "/")
        cpus_file = _first_existing(cgroup_root, rel, "cpuset.cpus.effective")
        mems_file = _first_existing(cgroup_root, rel, "cpuset.mems.effective")
        cpu_max = _first_existing(cgroup_root, rel, "cpu.max")
        mem_max = _first_existing(cgroup_root, rel, "memory.max")
        return CgroupView(
            version=2,
            path=rel,
            cpus=None if cpus_file is None else _list(_read(cpus_file), cpus_file),
            mems=None if mems_file is None else _list(_read(mems_file), mems_file),
            cpu_quota=_v2_quota(cpu_max),
            memory_limit=_limit(None if mem_max is None else _read(mem_max), mem_max),
        )
    cpuset_root = cgroup_root / "cpuset"
    if cpuset_root.is_dir() or (cgroup_root / "memory").is_dir():
        rel = paths.get("cpuset", "/")
        cpus_file = _first_existing(cpuset_root, rel, "cpuset.effective_cpus") or _first_existing(
            cpuset_root, rel, "cpuset.cpus"
        )
        mems_file = _first_existing(cpuset_root, rel, "cpuset.effective_mems") or _first_existing(
            cpuset_root, rel, "cpuset.mems"
        )
        cpu_dir = next((cgroup_root / d for d in ("cpu,cpuacct", "cpu") if (cgroup_root / d).is_dir()), None)
        cpu_rel = paths.get("cpu", rel)
        quota = None
        if cpu_dir is not None:
            q = _first_existing(cpu_dir, cpu_rel, "cpu.cfs_quota_us")
            p = _first_existing(cpu_dir, cpu_rel, "cpu.cfs_period_us")
            quota = _v1_quota(q, p)
        mem_file = _first_existing(cgroup_root / "memory", paths.get("memory", rel), "memory.limit_in_bytes")
        return CgroupView(
            version=1,
            path=rel,
            cpus=None if cpus_file is None else _list(_read(cpus_file), cpus_file),
            mems=None if mems_file is None else _list(_read(mems_file), mems_file),
            cpu_quota=quota,
            memory_limit=_limit(None if mem_file is None else _read(mem_file), mem_file),
        )
    return CgroupView(version=None, path="", cpus=None, mems=None, cpu_quota=None, memory_limit=None)


def _v2_quota(path: Path | None) -> float | None:
    text = None if path is None else _read(path)
    if not text:
        return None
    fields = text.split()
    if fields[0] == "max":
        return None
    try:
        period = int(fields[1]) if len(fields) > 1 else 100000
        return int(fields[0]) / period
    except ValueError as err:
        raise InputError(f"unreadable cpu.max {text!r}", file=str(path)) from err


def _v1_quota(quota: Path | None, period: Path | None) -> float | None:
    q = None if quota is None else _read(quota)
    p = None if period is None else _read(period)
    if not q or not p:
        return None
    try:
        value, per = int(q), int(p)
    except ValueError as err:
        raise InputError(f"unreadable CFS quota {q!r}/{p!r}", file=str(quota)) from err
    return None if value < 0 or per <= 0 else value / per


def _limit(text: str | None, where: Path | None) -> int | None:
    if not text or text == "max":
        return None
    try:
        value = int(text)
    except ValueError as err:
        raise InputError(f"unreadable memory limit {text!r}", file=str(where)) from err
    # cgroup v1 writes "no limit" as a huge page-aligned number (LONG_MAX rounded down).
    return None if value >= 1 << 62 else value


def read_driver_gpus(proc: Path) -> tuple[DriverGPU, ...]:
    """GPUs in /proc/driver/nvidia/gpus (only the injected ones inside a container)."""
    base = proc / "driver/nvidia/gpus"
    if not base.is_dir():
        return ()
    out = []
    for entry in sorted(base.iterdir()):
        try:
            bus_id = normalize_bus_id(entry.name)
        except ValueError:
            continue
        info = driver_information(_read(entry / "information") or "")
        out.append(DriverGPU(pci_bus_id=bus_id, model=info.get("Model"), uuid=info.get("GPU UUID")))
    return tuple(sorted(out, key=lambda g: g.pci_bus_id))


def read_shm(proc: Path, shm_path: Path) -> tuple[int | None, str]:
    """Size of /dev/shm: the tmpfs `size=` in /proc/self/mounts, else statvfs of `shm_path`."""
    mounts = _read(proc / "self/mounts") or ""
    for line in mounts.splitlines():
        fields = line.split()
        if len(fields) >= 4 and fields[1] == "/dev/shm" and fields[2] == "tmpfs":
            for option in fields[3].split(","):
                if option.startswith("size="):
                    size = _tmpfs_size(option[5:])
                    if size is not None:
                        return size, f"{proc}/self/mounts (tmpfs size={option[5:]})"
    try:
        st = os.statvfs(shm_path)
    except OSError:
        return None, f"{shm_path} not found"
    return st.f_frsize * st.f_blocks, f"statvfs({shm_path})"


def _tmpfs_size(text: str) -> int | None:
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
    try:
        if text and text[-1].lower() in units:
            return int(text[:-1]) * units[text[-1].lower()]
        return int(text)
    except ValueError:
        return None  # "size=50%" is relative to RAM: fall back to statvfs


def read_render_gpus(dev_root: Path, sys_root: Path) -> tuple[str, ...]:
    """Bus ids of the GPUs whose DRM render nodes the container holds (/dev/dri/renderD*).

    The AMD device plugin grants a GPU by mounting its render node (and /dev/kfd); sysfs
    /sys/class/drm/renderDN/device links the node to its PCI function.
    """
    folder = dev_root / "dri"
    try:
        names = sorted(p.name for p in folder.iterdir() if p.name.startswith("renderD"))
    except OSError:
        return ()
    out = []
    for name in names:
        link = sys_root / "class/drm" / name / "device"
        try:
            out.append(normalize_bus_id(link.resolve(strict=True).name))
        except (OSError, ValueError):
            continue  # a virtual GPU or a node without a PCI parent
    return tuple(sorted(set(out)))


def read_container(
    roots: Roots,
    cgroup_root: Path,
    env: Mapping[str, str],
    shm_path: Path = Path("/dev/shm"),
    dev_root: Path = Path("/dev"),
) -> ContainerView:
    """The container's view of its own resources."""
    cpus, mems = read_status(roots.proc)
    shm, shm_source = read_shm(roots.proc, shm_path)
    return ContainerView(
        cpus_allowed=cpus,
        mems_allowed=mems,
        cgroup=read_cgroup(cgroup_root, roots.proc),
        driver_gpus=read_driver_gpus(roots.proc),
        nvidia_visible_devices=env.get("NVIDIA_VISIBLE_DEVICES"),
        cuda_visible_devices=env.get("CUDA_VISIBLE_DEVICES"),
        shm_bytes=shm,
        shm_source=shm_source,
        render_gpus=read_render_gpus(dev_root, roots.sys),
        rocr_visible_devices=env.get("ROCR_VISIBLE_DEVICES") or env.get("HIP_VISIBLE_DEVICES"),
    )
