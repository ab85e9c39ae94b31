"""Jobs the simulator replays: gangs of identical pods with a duration, topology request and arrival.

Built from openb rows (one pod each), manifests of the workload kinds whose adapters expand them to pods
(kubegpu.workloads: `sim_pods`) carrying a `kubegpu.io/duration` annotation, or the synthetic generator (gang
sizes, GPU counts, arrival rate).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np

import kubegpu.manifests.pod as podmodel
from kubegpu.errors import InputError
from kubegpu.manifests.accelerators import DEFAULT_REGISTRY, AcceleratorRegistry
from kubegpu.manifests.document import Document, as_mapping
from kubegpu.manifests.reader import read_inputs
from kubegpu.scheduler.gpu.state import GpuPod
from kubegpu.scheduler.tas import Mode, TopologyRequest
from kubegpu.workloads import kind_of, simulated_kinds
from kubegpu.workloads.expand import bind_runtimes, by_kind, with_embedded
from kubegpu.workloads.partial import PartialObject, partial_object

DURATION_ANNOTATION = "kubegpu.io/duration"
REQUIRED_TOPOLOGY = "kueue.x-k8s.io/podset-required-topology"
PREFERRED_TOPOLOGY = "kueue.x-k8s.io/podset-preferred-topology"


@dataclass(frozen=True)
class Job:
    """A group of pods admitted together (min_member of them at least) and run for `duration`."""

    name: str
    pods: tuple[GpuPod, ...]
    arrival: float = 0.0
    duration: float | None = None
    min_member: int | None = None
    topology: TopologyRequest | None = None

    @property
    def gpu_milli(self) -> int:
        """Total GPU request of the job in milli-GPU."""
        return sum(p.total_gpu_milli for p in self.pods)


def jobs_from_pods(pods: Sequence[GpuPod], keep_time: bool = True) -> list[Job]:
    """One single-pod job per trace row (openb): arrival and duration from the trace timestamps."""
    start = min((p.arrival for p in pods), default=0.0) if keep_time else 0.0
    return [
        Job(p.name, (p,), (p.arrival - start) if keep_time else 0.0, p.duration if keep_time else None) for p in pods
    ]


def synthetic_jobs(
    count: int,
    seed: int,
    arrival_rate: float = 1.0,
    gang_sizes: Sequence[int] = (1, 1, 1, 2, 4, 8),
    gpus_per_pod: Sequence[int] = (1, 2, 4, 8),
    mean_duration: float = 3600.0,
    cpu_per_gpu: int = 12000,
    memory_per_gpu: int = 96 * 2**30,
    topology: TopologyRequest | None = None,
) -> list[Job]:
    """Poisson arrivals (rate per second), exponential durations, gang sizes and GPU counts drawn
    uniformly from the given choices; deterministic for a seed."""
    if count < 0 or arrival_rate <= 0 or mean_duration <= 0:
        raise InputError("synthetic workload: count >= 0, arrival rate and duration > 0 required")
    rng = np.random.default_rng(seed)
    t = 0.0
    jobs: list[Job] = []
    for j in range(count):
        t += float(rng.exponential(1.0 / arrival_rate))
        size = int(rng.choice(np.asarray(gang_sizes)))
        gpus = int(rng.choice(np.asarray(gpus_per_pod)))
        duration = float(rng.exponential(mean_duration))
        pods = tuple(
            GpuPod(
                f"job-{j:05d}-{k}",
                max(1000, cpu_per_gpu * gpus),
                memory_per_gpu * gpus,
                gpus,
                1000,
                group=f"job-{j:05d}",
            )
            for k in range(size)
        )
        jobs.append(Job(f"job-{j:05d}", pods, t, duration, size if size > 1 else None, topology if size > 1 else None))
    return jobs


def _duration(text: object, source: str) -> float:
    raw = str(text).strip()
    units = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
    try:
        value = float(raw[:-1]) * units[raw[-1]] if raw and raw[-1] in units else float(raw)
    except ValueError:
        raise InputError(
            f"{DURATION_ANNOTATION}: {raw!r} is not a duration (e.g. 90m, 2h, 3600)", file=source
        ) from None
    if value < 0:
        raise InputError(f"{DURATION_ANNOTATION}: negative duration {raw!r}", file=source)
    return value


def _pod_from_template(
    name: str, template: Mapping[str, Any], source: str, group: str, registry: AcceleratorRegistry = DEFAULT_REGISTRY
) -> GpuPod:
    """One pod of a template: its effective requests (PodRequests: sidecars add, init containers count as a
    maximum, pod-level resources and overhead included) and its whole accelerator devices."""
    spec = template.get("spec") or {}
    if not isinstance(spec, Mapping):
        raise InputError(f"{name}: template.spec must be a mapping", file=source)
    meta = template.get("metadata") or {}
    annotations = meta.get("annotations") if isinstance(meta, Mapping) else None
    model = podmodel.read_pod_spec(
        spec, annotations if isinstance(annotations, Mapping) else None, where=f"{name}: spec", source=source
    )
    requests = podmodel.pod_requests(model)
    cpu = podmodel.canonical("cpu", requests.get("cpu", Decimal(0)))
    mem = podmodel.canonical("memory", requests.get("memory", Decimal(0)))
    gpus = podmodel.device_count(model, registry)
    model_names: tuple[str, ...] = ()
    selector = spec.get("nodeSelector") or {}
    if isinstance(selector, Mapping):
        for key in ("nvidia.com/gpu.product", "alibabacloud.com/gpu-card-model"):
            if key in selector:
                model_names = (str(selector[key]),)
    return GpuPod(name, max(cpu, 1), mem, gpus, 1000 if gpus else 0, model_names, group=group, spec=model)


def _topology(meta: Mapping[str, Any]) -> TopologyRequest | None:
    ann = meta.get("annotations") or {}
    if REQUIRED_TOPOLOGY in ann:
        return TopologyRequest(str(ann[REQUIRED_TOPOLOGY]), Mode.REQUIRED)
    if PREFERRED_TOPOLOGY in ann:
        return TopologyRequest(str(ann[PREFERRED_TOPOLOGY]), Mode.PREFERRED)
    return None


def jobs_from_manifest(doc: Document, source: str) -> list[Job]:
    """One gang job of the object's pods, as its kind's adapter expands it (none for a kind the simulator does not
    read)."""
    adapter = kind_of(doc)
    expansion = adapter.sim_pods(doc, source) if adapter is not None and adapter.sim_pods is not None else None
    if expansion is None:
        return []
    meta = as_mapping(doc.data.get("metadata"))
    ann = meta.get("annotations") or {}
    duration = _duration(ann[DURATION_ANNOTATION], source) if DURATION_ANNOTATION in ann else None
    topology = _topology(meta)
    pods: list[GpuPod] = []
    for template, names in expansion.groups:
        pods += [_pod_from_template(name, template, source, expansion.name) for name in names]
        topology = topology or _topology(template.get("metadata") or {})
    if not pods:
        if expansion.may_be_empty:
            return []
        raise InputError(f"{doc.kind} {expansion.name} has no pods", file=source)
    return [Job(expansion.name, tuple(pods), 0.0, duration, len(pods), topology)]


def load_job_manifests(paths: Sequence[Path]) -> list[Job]:
    """Every job of a kind the simulator reads (`simulated_kinds`) in the YAML files given, those an Argo resource
    step creates included (other kinds, a TrainJob without its runtime and partial objects are skipped)."""
    return read_job_manifests(paths)[0]


def read_job_manifests(paths: Sequence[Path]) -> tuple[list[Job], list[PartialObject]]:
    """The jobs of the files (load_job_manifests) and the partial objects (patch fragments) skipped, which the
    API server would reject as whole objects (workloads.partial, as lint counts them)."""
    objects: list[Document] = []
    # read as lint reads them: files, folders and `-`; bad YAML, alias bombs, FIFOs and huge files refused
    for document in read_inputs([str(path) for path in paths]).documents:
        objects.extend(with_embedded([document]))  # a job an Argo resource step creates too
    bind_runtimes(objects, by_kind(objects))  # the same expansion as lint and admit (kubegpu.workloads.expand)
    jobs: list[Job] = []
    fragments: list[PartialObject] = []
    for obj in objects:
        fragment = partial_object(obj)
        if fragment is not None:
            fragments.append(fragment)
        else:
            jobs.extend(jobs_from_manifest(obj, obj.source))
    if not jobs:
        skipped = f" ({len(fragments)} partial object{'s' if len(fragments) != 1 else ''} skipped)" if fragments else ""
        kinds = simulated_kinds()
        raise InputError(f"no {', '.join(kinds[:-1])} or {kinds[-1]} found{skipped}", file=",".join(map(str, paths)))
    return jobs, fragments
