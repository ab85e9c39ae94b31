"""The in-pod verdicts: do this container's CPUs and memory sit on its GPUs' NUMA nodes, are the
CPUs its own, and is /dev/shm big enough. Each check is pass / warn / fail; exit 0 / 1 / 2.

Follows the in-pod checks of the project runtime notes; GPU visibility follows the NVIDIA container stack
(NVIDIA_VISIBLE_DEVICES) and CUDA's CUDA_VISIBLE_DEVICES rules (an invalid entry ends the list).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from kubegpu.probe.container import ContainerView
from kubegpu.topology.cpulist import format_cpulist
from kubegpu.topology.model import GPUDevice, NodeTopology
from kubegpu.topology.pci import normalize_bus_id

#: Docker's and containerd's default /dev/shm for a container (containerd CRI defaultShmSize).
DEFAULT_SHM_BYTES = 64 << 20


class Status(StrEnum):
    passed = "pass"
    warn = "warn"
    fail = "fail"


_RANK = {Status.passed: 0, Status.warn: 1, Status.fail: 2}


@dataclass(frozen=True)
class CheckResult:
    """One verdict with the sentence that explains it."""

    name: str
    status: Status
    message: str

    def as_dict(self) -> dict[str, str]:
        return {"check": self.name, "status": self.status.value, "message": self.message}


def exit_code(results: list[CheckResult]) -> int:
    """0 when every check passed, 1 with a warning, 2 with a failure."""
    return max((_RANK[r.status] for r in results), default=0)


def visible_gpus(
    node: NodeTopology, view: ContainerView, uuids: dict[str, str] | None = None
) -> tuple[tuple[GPUDevice, ...], str]:
    """The node GPUs this container uses, and how that was decided.

    `uuids` maps GPU UUID -> PCI bus id (from the driver's procfs or NVML) for UUID-valued env vars.
    """
    uuid_to_bus = {}
    for uuid, bus in (uuids or {}).items():
        try:
            uuid_to_bus[uuid] = normalize_bus_id(bus)  # NVML writes "00000000:1B:00.0"
        except ValueError:
            continue
    uuid_to_bus.update({g.uuid: g.pci_bus_id for g in view.driver_gpus if g.uuid})
    by_bus = {g.pci_bus_id: g for g in node.gpus}
    if view.driver_gpus:
        chosen = [by_bus[g.pci_bus_id] for g in view.driver_gpus if g.pci_bus_id in by_bus]
        how = "/proc/driver/nvidia/gpus"
    else:
        env = (view.nvidia_visible_devices or "").strip()
        nvidia = [g for g in node.gpus if g.vendor == "nvidia"]
        if env in ("", "none", "void"):
            chosen = []
            how = "NVIDIA_VISIBLE_DEVICES unset" if not env else f"NVIDIA_VISIBLE_DEVICES={env}"
        elif env == "all":
            chosen = nvidia
            how = "NVIDIA_VISIBLE_DEVICES=all"
        else:
            chosen = _select(nvidia, env.split(","), uuid_to_bus, stop_at_invalid=False)
            how = f"NVIDIA_VISIBLE_DEVICES={env}"
    cuda = view.cuda_visible_devices
    if cuda is not None and chosen:
        chosen = _select(chosen, cuda.split(","), uuid_to_bus, stop_at_invalid=True)
        how += f", narrowed by CUDA_VISIBLE_DEVICES={cuda}"
    amd = [by_bus[b] for b in view.render_gpus if b in by_bus and by_bus[b].vendor == "amd"]
    if amd:
        how = ("" if chosen else f"no NVIDIA GPU ({how}); ") + "AMD via /dev/dri render nodes"
        rocr = view.rocr_visible_devices
        if rocr is not None:
            amd = _select(amd, rocr.split(","), uuid_to_bus, stop_at_invalid=True)
            how += f", narrowed by ROCR_VISIBLE_DEVICES/HIP_VISIBLE_DEVICES={rocr}"
        chosen = chosen + amd
    return tuple(chosen), how


def _select(
    gpus: list[GPUDevice], items: list[str], uuid_to_bus: dict[str, str], stop_at_invalid: bool
) -> list[GPUDevice]:
    out: list[GPUDevice] = []
    for raw in items:
        item = raw.strip()
        found: GPUDevice | None = None
        if item.isdigit() and int(item) < len(gpus):
            found = gpus[int(item)]
        elif item.startswith(("GPU-", "MIG-")):
            matches = [bus for uuid, bus in uuid_to_bus.items() if uuid.startswith(item)]
            if len(matches) == 1:
                found = next((g for g in gpus if g.pci_bus_id == matches[0]), None)
        if found is None:
            if stop_at_invalid:
                break
            continue
        if found not in out:
            out.append(found)
    return out


def run_checks(
    node: NodeTopology,
    view: ContainerView,
    min_shm_bytes: int | None = None,
    uuids: dict[str, str] | None = None,
) -> list[CheckResult]:
    """Every in-pod check, in a fixed order."""
    gpus, how = visible_gpus(node, view, uuids)
    return [
        _check_gpus(gpus, how),
        _check_cpu_numa(node, view, gpus),
        _check_mem_numa(node, view, gpus),
        _check_exclusive(node, view),
        _check_quota(view),
        _check_shm(view, min_shm_bytes),
    ]


def _names(gpus: tuple[GPUDevice, ...]) -> str:
    return ", ".join(f"GPU {g.index} ({g.pci_bus_id}, NUMA {_numa(g)})" for g in gpus)


def _numa(gpu: GPUDevice) -> str:
    return "none" if gpu.numa_node is None else str(gpu.numa_node)


def _check_gpus(gpus: tuple[GPUDevice, ...], how: str) -> CheckResult:
    if not gpus:
        return CheckResult("gpus", Status.warn, f"no GPU visible to this container ({how})")
    return CheckResult("gpus", Status.passed, f"{len(gpus)} GPU(s) visible via {how}: {_names(gpus)}")


def _gpu_nodes(gpus: tuple[GPUDevice, ...]) -> set[int] | None:
    nodes = {g.numa_node for g in gpus if g.numa_node is not None}
    return nodes or None


def _check_cpu_numa(node: NodeTopology, view: ContainerView, gpus: tuple[GPUDevice, ...]) -> CheckResult:
    name = "cpu-numa-alignment"
    if not gpus:
        return CheckResult(name, Status.passed, "no GPU to align with")
    wanted = _gpu_nodes(gpus)
    if wanted is None:
        return CheckResult(
            name,
            Status.warn,
            "the GPUs report no NUMA node (numa_node -1, typical of VMs): alignment cannot be "
            "checked and the kubelet treats these GPUs as not aligned",
        )
    cpus = view.cpus
    if cpus is None:
        return CheckResult(name, Status.warn, "the container's CPU list could not be read")
    known = [c for c in cpus if c in node.cpu_by_id]
    inside = [c for c in known if node.cpu_by_id[c].numa in wanted]
    cpu_nodes = sorted({node.cpu_by_id[c].numa for c in known})
    gpu_text = ", ".join(map(str, sorted(wanted)))
    if known and len(inside) == len(known):
        return CheckResult(
            name,
            Status.passed,
            f"all {len(known)} CPUs ({format_cpulist(known)}) are on the GPUs' NUMA node(s) {gpu_text}",
        )
    if not inside:
        return CheckResult(
            name,
            Status.fail,
            f"{_names(gpus)}: GPUs on NUMA node(s) {gpu_text} but all {len(known)} CPUs "
            f"({format_cpulist(known)}) are on NUMA node(s) {', '.join(map(str, cpu_nodes))}",
        )
    return CheckResult(
        name,
        Status.warn,
        f"only {len(inside)} of {len(known)} CPUs are on the GPUs' NUMA node(s) {gpu_text}; "
        f"the others ({format_cpulist(sorted(set(known) - set(inside)))}) are remote",
    )


def _check_mem_numa(node: NodeTopology, view: ContainerView, gpus: tuple[GPUDevice, ...]) -> CheckResult:
    name = "memory-numa-alignment"
    wanted = _gpu_nodes(gpus)
    if not gpus or wanted is None:
        return CheckResult(name, Status.passed, "nothing to align (no GPU, or GPUs without NUMA node)")
    mems = view.mems
    if mems is None:
        return CheckResult(name, Status.warn, "the container's memory node list could not be read")
    gpu_memory = {g.memory_numa_node for g in node.gpus if g.memory_numa_node is not None}
    host = [m for m in mems if m not in gpu_memory]  # GPU memory nodes (GB200) are not host memory
    gpu_text = ", ".join(map(str, sorted(wanted)))
    if host and set(host) <= wanted:
        return CheckResult(name, Status.passed, f"memory nodes {format_cpulist(host)} are the GPUs' ({gpu_text})")
    if not set(host) & wanted:
        return CheckResult(
            name,
            Status.fail,
            f"memory may only come from NUMA node(s) {format_cpulist(host)}, "
            f"not the GPUs' node(s) {gpu_text}: host-to-GPU copies cross the socket link",
        )
    return CheckResult(
        name,
        Status.warn,
        f"memory nodes {format_cpulist(host)} include remote node(s) "
        f"{format_cpulist(sorted(set(host) - wanted))} (GPUs on {gpu_text}); "
        "pages may land far from the GPUs",
    )


def _check_exclusive(node: NodeTopology, view: ContainerView) -> CheckResult:
    name = "cpu-exclusive"
    cpus = view.cpus
    if cpus is None:
        return CheckResult(name, Status.warn, "the container's CPU list could not be read")
    online = set(node.cpu_by_id)
    mine = set(cpus) & online
    if mine == online:
        return CheckResult(
            name,
            Status.warn,
            f"the container may run on all {len(online)} CPUs: not pinned (shared pool; the static "
            "CPU manager pins only Guaranteed pods with integer CPU requests)",
        )
    split = sorted(c for c in mine if not set(node.siblings(c)) <= mine)
    if split:
        return CheckResult(
            name,
            Status.warn,
            f"{len(mine)} CPUs pinned but cores are split: CPU(s) {format_cpulist(split)} run "
            "without their SMT sibling (full-pcpus-only is not in effect)",
        )
    cores = len({node.cpu_by_id[c].core for c in mine})
    return CheckResult(name, Status.passed, f"{len(mine)} CPUs pinned on {cores} whole core(s)")


def _check_quota(view: ContainerView) -> CheckResult:
    name = "cpu-quota"
    quota = view.cgroup.cpu_quota
    cpus = view.cpus
    if quota is None or cpus is None:
        return CheckResult(name, Status.passed, "no CPU quota below the cpuset")
    if quota + 1e-9 < len(cpus):
        return CheckResult(
            name,
            Status.warn,
            f"a CPU limit of {quota:g} on a cpuset of {len(cpus)} CPUs: thread pools sized by "
            "os.cpu_count() will be throttled by CFS",
        )
    return CheckResult(name, Status.passed, f"CPU limit {quota:g} covers the {len(cpus)} CPUs")


def _check_shm(view: ContainerView, min_shm: int | None) -> CheckResult:
    name = "shm"
    size = view.shm_bytes
    if size is None:
        return CheckResult(name, Status.warn, f"/dev/shm not found ({view.shm_source})")
    shown = _mib(size)
    if min_shm is not None:
        if size < min_shm:
            return CheckResult(
                name,
                Status.fail,
                f"/dev/shm is {shown}, less than the {_mib(min_shm)} asked for: DataLoader workers "
                "will die with a bus error or 'No space left on device'; mount an emptyDir with "
                "medium: Memory and a sizeLimit at /dev/shm",
            )
        return CheckResult(name, Status.passed, f"/dev/shm is {shown} (at least {_mib(min_shm)})")
    if size <= DEFAULT_SHM_BYTES:
        return CheckResult(
            name,
            Status.warn,
            f"/dev/shm is {shown}, the container runtime default: too small for PyTorch DataLoader "
            "workers; mount an emptyDir with medium: Memory at /dev/shm (or pass --min-shm)",
        )
    return CheckResult(name, Status.passed, f"/dev/shm is {shown}")


def _mib(value: int) -> str:
    if value >= 1 << 30 and value % (1 << 30) == 0:
        return f"{value >> 30} GiB"
    return f"{value / (1 << 20):.0f} MiB"
