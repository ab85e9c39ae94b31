"""Volcano's Job (batch.volcano.sh): tasks of `replicas` pods each, gang-scheduled through the PodGroup it creates.

Follows volcano-sh/volcano v1.12 (pkg/apis/batch/v1alpha1): the Job's PodGroup has minMember = spec.minAvailable,
else the sum of the tasks' minAvailable; spec.networkTopology {mode, highestTierAllowed} keeps the pods under one
network tier; the pods' scheduler is volcano.
"""

from __future__ import annotations

from collections.abc import Iterator

from kubegpu.manifests.document import Document, as_mapping, get_path, mapping_items
from kubegpu.manifests.template import PodTemplate, int_field, mapping_list, template_at
from kubegpu.workloads.gangs import counted_gang
from kubegpu.workloads.kind import GangMinimum, GangVerdict, WorkloadKind

GROUP = "batch.volcano.sh"


def _templates(doc: Document) -> Iterator[PodTemplate]:
    for i, task in enumerate(mapping_list(as_mapping(doc.data.get("spec")).get("tasks"))):
        yield from template_at(
            doc,
            ("spec", "tasks", i, "template"),
            str(task.get("name") or f"task-{i}"),
            int_field(task.get("replicas"), 1),
        )


def _own_gang(doc: Document) -> GangVerdict:
    return GangVerdict("Volcano Job (its PodGroup's minMember is spec.minAvailable)")


def _minimums(doc: Document) -> Iterator[GangMinimum]:
    """spec.minAvailable against all the tasks' pods; without it, each task's minAvailable against its replicas."""
    tasks = mapping_items(get_path(doc.data, ("spec", "tasks")))
    total = sum(int_field(t.get("replicas"), 1) or 0 for t in tasks)
    job_min = int_field(get_path(doc.data, ("spec", "minAvailable")), None)
    if job_min is not None and job_min > 0:
        yield GangMinimum(("spec", "minAvailable"), job_min, total, "job")
        return
    for i, task in enumerate(tasks):
        task_min = int_field(task.get("minAvailable"), None)
        if task_min is not None:
            replicas = int_field(task.get("replicas"), 1) or 0
            yield GangMinimum(("spec", "tasks", i, "minAvailable"), task_min, replicas, "task", str(task.get("name")))


def _placement(doc: Document, template: PodTemplate) -> str | None:
    return (
        "Volcano networkTopology" if as_mapping(get_path(doc.data, ("spec", "networkTopology"))).get("mode") else None
    )


VOLCANO_JOB = WorkloadKind(
    kinds=frozenset({"Job"}),
    groups=frozenset({GROUP}),
    templates=_templates,
    gang=counted_gang,
    own_gang=_own_gang,
    minimums=_minimums,
    placement=_placement,
    scheduler_settable=False,
)
