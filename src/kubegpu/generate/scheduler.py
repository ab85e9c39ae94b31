"""`gen scheduler`: a KubeSchedulerConfiguration with a GPU bin-packing profile beside the default.

Follows kube-scheduler v1.35 (kubescheduler.config.k8s.io/v1, NodeResourcesFitArgs): weights must
be 1..100, RequestedToCapacityRatio shape points utilization 0..100 and score 0..10.
"""

from __future__ import annotations

from dataclasses import dataclass

from kubegpu.errors import InputError
from kubegpu.generate.output import Generated, Note, OutFile, YamlDoc, render_documents

STRATEGIES = ("MostAllocated", "RequestedToCapacityRatio")
API_VERSION = "kubescheduler.config.k8s.io/v1"


@dataclass(frozen=True)
class SchedulerOptions:
    """What `gen scheduler` was asked for."""

    strategy: str = "MostAllocated"
    gpu_weight: int = 10
    cpu_weight: int = 1
    memory_weight: int = 1
    scheduler_name: str = "gpu-binpack"
    gpu_resource: str = "nvidia.com/gpu"
    configmap: bool = False
    namespace: str = "kube-system"
    configmap_name: str = "gpu-binpack-scheduler-config"


def _check(options: SchedulerOptions) -> None:
    if options.strategy not in STRATEGIES:
        raise InputError(f"--strategy must be one of {', '.join(STRATEGIES)}, not {options.strategy!r}")
    for flag, weight in (
        ("--gpu-weight", options.gpu_weight),
        ("--cpu-weight", options.cpu_weight),
        ("--memory-weight", options.memory_weight),
    ):
        if not 1 <= weight <= 100:
            raise InputError(f"{flag} must be 1..100 (kube-scheduler rejects {weight})")
    if options.scheduler_name == "default-scheduler":
        raise InputError("--scheduler-name must differ from default-scheduler")


def scheduler_config(options: SchedulerOptions) -> YamlDoc:
    """The KubeSchedulerConfiguration document with its explanations."""
    _check(options)
    strategy: dict[str, object] = {
        "type": options.strategy,
        "resources": [
            {"name": options.gpu_resource, "weight": options.gpu_weight},
            {"name": "cpu", "weight": options.cpu_weight},
            {"name": "memory", "weight": options.memory_weight},
        ],
    }
    if options.strategy == "RequestedToCapacityRatio":
        strategy["requestedToCapacityRatio"] = {
            "shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]
        }
    obj = {
        "apiVersion": API_VERSION,
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {"schedulerName": "default-scheduler"},
            {
                "schedulerName": options.scheduler_name,
                "plugins": {"score": {"disabled": [{"name": "NodeResourcesBalancedAllocation"}]}},
                "pluginConfig": [
                    {
                        "name": "NodeResourcesFit",
                        "args": {
                            "apiVersion": API_VERSION,
                            "kind": "NodeResourcesFitArgs",
                            "scoringStrategy": strategy,
                        },
                    }
                ],
            },
        ],
    }
    profile = ("profiles", 1)
    fit = (*profile, "pluginConfig", 0, "args", "scoringStrategy")
    strategy_note = (
        "MostAllocated: score = weighted mean of requested*100/allocatable per resource, so the\n"
        "fullest node that still fits wins and whole nodes stay free for large GPU jobs."
        if options.strategy == "MostAllocated"
        else "RequestedToCapacityRatio with shape {0:0, 100:10}: score rises with utilization\n"
        "(bin-packing); unlike MostAllocated it rounds, and a resource scoring 0 drops out."
    )
    notes = [
        Note(("profiles", 0), "Pods that name no scheduler keep the default (spreading) profile."),
        Note(
            profile,
            f"GPU pods opt in with spec.schedulerName: {options.scheduler_name}. "
            "Both profiles run\n"
            "in one kube-scheduler, so they share one view of the cluster (no double booking).",
        ),
        Note(
            (*profile, "plugins", "score", "disabled", 0),
            "BalancedAllocation prefers nodes whose CPU and memory fractions are equal; it pulls\n"
            "against packing, so this profile turns it off (the default profile keeps it).",
        ),
        Note((*fit, "type"), strategy_note),
        Note(
            (*fit, "resources", 0),
            f"GPU weight {options.gpu_weight} vs CPU {options.cpu_weight} and memory "
            f"{options.memory_weight}: GPU fullness dominates the score.\n"
            "A pod that requests no GPU skips this resource (extended resources with request 0 "
            "are not scored).",
        ),
    ]
    if options.strategy == "RequestedToCapacityRatio":
        notes.append(
            Note(
                (*fit, "requestedToCapacityRatio", "shape"),
                "Utilization 0% scores 0, 100% scores 10 (scaled x10 to 0..100 by the scheduler).",
            )
        )
    header = (
        "kube-scheduler configuration (kubescheduler.config.k8s.io/v1, Kubernetes v1.35):",
        f"a '{options.scheduler_name}' profile that bin-packs GPUs beside the default profile.",
        "Pass it with kube-scheduler --config; managed control planes need a second scheduler.",
    )
    return YamlDoc(obj, header=header, notes=tuple(notes))


def generate(options: SchedulerOptions) -> Generated:
    doc = scheduler_config(options)
    if not options.configmap:
        return Generated((OutFile("kube-scheduler-config.yaml", (doc,)),))
    text = render_documents((YamlDoc(doc.obj, notes=doc.notes),))
    cm = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": options.configmap_name, "namespace": options.namespace},
        "data": {"scheduler-config.yaml": text},
    }
    header = (
        *doc.header,
        "Mount this ConfigMap into the scheduler pod and point --config at scheduler-config.yaml.",
    )
    return Generated((OutFile("kube-scheduler-config.yaml", (YamlDoc(cm, header=header),)),))
