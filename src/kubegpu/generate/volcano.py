"""`gen volcano`: a Queue, a PodGroup per job (minMember = its pods), a GPU-weighted binpack config.

Follows Volcano v1beta1 (scheduling.volcano.sh; CRDs at 038b64a8/096235e1) and the binpack plugin's
arguments (pkg/scheduler/plugins/binpack: binpack.weight, .cpu, .memory, .resources, .resources.X).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kubegpu.errors import InputError
from kubegpu.generate.output import Generated, Note, OutFile, YamlDoc, render_documents
from kubegpu.generate.patches import PatchBuilder, bundle
from kubegpu.generate.workload import Workload, pod_metadata, spec_requests

API_VERSION = "scheduling.volcano.sh/v1beta1"
GROUP_ANNOTATION = "scheduling.k8s.io/group-name"


@dataclass(frozen=True)
class VolcanoOptions:
    """What `gen volcano` was asked for."""

    queue: str = "gpu"
    gpus: int | None = None
    gpu_resource: str = "nvidia.com/gpu"
    gpu_weight: int = 10
    binpack_weight: int = 10
    namespace: str = "volcano-system"


def scheduler_conf(options: VolcanoOptions) -> YamlDoc:
    """volcano-scheduler.conf: the default tiers with binpack weighted for GPUs."""
    binpack_args = {
        "binpack.weight": options.binpack_weight,
        "binpack.cpu": 1,
        "binpack.memory": 1,
        "binpack.resources": options.gpu_resource,
        f"binpack.resources.{options.gpu_resource}": options.gpu_weight,
    }
    conf = {
        "actions": "enqueue, allocate, backfill",
        "tiers": [
            {
                "plugins": [
                    {"name": "priority"},
                    {"name": "gang", "enablePreemptable": False},
                    {"name": "conformance"},
                ]
            },
            {
                "plugins": [
                    {"name": "overcommit"},
                    {"name": "drf", "enablePreemptable": False},
                    {"name": "predicates"},
                    {"name": "capacity"},
                    {
                        "name": "nodeorder",
                        "arguments": {"leastrequested.weight": 0, "balancedresource.weight": 0},
                    },
                    {"name": "binpack", "arguments": binpack_args},
                ]
            },
        ],
    }
    plugins = ("tiers", 1, "plugins")
    notes = (
        Note(
            ("actions",),
            "Volcano's default actions. The config replaces the default one as a whole, so\n"
            "every plugin it needs is listed (the Helm chart's defaults, binpack tuned).",
        ),
        Note(
            ("tiers", 0, "plugins", 1),
            "gang: a job's pods are bound only when minMember of them fit (all-or-nothing).",
        ),
        Note(
            (*plugins, 4, "arguments"),
            "nodeorder's leastrequested and balancedresource scores favour emptier, balanced\n"
            "nodes: they pull against binpack, so weight 0 turns them off.",
        ),
        Note(
            (*plugins, 5, "arguments"),
            "binpack score = sum(w_r * (used_r + request_r) / allocatable_r) / sum(w_r) * 100 *\n"
            f"binpack.weight, over the resources the task requests: GPU weight {options.gpu_weight}"
            " makes\nGPU fullness dominate; a node the task would overfill scores 0.",
        ),
    )
    return YamlDoc(conf, notes=notes)


def _configmap(options: VolcanoOptions) -> YamlDoc:
    text = render_documents((scheduler_conf(options),))
    obj = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "volcano-scheduler-configmap", "namespace": options.namespace},
        "data": {"volcano-scheduler.conf": text},
    }
    return YamlDoc(
        obj,
        header=(
            "The scheduler's configuration (the chart mounts this ConfigMap at /volcano.scheduler);",
            "volcano-scheduler reloads it when the file changes.",
        ),
    )


def _queue(options: VolcanoOptions) -> YamlDoc:
    spec: dict[str, Any] = {"weight": 1, "reclaimable": True}
    notes = [Note(("spec", "reclaimable"), "Lent resources can be reclaimed when other queues need them.")]
    if options.gpus is not None:
        if options.gpus < 1:
            raise InputError("--gpus must be at least 1")
        spec["capability"] = {options.gpu_resource: options.gpus}
        spec["deserved"] = {options.gpu_resource: options.gpus}
        notes.append(
            Note(
                ("spec", "capability"),
                "Hard cap on what the queue's jobs may hold (capacity plugin).",
            )
        )
        notes.append(Note(("spec", "deserved"), "What the queue is entitled to when the cluster is full."))
    return YamlDoc(
        {
            "apiVersion": API_VERSION,
            "kind": "Queue",
            "metadata": {"name": options.queue},
            "spec": spec,
        },
        notes=tuple(notes),
    )


def _quantity(name: str, amount: int) -> Any:
    if name == "cpu":
        return str(amount // 1000) if amount % 1000 == 0 else f"{amount}m"
    if name == "memory" or name.startswith("hugepages-") or name == "ephemeral-storage":
        for suffix, size in (("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
            if amount % size == 0:
                return f"{amount // size}{suffix}"
        return str(amount)
    return amount


def podgroup(workload: Workload, options: VolcanoOptions) -> YamlDoc:
    """A PodGroup whose minMember is every pod of the job and minResources their requests."""
    totals: dict[str, int] = {}
    for ref in workload.templates:
        per_pod = spec_requests(workload.pod_spec(ref))
        for name, amount in per_pod.items():
            totals[name] = totals.get(name, 0) + amount * ref.pods
    metadata: dict[str, Any] = {"name": f"{workload.name}-pg"}
    if workload.namespace:
        metadata["namespace"] = workload.namespace
    spec: dict[str, Any] = {"minMember": workload.pods, "queue": options.queue}
    if totals:
        spec["minResources"] = {k: _quantity(k, v) for k, v in sorted(totals.items())}
    roles = ", ".join(f"{r.role or 'pods'}: {r.pods}" for r in workload.templates)
    notes = [
        Note(
            ("spec", "minMember"),
            f"All {workload.pods} pods of {workload.kind}/{workload.name} ({roles}): "
            "none is bound\n"
            "until all fit, so a half-placed job never holds GPUs while it waits.",
        )
    ]
    if totals:
        notes.append(
            Note(
                ("spec", "minResources"),
                "The whole gang's requests: the enqueue action admits the job only when the\nqueue can hold all of it.",
            )
        )
    return YamlDoc(
        {"apiVersion": API_VERSION, "kind": "PodGroup", "metadata": metadata, "spec": spec},
        notes=tuple(notes),
    )


def generate(options: VolcanoOptions, workload: Workload | None = None, out_dir: Path | None = None) -> Generated:
    if not 1 <= options.gpu_weight <= 1000 or options.binpack_weight < 1:
        raise InputError("--gpu-weight and --binpack-weight must be positive")
    docs = [_queue(options), _configmap(options)]
    header = (f"Volcano ({API_VERSION}): queue '{options.queue}' and a GPU-weighted binpack.",)
    if workload is None:
        return Generated((OutFile("volcano.yaml", tuple(docs), header=header),))
    pg = podgroup(workload, options)
    docs.append(pg)
    builder = PatchBuilder(workload)
    for ref in workload.templates:
        builder.set(
            (*pod_metadata(workload, ref), "annotations", GROUP_ANNOTATION),
            pg.obj["metadata"]["name"],
            "Pods join the PodGroup through this annotation.",
        )
        builder.set((*ref.spec_path, "schedulerName"), "volcano", "Volcano, not kube-scheduler, binds them.")
    extra = (OutFile("volcano.yaml", tuple(docs), header=header),)
    result = bundle(
        builder,
        "patch-volcano.yaml",
        (f"{workload.kind}/{workload.name} gang-scheduled by Volcano; apply with kubectl apply -k.",),
        out_dir,
        extra,
    )
    return result.generated
