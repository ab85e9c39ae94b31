"""`gen kai`: KAI Scheduler queues (a parent and a GPU team queue) and the bin-packing placement.

Follows NVIDIA KAI-Scheduler: Queue scheduling.run.ai/v2 (quota -1 = unlimited, GPUs in units of
a whole GPU) and SchedulingShard kai.scheduler/v1 placementStrategy {gpu, cpu}: binpack | spread.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from kubegpu.errors import InputError
from kubegpu.generate.output import Generated, Note, OutFile, YamlDoc
from kubegpu.generate.patches import PatchBuilder, bundle
from kubegpu.generate.workload import Workload, pod_metadata

QUEUE_API = "scheduling.run.ai/v2"
SHARD_API = "kai.scheduler/v1"
QUEUE_LABEL = "kai.scheduler/queue"
PODGROUP_API = "scheduling.run.ai/v2alpha2"
PODGROUP_ANNOTATION = "pod-group-name"
SKIP_GROUPER_ANNOTATION = "kai.scheduler/skip-podgrouper"
_NAME_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


@dataclass(frozen=True)
class KaiOptions:
    """What `gen kai` was asked for."""

    gpus: int
    queue: str = "gpu-team"
    parent: str = "default"
    gpu_limit: int | None = None
    over_quota_weight: int = 1
    strategy: str = "binpack"


def _unlimited() -> dict[str, float]:
    return {"quota": -1, "limit": -1, "overQuotaWeight": 1}


def generate(options: KaiOptions, workload: Workload | None = None, out_dir: Path | None = None) -> Generated:
    if options.gpus < 1:
        raise InputError("--gpus must be at least 1")
    if options.strategy not in ("binpack", "spread"):
        raise InputError("--strategy must be binpack or spread")
    for flag, name in (("--queue", options.queue), ("--parent", options.parent)):
        if not _NAME_RE.match(name):
            raise InputError(f"{flag}: {name!r} is not a valid queue name")
    if options.queue == options.parent:
        raise InputError("--queue and --parent must differ")
    limit = -1 if options.gpu_limit is None else options.gpu_limit
    if limit != -1 and limit < options.gpus:
        raise InputError("--gpu-limit must be at least --gpus")
    parent = YamlDoc(
        {
            "apiVersion": QUEUE_API,
            "kind": "Queue",
            "metadata": {"name": options.parent},
            "spec": {"resources": {"cpu": _unlimited(), "gpu": _unlimited(), "memory": _unlimited()}},
        },
        header=("Top of the queue tree; -1 = no quota and no limit.",),
    )
    leaf = YamlDoc(
        {
            "apiVersion": QUEUE_API,
            "kind": "Queue",
            "metadata": {"name": options.queue},
            "spec": {
                "parentQueue": options.parent,
                "resources": {
                    "cpu": _unlimited(),
                    "gpu": {
                        "quota": options.gpus,
                        "limit": limit,
                        "overQuotaWeight": options.over_quota_weight,
                    },
                    "memory": _unlimited(),
                },
            },
        },
        header=(f"Workloads join with the label {QUEUE_LABEL}: {options.queue}.",),
        notes=(
            Note(
                ("spec", "resources", "gpu", "quota"),
                f"{options.gpus} GPUs deserved; above it the queue borrows idle GPUs, which\n"
                "are reclaimed (preempted) when other queues need their quota back.",
            ),
            Note(
                ("spec", "resources", "gpu", "limit"),
                "-1: no hard cap on borrowing." if limit == -1 else "Hard cap, borrowing included.",
            ),
        ),
    )
    shard = YamlDoc(
        {
            "apiVersion": SHARD_API,
            "kind": "SchedulingShard",
            "metadata": {"name": "default"},
            "spec": {
                "partitionLabelValue": "",
                "placementStrategy": {"gpu": options.strategy, "cpu": options.strategy},
            },
        },
        header=("The default shard the KAI operator runs (Helm keeps it); this pins its placement.",),
        notes=(
            Note(
                ("spec", "placementStrategy", "gpu"),
                "binpack: nodes with the fewest free GPUs score highest (9 x (1 - (free - min) /\n"
                "(max - min)) in the nodeplacement plugin), so whole nodes stay free for\n"
                "multi-GPU gangs and the consolidation action can defragment."
                if options.strategy == "binpack"
                else "spread: fraction free scores highest; disables the consolidation action.",
            ),
        ),
    )
    docs: tuple[YamlDoc, ...] = (parent, leaf, shard)
    header = ("KAI Scheduler queues (scheduling.run.ai/v2) and placement (kai.scheduler/v1).",)
    if workload is None:
        return Generated((OutFile("kai.yaml", docs, header=header),))
    builder = PatchBuilder(workload)
    builder.set(
        ("metadata", "labels", QUEUE_LABEL),
        options.queue,
        "The queue KAI charges the workload to.",
    )
    # KAI's pod-grouper gangs some kinds itself (one PodGroup, minMember = all pods: the kind's adapter says which)
    grouped = workload.adapter is not None and workload.adapter.kai_gangs
    own_group = not grouped and workload.pods > 1
    pg_name = f"{workload.name}-pg"
    for ref in workload.templates:
        if ref.own_metadata:
            builder.set((*pod_metadata(workload, ref), "labels", QUEUE_LABEL), options.queue, "")
        builder.set((*ref.spec_path, "schedulerName"), "kai-scheduler", "Scheduled by KAI.")
        if own_group:
            builder.set(
                (*pod_metadata(workload, ref), "annotations", PODGROUP_ANNOTATION),
                pg_name,
                f"KAI's pod-grouper gives each pod of a {workload.kind} its own PodGroup: join\n"
                "the explicit gang below instead.",
            )
            builder.set(
                (*pod_metadata(workload, ref), "annotations", SKIP_GROUPER_ANNOTATION),
                "true",
                "Keep the pod-grouper from replacing it (KAI v0.15+).",
            )
    if own_group:
        metadata: dict[str, object] = {"name": pg_name}
        if workload.namespace:
            metadata["namespace"] = workload.namespace
        docs = (
            *docs,
            YamlDoc(
                {
                    "apiVersion": PODGROUP_API,
                    "kind": "PodGroup",
                    "metadata": metadata,
                    "spec": {"minMember": workload.pods, "queue": options.queue},
                },
                notes=(
                    Note(
                        ("spec", "minMember"),
                        f"All {workload.pods} pods of {workload.kind}/{workload.name}: KAI binds none until all fit.",
                    ),
                ),
            ),
        )
    result = bundle(
        builder,
        "patch-kai.yaml",
        (f"{workload.kind}/{workload.name} scheduled by KAI in queue {options.queue}.",),
        out_dir,
        (OutFile("kai.yaml", docs, header=header),),
    )
    return result.generated
