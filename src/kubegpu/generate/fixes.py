"""Per-workload fixes of the GPU performance practices, as patch operations: /dev/shm, Guaranteed QoS, pull policy.

Each fix adds operations to a PatchBuilder; `gen dshm` and `gen fixes` wrap them in a kustomize
bundle. Sizes and CPU counts follow the kubelet v1.35 rules (memory-backed emptyDir, static CPUs).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kubegpu.errors import InputError
from kubegpu.generate.patches import PatchBuilder, PatchBundle, bundle
from kubegpu.generate.workload import PodSpecRef, Workload, containers, gpu_count, is_gpu_pod
from kubegpu.units.quantity import parse_quantity

GiB = 2**30
DEFAULT_SHM_WITHOUT_LIMIT = 16 * GiB


@dataclass(frozen=True)
class FixOptions:
    """Options the fixes share."""

    shm_size: str | None = None
    scheduler_name: str = "gpu-binpack"


def _gib(value: int) -> str:
    return f"{value // GiB}Gi"


def _memory_limit(container: Mapping[str, Any]) -> int | None:
    limits = (container.get("resources") or {}).get("limits") or {}
    if "memory" not in limits:
        return None
    return parse_quantity(limits["memory"]).ceil


def fix_dshm(builder: PatchBuilder, ref: PodSpecRef, options: FixOptions) -> None:
    """Mount a memory-backed emptyDir at /dev/shm in every GPU container (64 MiB by default)."""
    spec = builder.get(ref.spec_path) or {}
    ctrs = containers(spec)
    if not ctrs:
        return  # no containers list to mount into (e.g. a KServe model-format predictor)
    targets = [i for i, c in enumerate(ctrs) if gpu_count(c) > 0] or list(range(len(ctrs)))
    volumes = {v.get("name"): v for v in spec.get("volumes") or () if isinstance(v, Mapping)}
    existing = [
        m.get("name")
        for i in targets
        for m in ctrs[i].get("volumeMounts") or ()
        if isinstance(m, Mapping) and m.get("mountPath") == "/dev/shm"
    ]
    if existing and all((volumes.get(name) or {}).get("emptyDir", {}).get("medium") == "Memory" for name in existing):
        return
    name = "dshm" if "dshm" not in volumes else "kubegpu-dshm"
    if options.shm_size:
        size = parse_quantity(options.shm_size).ceil
        size_text, why = options.shm_size, "Size given with --size."
    else:
        limits = [lim for i in targets if (lim := _memory_limit(ctrs[i])) is not None]
        if limits:
            size = max(GiB, (min(limits) // 2) // GiB * GiB)
            size_text = _gib(size)
            why = (
                "Half the container's memory limit: tmpfs pages count against that limit, so a\n"
                "full /dev/shm must leave the process room (raise it with --size)."
            )
        else:
            size, size_text = DEFAULT_SHM_WITHOUT_LIMIT, _gib(DEFAULT_SHM_WITHOUT_LIMIT)
            why = "No memory limit to size it from: 16Gi (set --size); tmpfs counts as pod memory."
    if size <= 0:
        raise InputError("--size must be positive")
    volume = {"name": name, "emptyDir": {"medium": "Memory", "sizeLimit": size_text}}
    builder.append(
        (*ref.spec_path, "volumes"),
        volume,
        "Memory-backed /dev/shm: containers get 64 MiB by default, and PyTorch DataLoader\n"
        "workers and NCCL die with 'Bus error' when it fills.\n" + why,
    )
    for i in targets:
        mounts = ctrs[i].get("volumeMounts") or ()
        if any(isinstance(m, Mapping) and m.get("mountPath") == "/dev/shm" for m in mounts):
            continue
        builder.append(
            (*ref.spec_path, "containers", i, "volumeMounts"),
            {"name": name, "mountPath": "/dev/shm"},
            f"Mount it in {ctrs[i].get('name')}.",
        )


def _cpu_whole(value: Any) -> str:
    millis = parse_quantity(value).millis
    return str(-(-millis // 1000))


def fix_qos(builder: PatchBuilder, ref: PodSpecRef, options: FixOptions) -> None:
    """Guaranteed QoS with whole CPUs: requests = limits for cpu and memory in every container."""
    spec = builder.get(ref.spec_path) or {}
    if not is_gpu_pod(spec):
        return
    for key in ("initContainers", "containers"):
        for i, container in enumerate(containers(spec, init=key == "initContainers")):
            resources = container.get("resources") or {}
            requests = dict(resources.get("requests") or {})
            limits = dict(resources.get("limits") or {})
            new_req, new_lim = dict(requests), dict(limits)
            for res in ("cpu", "memory"):
                values = [v for v in (requests.get(res), limits.get(res)) if v is not None]
                if not values:
                    raise InputError(
                        f"container {container.get('name')!r} sets no {res} request or limit: "
                        f"Guaranteed QoS needs one (add it, then rerun)",
                        file=builder.workload.source,
                        line=builder.workload.line,
                    )
                biggest = max(values, key=lambda v: parse_quantity(v).value)
                if res == "cpu" and gpu_count(container) > 0:
                    biggest = _cpu_whole(biggest)
                new_req[res] = biggest
                new_lim[res] = biggest
            for name, value in limits.items():  # extended resources: request must equal limit
                if name not in ("cpu", "memory"):
                    new_req[name] = value
            if new_req == requests and new_lim == limits:
                continue
            builder.set(
                (*ref.spec_path, key, i, "resources"),
                {**resources, "requests": new_req, "limits": new_lim},
                f"{container.get('name')}: requests = limits for cpu and memory "
                "(the larger of the\n"
                "two is kept) makes the pod Guaranteed"
                + (
                    "; whole CPUs let the static CPU manager pin\n"
                    "them, NUMA-aligned with the GPUs under the topology manager."
                    if gpu_count(container) > 0
                    else " (a fractional CPU stays in the shared pool)."
                ),
            )


def fix_pull_policy(builder: PatchBuilder, ref: PodSpecRef, options: FixOptions) -> None:
    """imagePullPolicy: IfNotPresent, so a restarted pod does not pull a 10-30 GB image again."""
    spec = builder.get(ref.spec_path) or {}
    for key in ("initContainers", "containers"):
        for i, container in enumerate(containers(spec, init=key == "initContainers")):
            if container.get("imagePullPolicy") == "IfNotPresent":
                continue
            builder.set(
                (*ref.spec_path, key, i, "imagePullPolicy"),
                "IfNotPresent",
                f"{container.get('name')}: reuse the image already on the node (a :latest or\n"
                "untagged image defaults to Always, which re-pulls on every start).",
            )


def fix_scheduler(builder: PatchBuilder, ref: PodSpecRef, options: FixOptions) -> None:
    """Send GPU pods to the bin-packing profile from `kubegpu gen scheduler`."""
    spec = builder.get(ref.spec_path) or {}
    if not is_gpu_pod(spec) or spec.get("schedulerName") == options.scheduler_name:
        return
    builder.set(
        (*ref.spec_path, "schedulerName"),
        options.scheduler_name,
        "The GPU bin-packing profile (kubegpu gen scheduler): fills partly used GPU nodes\n"
        "first so whole nodes stay free for multi-GPU jobs.",
    )


FIXES: Mapping[str, Callable[[PatchBuilder, PodSpecRef, FixOptions], None]] = {
    "dshm": fix_dshm,
    "qos": fix_qos,
    "pull-policy": fix_pull_policy,
    "scheduler": fix_scheduler,
}


def generate(
    workload: Workload,
    names: Sequence[str],
    options: FixOptions,
    out_dir: Path | None = None,
) -> PatchBundle:
    """A kustomize bundle with the chosen fixes for every pod template of `workload`."""
    unknown = [n for n in names if n not in FIXES]
    if unknown:
        raise InputError(f"unknown fix {unknown[0]!r}: choose from {', '.join(FIXES)}")
    builder = PatchBuilder(workload)
    for name in names:
        for ref in workload.templates:
            FIXES[name](builder, ref, options)
    if not builder.changes:
        raise InputError(
            f"{workload.kind}/{workload.name} needs none of: {', '.join(names)}",
            file=workload.source,
            line=workload.line,
        )
    label = "-".join(names)
    header = (
        f"kustomize bundle: {', '.join(names)} for {workload.kind}/{workload.name}.",
        "Apply with kubectl apply -k <folder>; your manifest itself is not edited.",
    )
    return bundle(builder, f"patch-{label}.yaml", header, out_dir)
