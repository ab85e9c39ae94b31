"""LeaderWorkerSet (leaderworkerset.x-k8s.io): `replicas` groups of `size` pods, a leader and size - 1 workers.

Follows the leaderworkerset.x-k8s.io/v1 API (kubernetes-sigs/lws api/leaderworkerset/v1): spec.leaderWorkerTemplate
{size (default 1), leaderTemplate (optional: else the leader is a worker pod), workerTemplate}; each group is the
gang unit, and the exclusive-topology annotations put a group's pods in one topology domain.
"""

from __future__ import annotations

from collections.abc import Iterator

from kubegpu.manifests.document import Document, FieldPath, as_mapping, get_path, is_mapping
from kubegpu.manifests.template import PodTemplate, int_field, template_at
from kubegpu.workloads.kind import GangShape, WorkloadKind

EXCLUSIVE_TOPOLOGY = (
    "leaderworkerset.sigs.k8s.io/exclusive-topology",
    "leaderworkerset.sigs.k8s.io/subgroup-exclusive-topology",
)


def _templates(doc: Document) -> Iterator[PodTemplate]:
    spec = as_mapping(doc.data.get("spec"))
    lwt = as_mapping(spec.get("leaderWorkerTemplate"))
    groups = int_field(spec.get("replicas"), 1)
    size = int_field(lwt.get("size"), 1) or 1
    base: FieldPath = ("spec", "leaderWorkerTemplate")
    if is_mapping(lwt.get("leaderTemplate")):
        yield from template_at(doc, (*base, "leaderTemplate"), "leader", groups)
        workers = None if groups is None else groups * (size - 1)
    else:
        workers = None if groups is None else groups * size
    yield from template_at(doc, (*base, "workerTemplate"), "worker", workers)


def _gang(doc: Document, templates: tuple[PodTemplate, ...], gpu: tuple[PodTemplate, ...]) -> GangShape | None:
    """Each group of `size` pods runs together; its GPU pods are the leader's and the workers' that use GPUs."""
    size = int_field(get_path(doc.data, ("spec", "leaderWorkerTemplate", "size")), 1)
    if size is None:
        return None
    leader = [t for t in templates if t.role == "leader"]
    gpu_roles = {t.role for t in gpu}
    gpu_pods = (1 if "leader" in gpu_roles and leader else 0) + (
        size - (1 if leader else 0) if "worker" in gpu_roles else 0
    )
    return GangShape(doc, templates, gpu, size, gpu_pods, f"each group of {size} pods")


LEADER_WORKER_SET = WorkloadKind(
    kinds=frozenset({"LeaderWorkerSet"}),
    templates=_templates,
    gang=_gang,
    kai_gangs=True,
    serving_group=True,
    exclusive_topology=EXCLUSIVE_TOPOLOGY,
)
