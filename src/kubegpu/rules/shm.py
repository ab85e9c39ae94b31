"""/dev/shm rules: a memory-backed, sized `/dev/shm` for GPU pods (DataLoader workers, NCCL).

Container runtimes give 64 MiB by default (containerd CRI defaultShmSize); tmpfs pages count against the pod's memory.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from decimal import Decimal
from typing import Any

import kubegpu.manifests.pod as podmodel
from kubegpu.manifests import (
    ContainerRef,
    Document,
    FieldPath,
    PodTemplate,
    as_mapping,
    format_path,
    get_path,
    is_mapping,
    mapping_items,
    memoised,
)
from kubegpu.manifests.gpu_containers import gpu_containers
from kubegpu.manifests.resources import template_pod
from kubegpu.manifests.template import ContainerFill
from kubegpu.ruleapi import Edit, Fix, RawFinding, Rule, RuleContext, Safety, Severity, Target
from kubegpu.ruleapi.options import RuleOption, quantity_above
from kubegpu.units import parse_quantity
from kubegpu.units.quantity import format_quantity
from kubegpu.workloads import kind_of, pod_templates, trainjob
from kubegpu.workloads.stack import stack_of

_PRACTICE = "/dev/shm"
SHM_PATH = "/dev/shm"
GI = 2**30


MI = 2**20


def _pod_volumes(template: PodTemplate) -> list[tuple[FieldPath, Mapping[str, Any]]]:
    """Every volume of the pod with its path: the pod spec's own list and, for Argo, the workflow-wide one too.

    A TrainJob has no volumes list of its own (its runtime's pod template has), so it has none here.
    Found once per template (read-only).
    """
    return memoised(template, "shm.pod_volumes", _find_pod_volumes, template)


def _find_pod_volumes(template: PodTemplate) -> list[tuple[FieldPath, Mapping[str, Any]]]:
    volumes_field = template.volumes_field
    if volumes_field is None:
        return []
    out: list[tuple[FieldPath, Mapping[str, Any]]] = []
    adapter = kind_of(template.document)
    if adapter is not None and adapter.operator_pods:  # the operator adds these volumes; the object lists none
        volumes = template.spec.get("volumes")
        return [
            ((*volumes_field, i), v)
            for i, v in enumerate(volumes if isinstance(volumes, list) else [])
            if isinstance(v, Mapping)
        ]
    own = (*template.path, "volumes")
    for field in (volumes_field,) if volumes_field == own else (volumes_field, own):
        raw = get_path(template.document.data, field)
        if isinstance(raw, list):
            for i, volume in enumerate(raw):
                if is_mapping(volume):
                    out.append(((*field, i), volume))
    return out


def _volume(template: PodTemplate, name: str) -> tuple[FieldPath, Mapping[str, Any]] | None:
    return next(((path, v) for path, v in _pod_volumes(template) if str(v.get("name")) == name), None)


def _memory_volumes(template: PodTemplate) -> dict[str, tuple[FieldPath, Mapping[str, Any]]]:
    """Volumes that are memory-backed emptyDirs, by name: the emptyDir's path and its fields (read-only)."""
    return memoised(template, "shm.memory_volumes", _find_memory_volumes, template)


def _find_memory_volumes(template: PodTemplate) -> dict[str, tuple[FieldPath, Mapping[str, Any]]]:
    out: dict[str, tuple[FieldPath, Mapping[str, Any]]] = {}
    for path, volume in _pod_volumes(template):
        empty_dir = volume.get("emptyDir")
        if is_mapping(empty_dir) and empty_dir.get("medium") == "Memory":
            out.setdefault(str(volume.get("name")), ((*path, "emptyDir"), empty_dir))
    return out


def _shm_mount(container: Mapping[str, Any]) -> tuple[int, Mapping[str, Any]] | None:
    mounts = container.get("volumeMounts")
    if not isinstance(mounts, list):
        return None
    for i, mount in enumerate(mounts):
        if is_mapping(mount) and str(mount.get("mountPath", "")).rstrip("/") == SHM_PATH:
            return i, mount
    return None


def _shm_volume_name(container: ContainerRef) -> str | None:
    found = _shm_mount(container.data)
    return None if found is None else str(found[1].get("name"))


def _label(container: ContainerRef) -> str:
    """The container's name, or the field that holds it (a KServe model, an Argo step, a TrainJob trainer)."""
    return container.name or format_path(container.path)


def _pod_memory_limit(template: PodTemplate) -> int | None:
    """The pod's memory limit in bytes (PodLimits: pod-level, else app containers and sidecars added, init
    containers a maximum), or None when a running container has no (valid) memory limit: no pod limit then."""
    return memoised(template, "shm.pod_memory_limit", _find_pod_memory_limit, template)


def _find_pod_memory_limit(template: PodTemplate) -> int | None:
    model = template_pod(template)
    if model.resources is not None and "memory" in model.resources.limits:
        return podmodel.canonical("memory", model.resources.limits["memory"])
    steps: list[tuple[str, podmodel.Amounts]] = []
    for c in model.containers:
        if "memory" in c.limits:
            steps.append((c.kind, {"memory": c.limits["memory"]}))
        elif c.kind == podmodel.KIND_INIT:
            steps.append((c.kind, {}))
        else:
            return None  # invalid quantities are reported by KG004
    # PodLimits' one summation, of memory alone (no pod-level memory limit here): the other resources cost time
    memory = podmodel.aggregate(steps).get("memory")
    return None if memory is None else podmodel.canonical("memory", memory)


def shm_size_for(memory_limit: int) -> int:
    """Half the pod's memory limit, rounded down to whole GiB (to whole MiB below 2 GiB): shm shares that budget."""
    half = memory_limit // 2
    return half // GI * GI if half >= GI else max(MI, half // MI * MI)


RUNTIME_DEFAULT_SHM = 64 * 2**20


def shm_sizable(memory_limit: int) -> bool:
    """Half the memory limit gives /dev/shm more than the runtime's 64 MiB default (else a fix would not help)."""
    return shm_size_for(memory_limit) > RUNTIME_DEFAULT_SHM


def shm_size_text(memory_limit: int) -> str:
    """`shm_size_for` written as a quantity: `64Gi`, or `768Mi` for small pods."""
    size = shm_size_for(memory_limit)
    return f"{size // GI}Gi" if size % GI == 0 else f"{size // MI}Mi"


SIZE_OPTION = "size-limit"  # an explicit /dev/shm size for the fixes of dshm-missing and dshm-unsized


def explicit_shm_size(value: Any) -> int | None:
    """The bytes of a `size-limit` option: None when it is not given, or not a quantity above the 64 MiB runtime
    default (the configuration refuses such a value when it is read: SIZE_LIMIT)."""
    if value is None or isinstance(value, bool):
        return None
    try:
        size = parse_quantity(value).ceil
    except Exception:
        return None
    return size if size > RUNTIME_DEFAULT_SHM else None


SIZE_LIMIT = RuleOption[str | None](
    name=SIZE_OPTION,
    help="sizeLimit the fix gives /dev/shm instead of half the pod's memory limit (never above that limit); "
    "`kubegpu gen dshm --size` sets it",
    expected="a quantity above 64Mi, the default /dev/shm size",
    example='"16Gi"',
    parse=quantity_above(RUNTIME_DEFAULT_SHM, "64Mi"),
    default=None,
    default_text="half the pod's memory limit",
)


def _explicit(ctx: RuleContext, rule: str) -> str | None:
    return SIZE_LIMIT.read(ctx, rule)


def _fix_size(limit: int | None, explicit: str | None) -> tuple[str | None, str]:
    """The sizeLimit a fix gives /dev/shm and how it was chosen: the explicit size, else half the pod's memory
    limit; None (and why, where it is not the missing or small memory limit) when no size may be set."""
    if explicit is not None:
        size = explicit_shm_size(explicit)
        if limit is not None and size is not None and size > limit:
            return None, (
                f"the size given for /dev/shm ({explicit}) is above the pod's memory limit ({_bytes_text(limit)}): "
                "shm pages are charged to that limit, so the container would be OOM-killed before /dev/shm is full"
            )
        return explicit, "the size given"
    if limit is None or not shm_sizable(limit):
        return None, ""  # never size /dev/shm at or below the 64 MiB it already has
    return shm_size_text(limit), "half the pod's memory limit"


def _has_shm(template: PodTemplate) -> bool:
    memory_volumes = _memory_volumes(template)
    return any(_shm_volume_name(c) in memory_volumes for c in template.containers if c.kind == "container")


def _runtime_has_shm(runtime: Document) -> bool:
    """Does the runtime's trainer pod (the job labelled as the trainer step, or named `node`) mount /dev/shm?"""
    templates = list(pod_templates(runtime))
    name = trainjob.trainer_job_name(runtime)
    trainer = [t for t in templates if t.role == name]
    return any(_has_shm(t) for t in (trainer or templates))


def _merged_has_shm(template: PodTemplate) -> bool:
    """A TrainJob bound to its runtime: does its merged trainer pod (runtimePatches applied) mount a memory-backed
    emptyDir at /dev/shm? Its volumes live in the merged pod spec, at no path of the TrainJob."""
    volumes = mapping_items(template.spec.get("volumes"))
    memory = {str(v.get("name")) for v in volumes if as_mapping(v.get("emptyDir")).get("medium") == "Memory"}
    return any(_shm_volume_name(c) in memory for c in template.containers if c.kind == "container")


def _host_path_shm(template: PodTemplate, name: str) -> bool:
    """The volume a container mounts at /dev/shm is a hostPath (the host's /dev/shm: KG203's finding, not KG201's)."""
    found = _volume(template, name)
    return found is not None and isinstance(found[1].get("hostPath"), Mapping)


def _check_missing(template: PodTemplate, ctx: RuleContext) -> Iterator[RawFinding]:
    if template.spec.get("hostIPC") is True:
        return  # the pod shares the host's /dev/shm: KG203 reports that, and it is not the 64 MiB default
    runtime = trainjob.bound_runtime(template.document)  # a TrainJob's runtime, when the input holds it
    if runtime is not None and (_runtime_has_shm(runtime) or _merged_has_shm(template)):
        return  # the TrainJob's pods come from its runtime's template (and patches), which mount /dev/shm
    missing: list[tuple[ContainerRef, str | None]] = []  # with the volume each mounts at /dev/shm, if any
    undecided: list[tuple[ContainerRef, ContainerFill]] = []
    for container, _res in gpu_containers(template, ctx.accelerator_resources):
        name = _shm_volume_name(container)
        # the pod's volumes are looked up only for a container that mounts something at /dev/shm
        if name is not None and (name in _memory_volumes(template) or _host_path_shm(template, name)):
            continue
        fill = template.fill(container)
        if fill is None or fill.shm is False:
            missing.append((container, name))  # nothing adds /dev/shm to this container
        elif fill.shm is None:
            undecided.append((container, fill))  # a ServingRuntime not in the input decides
    if not missing:
        if undecided:
            container, fill = undecided[0]
            yield RawFinding(
                container.path,
                f"KServe builds container '{_label(container)}' on {fill.source} and gives the pod that "
                "runtime's volumes: whether the GPU container gets a memory-backed /dev/shm (not the 64 MiB "
                "default) depends on that runtime; mount an emptyDir {medium: Memory, sizeLimit: ...} at /dev/shm "
                "there",
                None,
                Severity.INFO,
            )
        return
    names = ", ".join([f"'{_label(c)}'" for c, _name in missing])
    wrong = sorted({name for _c, name in missing if name is not None})
    detail = "".join([f" ('{name}' mounted at /dev/shm is not memory-backed)" for name in wrong]) if wrong else ""
    fix, why_not = _dshm_fix(template, missing, _explicit(ctx, "dshm-missing"))
    hint = ""
    if fix is None:
        if runtime is not None:
            hint = (
                f"; its pods come from {runtime.kind} '{runtime.ref.name}': mount a memory-backed emptyDir at "
                "/dev/shm in that runtime's trainer pod template"
            )
        elif template.volumes_field is None:
            hint = (
                "; this object has no volumes of its own: mount a memory-backed emptyDir at /dev/shm in the "
                "pod template of the runtime it refers to"
            )
        elif why_not:
            hint = f"; {why_not}"
        elif (memory := _pod_memory_limit(template)) is None:
            hint = (
                "; set memory limits so a size can be derived, then mount an emptyDir "
                "{medium: Memory, sizeLimit: ...} at /dev/shm"
            )
        elif not shm_sizable(memory):
            hint = (
                f"; the pod's memory limit ({_bytes_text(memory)}) leaves /dev/shm no more than the 64 MiB "
                "default: raise the memory limit, then mount an emptyDir {medium: Memory, sizeLimit: ...} there"
            )
        else:
            hint = "; mount an emptyDir {medium: Memory, sizeLimit: ...} at /dev/shm instead"
    stack = stack_of(template.document, (template,))
    yield RawFinding(
        missing[0][0].path,
        f"{stack.device} container(s) {names} have no memory-backed emptyDir at /dev/shm{detail}: the runtime "
        f"default is 64 MiB{', and ' if stack.shm_needed else '; '}{stack.shm_consequence}{hint}",
        fix,
        None if stack.shm_needed else Severity.INFO,
    )


def _size_limit(empty_dir: Mapping[str, Any]) -> int | None:
    """An emptyDir's sizeLimit in bytes; None when it has none; -1 when it is not a quantity (KG004 reports it)."""
    raw = empty_dir.get("sizeLimit")
    if raw is None:
        return None
    try:
        return parse_quantity(raw).ceil
    except Exception:
        return -1


def _too_small(empty_dir: Mapping[str, Any], memory_limit: int | None) -> bool:
    """Mounted at /dev/shm as a memory-backed emptyDir, this volume would hold no more than the runtime's 64 MiB
    default: its tmpfs is its sizeLimit, capped by the pod's memory limit (an unreadable sizeLimit counts as small).
    """
    size = _size_limit(empty_dir)
    return (size is not None and size <= RUNTIME_DEFAULT_SHM) or (
        memory_limit is not None and memory_limit <= RUNTIME_DEFAULT_SHM
    )


def _dshm_fix(
    template: PodTemplate,
    missing: list[tuple[ContainerRef, str | None]],
    explicit: str | None = None,
) -> tuple[Fix | None, str]:
    """Make /dev/shm memory-backed: turn a mounted disk emptyDir into one, share the volume another container
    mounts there, mount an unused memory-backed volume, or add one sized from the memory limit. Returns the fix,
    or None and (where it is not the missing memory limit) why there is none.

    Never derives what it cannot: no fix when something other than an emptyDir is mounted at /dev/shm, when
    the pod has no volumes list of its own (TrainJob), or when no memory limit sizes the volume. Never leaves
    /dev/shm at or below the runtime's 64 MiB default: an emptyDir whose sizeLimit is that small is neither
    made memory-backed nor mounted there.
    """
    volumes_field = template.volumes_field
    if volumes_field is None:
        return None, ""
    limit = _pod_memory_limit(template)
    edits: list[Edit] = []
    steps: list[str] = []
    shared: str | None = None
    unmounted: list[ContainerRef] = []
    mounted_there: dict[str, None] = {}  # the volumes mounted at /dev/shm, once each, in order
    for container, name in missing:
        if name is None:
            unmounted.append(container)
        else:
            mounted_there[name] = None
    for name in mounted_there:
        found = _volume(template, name)
        empty_dir = found[1].get("emptyDir") if found is not None else None
        if found is None or not isinstance(empty_dir, Mapping):
            return None, ""  # a hostPath, a PVC or an undeclared volume: not ours to rewrite
        if "sizeLimit" in empty_dir and _too_small(empty_dir, limit):
            return None, (
                f"the emptyDir '{name}' mounted there has sizeLimit {empty_dir.get('sizeLimit')}, which (with the "
                "pod's memory limit) would leave /dev/shm no larger than the 64 MiB default: raise it and set "
                "medium: Memory"
            )
        path = (*found[0], "emptyDir")
        edits.append(Edit("replace" if "medium" in empty_dir else "add", (*path, "medium"), "Memory"))
        if "sizeLimit" not in empty_dir:
            size, _how = _fix_size(limit, explicit)
            if size is None:
                return None, _how
            edits.append(Edit("add", (*path, "sizeLimit"), size))
        steps.append(f"make the emptyDir '{name}' memory-backed")
        shared = shared or name
    if unmounted:
        # The volume to mount: the one just made memory-backed, else one another container mounts at /dev/shm,
        # else an unused one (each looked for only when the one before is not there).
        volume_name = shared or _shareable_volume(template, limit)
        if volume_name is not None:
            steps.append(f"mount the memory-backed volume '{volume_name}' at /dev/shm")
        else:
            size, how = _fix_size(limit, explicit)
            if size is None:
                return None, how
            taken = {str(v.get("name")) for _p, v in _pod_volumes(template)}
            volume_name = next(
                n for n in ("dshm", *(f"kubegpu-dshm{i or ''}" for i in range(len(taken) + 1))) if n not in taken
            )
            volume = {"name": volume_name, "emptyDir": {"medium": "Memory", "sizeLimit": size}}
            if isinstance(get_path(template.document.data, volumes_field), list):
                edits.append(Edit("add", (*volumes_field, "-"), volume))
            else:
                edits.append(Edit("add", volumes_field, [volume]))
            steps.append(f"mount a {size} memory-backed emptyDir at /dev/shm ({how})")
        for container in unmounted:
            mount = {"name": volume_name, "mountPath": SHM_PATH}
            if isinstance(container.data.get("volumeMounts"), list):
                edits.append(Edit("add", (*container.path, "volumeMounts", "-"), mount))
            else:
                edits.append(Edit("add", (*container.path, "volumeMounts"), [mount]))
    return Fix("; ".join(steps), Safety.SAFE, tuple(edits)), ""


def _shareable_volume(template: PodTemplate, limit: int | None) -> str | None:
    """A memory-backed volume above the 64 MiB default to mount at /dev/shm: the one another container mounts
    there, else one no container mounts; None when there is neither. Plain loops: asked for most findings."""
    memory_volumes = _memory_volumes(template)
    if not memory_volumes:
        return None
    for container in template.containers:
        name = _shm_volume_name(container)
        if name in memory_volumes and not _too_small(memory_volumes[name][1], limit):
            return name
    mounted = {str(m.get("name")) for c in template.containers for m in mapping_items(c.data.get("volumeMounts"))}
    for name, (_path, empty_dir) in memory_volumes.items():
        if name not in mounted and not _too_small(empty_dir, limit):
            return name
    return None


def _check_unsized(template: PodTemplate, ctx: RuleContext) -> Iterator[RawFinding]:
    seen: set[str] = set()
    for container, _res in gpu_containers(template, ctx.accelerator_resources):
        name = _shm_volume_name(container)
        if name is None:
            continue  # the pod's volumes and memory limit are read only for a container that mounts /dev/shm
        memory_volumes = _memory_volumes(template)
        if name not in memory_volumes or name in seen:
            continue
        seen.add(name)
        volume_path, empty_dir = memory_volumes[name]
        size_raw = empty_dir.get("sizeLimit")
        if size_raw is None:
            limit = _pod_memory_limit(template)
            fix = None
            hint = ""
            size, how = _fix_size(limit, _explicit(ctx, "dshm-unsized"))
            if size is not None:
                fix = Fix(
                    f"set sizeLimit {size} ({how})", Safety.SAFE, (Edit("add", (*volume_path, "sizeLimit"), size),)
                )
            elif how:
                hint = f"; {how}"
            elif limit is None:
                hint = "; set memory limits so a size can be derived (about half the pod's memory limit)"
            else:
                hint = (
                    f"; half the pod's memory limit ({_bytes_text(limit)}) is no more than the 64 MiB runtime "
                    "default, so no size is derived: raise the memory limit first"
                )
            yield RawFinding(
                volume_path,
                f"the /dev/shm emptyDir '{name}' has no sizeLimit: it can grow to the "
                f"node's memory and the pod is evicted or OOM-killed instead of failing clearly{hint}",
                fix,
            )
            continue
        try:
            size_bytes = parse_quantity(size_raw).ceil
        except Exception:
            continue
        limit = _pod_memory_limit(template)
        if limit is not None and size_bytes > limit:
            yield RawFinding(
                (*volume_path, "sizeLimit"),
                f"/dev/shm sizeLimit {size_raw} is above the pod's memory limit "
                f"({_bytes_text(limit)}): shm pages "
                "are charged to that limit, so the container is OOM-killed before /dev/shm is full",
            )


def _bytes_text(value: int) -> str:
    suffix = "Gi" if value % GI == 0 else "Mi" if value % MI == 0 else ""
    return format_quantity(Decimal(value), suffix)


def _check_host_shared(template: PodTemplate, ctx: RuleContext) -> Iterator[RawFinding]:
    if template.spec.get("hostIPC") is True:
        yield RawFinding(
            (*template.path, "hostIPC"),
            "hostIPC: true shares the node's /dev/shm and IPC namespace "
            "with every such pod: no isolation, no size limit per pod; use a memory-backed emptyDir",
        )
    for path, volume in _pod_volumes(template):
        host = volume.get("hostPath")
        if is_mapping(host) and str(host.get("path", "")).rstrip("/") == SHM_PATH:
            yield RawFinding(
                (*path, "hostPath"),
                f"volume '{volume.get('name')}' mounts the node's /dev/shm: pods share and can fill "
                "the host's shared memory; use an emptyDir with medium: Memory and a sizeLimit",
            )


DSHM_MISSING = Rule(
    code="KG201",
    name="dshm-missing",
    practice=_PRACTICE,
    severity=Severity.WARNING,
    summary="A GPU container has no memory-backed emptyDir mounted at /dev/shm.",
    target=Target.TEMPLATE,
    check=_check_missing,
    fixable=True,
    options=(SIZE_LIMIT,),
    rationale="Container runtimes give /dev/shm 64 MiB. PyTorch DataLoader workers pass batches through "
    "shared memory and NCCL uses it for intra-node transport; both crash or slow down. The fix makes a "
    "disk-backed emptyDir already mounted there memory-backed, shares the volume another container mounts "
    "there, mounts an unused memory-backed one, or adds an emptyDir {medium: Memory} sized at half the pod's "
    "memory limit, since shm counts against it (the size-limit option, which `kubegpu gen dshm --size` sets, "
    "gives another size, never above that limit). It never leaves /dev/shm at or below the 64 MiB default: with "
    "no memory limit and no size-limit option, or a memory limit of 129 MiB or less (half of it rounds to "
    "64 MiB), there is no fix and the message says so; an emptyDir whose sizeLimit (or the pod's memory limit) "
    "holds it to 64 MiB or less is neither made memory-backed nor mounted there. A TrainJob is judged by its "
    "(Cluster)TrainingRuntime's trainer pod template when that runtime is in the input. A KServe `model:` "
    "predictor takes its ServingRuntime's volumes: the runtime in the input decides, else the one KServe ships for "
    "its model format (its Hugging Face and vLLM runtimes mount a memory-backed /dev/shm), else the finding is "
    "info, since that runtime decides. A hostPath /dev/shm or hostIPC is reported once, by dshm-host-shared, not "
    "here.",
    bad_example="containers:\n- name: train\n  resources: {limits: {nvidia.com/gpu: 8, memory: 512Gi}}",
    good_example="volumes:\n- name: dshm\n  emptyDir: {medium: Memory, sizeLimit: 256Gi}\n"
    "containers:\n- name: train\n  volumeMounts:\n  - {name: dshm, mountPath: /dev/shm}",
)
DSHM_UNSIZED = Rule(
    code="KG202",
    name="dshm-unsized",
    practice=_PRACTICE,
    severity=Severity.WARNING,
    summary="The /dev/shm emptyDir has no sizeLimit, or one above the pod's memory limit.",
    target=Target.TEMPLATE,
    check=_check_unsized,
    fixable=True,
    options=(SIZE_LIMIT,),
    rationale="Memory-backed emptyDir pages are charged to the pod's memory limit. Without a sizeLimit a "
    "runaway writer fills the node; with one above the limit, the container is OOM-killed first. The fix sets "
    "half the pod's memory limit (whole GiB from 2 GiB up, whole MiB below), or the size-limit option; when that "
    "is 64 MiB or less, or the pod has no memory limit and no size-limit option is given, there is no fix and the "
    "message says so.",
    bad_example="emptyDir: {medium: Memory}",
    good_example="emptyDir: {medium: Memory, sizeLimit: 32Gi}",
)
DSHM_HOST_SHARED = Rule(
    code="KG203",
    name="dshm-host-shared",
    practice=_PRACTICE,
    severity=Severity.WARNING,
    summary="A GPU pod shares the host's /dev/shm (hostPath /dev/shm or hostIPC).",
    target=Target.TEMPLATE,
    check=_check_host_shared,
    rationale="Sharing the node's /dev/shm removes isolation between pods and any per-pod size limit; a "
    "memory-backed emptyDir gives each pod its own, sized, accounted shared memory.",
    bad_example="hostIPC: true",
    good_example="volumes:\n- name: dshm\n  emptyDir: {medium: Memory, sizeLimit: 32Gi}",
)

RULES: tuple[Rule, ...] = (DSHM_MISSING, DSHM_UNSIZED, DSHM_HOST_SHARED)
