"""Section 13.2 rules: a memory-backed, sized `/dev/shm` for GPU pods (DataLoader workers, NCCL).

Container runtimes give 64 MiB by default (containerd CRI defaultShmSize); tmpfs pages count against the pod's memory.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from kubegpu.manifests import PodTemplate, get_path
from kubegpu.rules.base import Edit, Fix, RawFinding, Rule, RuleContext, Safety, Severity, Target
from kubegpu.rules.resources_util import gpu_containers
from kubegpu.units import parse_quantity

_SECTION = "13.2"
SHM_PATH = "/dev/shm"
GI = 2**30


def _memory_volumes(template: PodTemplate) -> dict[str, Mapping[str, Any]]:
    """Volumes that are memory-backed emptyDirs, by name."""
    out: dict[str, Mapping[str, Any]] = {}
    for volume in template.volumes:
        empty_dir = volume.get("emptyDir")
        if isinstance(empty_dir, Mapping) and empty_dir.get("medium") == "Memory":
            out[str(volume.get("name"))] = empty_dir
    return out


def _shm_mount(container: Mapping[str, Any]) -> tuple[int, Mapping[str, Any]] | None:
    mounts = container.get("volumeMounts")
    if not isinstance(mounts, list):
        return None
    for i, mount in enumerate(mounts):
        if isinstance(mount, Mapping) and str(mount.get("mountPath", "")).rstrip("/") == SHM_PATH:
            return i, mount
    return None


def _pod_memory_limit(template: PodTemplate) -> int | None:
    """Sum of the app containers' memory limits in bytes, or None when any is missing or invalid."""
    total = 0
    for container in template.containers:
        if container.kind == "init":
            continue
        limits = (container.data.get("resources") or {}).get("limits") or {}
        if not isinstance(limits, Mapping) or "memory" not in limits:
            return None
        try:
            total += parse_quantity(limits["memory"]).ceil
        except Exception:  # invalid quantities are reported by KG004
            return None
    return total


def shm_size_for(memory_limit: int) -> int:
    """Half the pod's memory limit, rounded down to whole GiB (at least 1 GiB): shm shares that budget."""
    return max(GI, memory_limit // 2 // GI * GI)


def _check_missing(template: PodTemplate, ctx: RuleContext) -> Iterator[RawFinding]:
    memory_volumes = _memory_volumes(template)
    missing = []
    for container, _res in gpu_containers(template, ctx):
        found = _shm_mount(container.data)
        if found is None or str(found[1].get("name")) not in memory_volumes:
            missing.append(container)
    if not missing:
        return
    names = ", ".join(f"'{c.name}'" for c in missing)
    fix = _dshm_fix(template, missing, memory_volumes)
    yield RawFinding(
        missing[0].path,
        f"GPU container(s) {names} have no memory-backed emptyDir at /dev/shm: the runtime default is 64 MiB, "
        "and PyTorch DataLoader workers and NCCL fail with 'Bus error' or 'No space left on device'"
        + ("" if fix or template.volumes_field is None else "; set memory limits so a size can be derived, "
           "then mount an emptyDir {medium: Memory, sizeLimit: ...} at /dev/shm"),
        fix,
    )


def _dshm_fix(
    template: PodTemplate, missing: list[Any], memory_volumes: Mapping[str, Mapping[str, Any]]
) -> Fix | None:
    """Mount an existing unmounted memory-backed volume, or add one sized from the memory limit.

    Never derives what it cannot: no fix when a container already mounts something else at /dev/shm,
    when the pod has no volumes list of its own (TrainJob), or when no memory limit sizes a new volume.
    """
    volumes_field = template.volumes_field
    if volumes_field is None or any(_shm_mount(c.data) for c in missing):
        return None
    mounted = {str(m.get("name")) for c in template.containers
               for m in (c.data.get("volumeMounts") or []) if isinstance(m, Mapping)}
    unused = [name for name in memory_volumes if name not in mounted]
    edits: list[Edit] = []
    if unused:
        volume_name = unused[0]
        description = f"mount the existing memory-backed volume '{volume_name}' at /dev/shm"
    else:
        limit = _pod_memory_limit(template)
        if limit is None:
            return None
        size = f"{shm_size_for(limit) // GI}Gi"
        volume_name = "dshm" if "dshm" not in {str(v.get("name")) for v in template.volumes} else "kubegpu-dshm"
        volume = {"name": volume_name, "emptyDir": {"medium": "Memory", "sizeLimit": size}}
        if isinstance(get_path(template.document.data, volumes_field), list):
            edits.append(Edit("add", (*volumes_field, "-"), volume))
        else:
            edits.append(Edit("add", volumes_field, [volume]))
        description = f"mount a {size} memory-backed emptyDir at /dev/shm (half the pod's memory limit)"
    for container in missing:
        mount = {"name": volume_name, "mountPath": SHM_PATH}
        if isinstance(container.data.get("volumeMounts"), list):
            edits.append(Edit("add", (*container.path, "volumeMounts", "-"), mount))
        else:
            edits.append(Edit("add", (*container.path, "volumeMounts"), [mount]))
    return Fix(description, Safety.SAFE, tuple(edits))


def _check_unsized(template: PodTemplate, ctx: RuleContext) -> Iterator[RawFinding]:
    memory_volumes = _memory_volumes(template)
    limit = _pod_memory_limit(template)
    seen: set[str] = set()
    for container, _res in gpu_containers(template, ctx):
        found = _shm_mount(container.data)
        if found is None:
            continue
        name = str(found[1].get("name"))
        if name not in memory_volumes or name in seen:
            continue
        seen.add(name)
        volumes_field = template.volumes_field
        if volumes_field is None:
            continue
        raw_volumes = get_path(template.document.data, volumes_field)
        if not isinstance(raw_volumes, list):
            continue
        index = next(i for i, v in enumerate(raw_volumes) if isinstance(v, Mapping) and str(v.get("name")) == name)
        volume_path = (*volumes_field, index, "emptyDir")
        size_raw = memory_volumes[name].get("sizeLimit")
        if size_raw is None:
            fix = None
            if limit is not None:
                size = f"{shm_size_for(limit) // GI}Gi"
                fix = Fix(f"set sizeLimit {size} (half the pod's memory limit)", Safety.SAFE,
                          (Edit("add", (*volume_path, "sizeLimit"), size),))
            yield RawFinding(volume_path, f"the /dev/shm emptyDir '{name}' has no sizeLimit: it can grow to the "
                             "node's memory and the pod is evicted or OOM-killed instead of failing clearly", fix)
            continue
        try:
            size_bytes = parse_quantity(size_raw).ceil
        except Exception:
            continue
        if limit is not None and size_bytes > limit:
            yield RawFinding((*volume_path, "sizeLimit"),
                             f"/dev/shm sizeLimit {size_raw} is above the pod's memory limit "
                             f"({limit // GI}Gi): shm pages are charged to that limit, so the container is "
                             "OOM-killed before /dev/shm is full")


def _check_host_shared(template: PodTemplate, ctx: RuleContext) -> Iterator[RawFinding]:
    if template.spec.get("hostIPC") is True:
        yield RawFinding((*template.path, "hostIPC"), "hostIPC: true shares the node's /dev/shm and IPC namespace "
                         "with every such pod: no isolation, no size limit per pod; use a memory-backed emptyDir")
    volumes_field = template.volumes_field or (*template.path, "volumes")
    raw_volumes = get_path(template.document.data, volumes_field)
    for i, volume in enumerate(raw_volumes if isinstance(raw_volumes, list) else []):
        host = volume.get("hostPath") if isinstance(volume, Mapping) else None
        if isinstance(host, Mapping) and str(host.get("path", "")).rstrip("/") == SHM_PATH:
            yield RawFinding((*volumes_field, i, "hostPath"),
                             f"volume '{volume.get('name')}' mounts the node's /dev/shm: pods share and can fill "
                             "the host's shared memory; use an emptyDir with medium: Memory and a sizeLimit")


DSHM_MISSING = Rule(
    code="KG201", name="dshm-missing", section=_SECTION, severity=Severity.WARNING,
    summary="A GPU container has no memory-backed emptyDir mounted at /dev/shm.",
    target=Target.TEMPLATE, check=_check_missing, fixable=True,
    rationale="Container runtimes give /dev/shm 64 MiB. PyTorch DataLoader workers pass batches through "
    "shared memory and NCCL uses it for intra-node transport; both crash or slow down. The fix mounts an "
    "emptyDir {medium: Memory} sized at half the pod's memory limit, since shm counts against it.",
    bad_example="containers:\n- name: train\n  resources: {limits: {nvidia.com/gpu: 8, memory: 512Gi}}",
    good_example="volumes:\n- name: dshm\n  emptyDir: {medium: Memory, sizeLimit: 256Gi}\n"
    "containers:\n- name: train\n  volumeMounts:\n  - {name: dshm, mountPath: /dev/shm}",
)
DSHM_UNSIZED = Rule(
    code="KG202", name="dshm-unsized", section=_SECTION, severity=Severity.WARNING,
    summary="The /dev/shm emptyDir has no sizeLimit, or one above the pod's memory limit.",
    target=Target.TEMPLATE, check=_check_unsized, fixable=True,
    rationale="Memory-backed emptyDir pages are charged to the pod's memory limit. Without a sizeLimit a "
    "runaway writer fills the node; with one above the limit, the container is OOM-killed first.",
    bad_example="emptyDir: {medium: Memory}", good_example="emptyDir: {medium: Memory, sizeLimit: 32Gi}",
)
DSHM_HOST_SHARED = Rule(
    code="KG203", name="dshm-host-shared", section=_SECTION, severity=Severity.WARNING,
    summary="A GPU pod shares the host's /dev/shm (hostPath /dev/shm or hostIPC).",
    target=Target.TEMPLATE, check=_check_host_shared,
    rationale="Sharing the node's /dev/shm removes isolation between pods and any per-pod size limit; a "
    "memory-backed emptyDir gives each pod its own, sized, accounted shared memory.",
    bad_example="hostIPC: true", good_example="volumes:\n- name: dshm\n  emptyDir: {medium: Memory, sizeLimit: 32Gi}",
)

RULES: tuple[Rule, ...] = (DSHM_MISSING, DSHM_UNSIZED, DSHM_HOST_SHARED)
