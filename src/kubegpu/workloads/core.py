"""Kubernetes' own workloads: Pod, PodTemplate, Deployment, ReplicaSet, ReplicationController, StatefulSet,
DaemonSet, Job and CronJob.

Follows kubernetes v1.35 (apps/v1, batch/v1): a Job runs `parallelism` pods at once (at most `completions`); a
StatefulSet is one distributed program only when its GPU containers start a distributed launcher.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from kubegpu.errors import InputError
from kubegpu.manifests.document import Document, FieldPath, as_mapping, get_path, mapping_items
from kubegpu.manifests.template import ContainerRef, PodTemplate, containers_of, int_field, job_template, template_at
from kubegpu.workloads.gangs import counted_gang
from kubegpu.workloads.kind import GangShape, SimulatedPods, WorkloadKind

_CORE = frozenset({""})
_APPS = frozenset({"apps"})
_BATCH = frozenset({"batch"})


def _pod(doc: Document) -> Iterator[PodTemplate]:
    spec = as_mapping(doc.data.get("spec"))
    yield PodTemplate(doc, ("spec",), spec, ("metadata",), doc.metadata, "", 1, containers_of(spec, ("spec",)))


def _pod_template(doc: Document) -> tuple[PodTemplate, ...]:
    return template_at(doc, ("template",), "", None)


def _replicated(doc: Document) -> tuple[PodTemplate, ...]:
    return template_at(doc, ("spec", "template"), "", int_field(as_mapping(doc.data.get("spec")).get("replicas"), 1))


def _daemon_set(doc: Document) -> tuple[PodTemplate, ...]:
    return template_at(doc, ("spec", "template"), "", None)


def _job(doc: Document) -> tuple[PodTemplate, ...]:
    return job_template(doc, ("spec",), "", 1)


def _cron_job(doc: Document) -> tuple[PodTemplate, ...]:
    return job_template(doc, ("spec", "jobTemplate", "spec"), "", 1)


# --- StatefulSet: a distributed program when its containers start a distributed launcher -------------------------

# What a container's command, args or env say when its pods are ranks of one program across nodes.
_DISTRIBUTED_LAUNCH = re.compile(
    r"\bray start\b|--nnodes\b|--num[-_]nodes\b|\btorchrun\b|torch\.distributed|\bMASTER_ADDR\b|\bmpirun\b"
    r"|\bhorovodrun\b|jax\.distributed|--dist[-_]init[-_]addr|--nproc[-_]per[-_]node|--pipeline[-_]parallel[-_]size"
)
# A word each alternative above contains: text with none of them cannot match, and these substring tests cost a
# tenth of the regex's scan (an alternation of \b-anchored words has no literal prefix to skip ahead with).
_LAUNCH_WORDS = (
    "--n",
    "--dist",
    "--pipeline",
    "distributed",
    "torchrun",
    "ray start",
    "MASTER_ADDR",
    "mpirun",
    "horovodrun",
)


def distributed_launch(container: ContainerRef) -> str | None:
    """The launcher a container's command, args or env name (torchrun, ray start, MASTER_ADDR, ...), if any."""
    texts: list[str] = []
    for key in ("command", "args"):
        value = container.data.get(key)
        if isinstance(value, list):
            texts.extend(str(v) for v in value)
        else:
            texts.append(str(value or ""))
    texts.extend(str(e.get("name") or "") for e in mapping_items(container.data.get("env")))
    text = "\n".join(texts)
    for word in _LAUNCH_WORDS:
        if word in text:
            match = _DISTRIBUTED_LAUNCH.search(text)
            return match.group(0) if match else None
    return None


def _stateful_set_gang(
    doc: Document, templates: tuple[PodTemplate, ...], gpu: tuple[PodTemplate, ...]
) -> GangShape | None:
    launch = next((found for t in gpu for c in t.containers if (found := distributed_launch(c))), None)
    if launch is None:
        return None  # replicas of a single-node server: independent, no gang needed
    total = sum(t.replicas or 0 for t in templates)
    return GangShape(
        doc,
        templates,
        gpu,
        total,
        total,
        f"its {total} pods (their containers run '{launch}': ranks of one program across nodes)",
    )


# --- Job and CronJob ---------------------------------------------------------------------------------------------


def _job_spec(doc: Document) -> FieldPath:
    return ("spec", "jobTemplate", "spec") if doc.kind == "CronJob" else ("spec",)


def _work_queue(doc: Document) -> bool:
    """A Job (or CronJob) that is not Indexed: its pods may be independent workers, not ranks of one job."""
    return bool(get_path(doc.data, (*_job_spec(doc), "completionMode")) != "Indexed")


def strict_count(value: object, default: int, what: str, source: str) -> int:
    """A pod count the simulator reads: absent gives `default`; anything but a non-negative integer is an error."""
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InputError(f"{what} must be a non-negative integer, got {value!r}", file=source)
    return value


def simulated_name(data: Mapping[str, Any]) -> str:
    """The name the simulator gives a job read from a manifest."""
    return str((data.get("metadata") or {}).get("name") or "job")


def _job_pods(doc: Document, source: str) -> SimulatedPods:
    name = simulated_name(doc.data)
    return SimulatedPods(name, _job_groups(doc.data, name, source))


def _job_groups(data: Mapping[str, Any], name: str, source: str) -> Iterator[tuple[Mapping[str, Any], tuple[str, ...]]]:
    spec = data.get("spec") or {}
    template = spec.get("template") or {}
    count = strict_count(spec.get("parallelism"), 1, "spec.parallelism", source)
    yield template, tuple(f"{name}-{i}" for i in range(count))


def _replicas_floor(data: Mapping[str, Any]) -> list[tuple[FieldPath, Any]]:
    return [(("spec", "replicas"), (data.get("spec") or {}).get("replicas", 1))]


POD = WorkloadKind(kinds=frozenset({"Pod"}), templates=_pod, validated_in=_CORE)
POD_TEMPLATE = WorkloadKind(kinds=frozenset({"PodTemplate"}), templates=_pod_template, validated_in=_CORE)
DEPLOYMENT = WorkloadKind(
    kinds=frozenset({"Deployment"}), templates=_replicated, validated_in=_APPS, replica_floors=_replicas_floor
)
REPLICA_SET = WorkloadKind(kinds=frozenset({"ReplicaSet"}), templates=_replicated, validated_in=_APPS)
REPLICATION_CONTROLLER = WorkloadKind(
    kinds=frozenset({"ReplicationController"}), templates=_replicated, validated_in=_CORE
)
STATEFUL_SET = WorkloadKind(
    kinds=frozenset({"StatefulSet"}),
    templates=_replicated,
    gang=_stateful_set_gang,
    validated_in=_APPS,
    replica_floors=_replicas_floor,
)
DAEMON_SET = WorkloadKind(kinds=frozenset({"DaemonSet"}), templates=_daemon_set, validated_in=_APPS)
JOB = WorkloadKind(
    kinds=frozenset({"Job"}),
    groups=frozenset({"", "batch"}),
    templates=_job,
    gang=counted_gang,
    work_queue=_work_queue,
    kueue_partial_admission=True,
    sim_pods=_job_pods,
    validated_in=_BATCH,
)
CRON_JOB = WorkloadKind(
    kinds=frozenset({"CronJob"}),
    templates=_cron_job,
    gang=counted_gang,
    work_queue=_work_queue,
    object_metadata=("spec", "jobTemplate", "metadata"),
    validated_in=_BATCH,
)
