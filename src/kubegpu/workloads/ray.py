"""KubeRay: RayCluster, RayJob (spec.rayClusterSpec) and RayService (spec.rayClusterConfig).

Follows the ray.io/v1 API (ray-project/kuberay ray-operator/apis/ray/v1): a head group of one pod and worker groups of
`replicas` (else minReplicas) × numOfHosts pods. A RayJob's cluster runs one driver program; a RayCluster or
RayService runs one program across its GPU workers only when it is of a fixed size (no in-tree autoscaling) and
spans hosts (a multi-host worker group, or a model split into pipeline stages). With the batch scheduler labels
(ray.io/scheduler-name, volcano.sh/queue-name, ray.io/gang-scheduling-enabled) KubeRay creates the PodGroup.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from kubegpu.manifests.document import Document, FieldPath, as_mapping, get_path, mapping_items
from kubegpu.manifests.placeholders import templated_counts
from kubegpu.manifests.template import PodTemplate, int_field, mapping_list, template_at
from kubegpu.workloads.gangs import counted_gang
from kubegpu.workloads.kind import GangShape, GangVerdict, WorkloadKind

SCHEDULER_LABEL = "ray.io/scheduler-name"
GANG_LABEL = "ray.io/gang-scheduling-enabled"
VOLCANO_QUEUE_LABEL = "volcano.sh/queue-name"
_CLUSTER = {"RayJob": ("spec", "rayClusterSpec"), "RayService": ("spec", "rayClusterConfig")}
_PIPELINE_ACROSS = re.compile(r"pipeline[_-]parallel[_-]size[\"']?\s*[:=]?\s*[\"']?([2-9]|\d{2,})")
HOME = "/home/ray"  # KubeRay's images run as user ray


def _cluster_path(doc: Document) -> FieldPath:
    return _CLUSTER.get(doc.kind, ("spec",))


def _templates(doc: Document) -> Iterator[PodTemplate]:
    base = _cluster_path(doc)
    cluster = as_mapping(get_path(doc.data, base)) if base != ("spec",) else as_mapping(doc.data.get("spec"))
    yield from template_at(doc, (*base, "headGroupSpec", "template"), "head", 1)
    for i, group in enumerate(mapping_list(cluster.get("workerGroupSpecs"))):
        replicas = int_field(group.get("replicas"), int_field(group.get("minReplicas"), 1))
        hosts = int_field(group.get("numOfHosts"), 1) or 1
        name = str(group.get("groupName") or f"workers-{i}")
        yield from template_at(
            doc, (*base, "workerGroupSpecs", i, "template"), name, None if replicas is None else replicas * hosts
        )


def _spans_nodes(doc: Document, cluster: Mapping[str, Any], templates: tuple[PodTemplate, ...]) -> bool:
    """A Ray cluster runs one program across its GPU workers: a multi-host worker group (numOfHosts > 1), or a
    Serve config or container command that splits a model into pipeline stages (pipeline_parallel_size >= 2)."""
    if any((int_field(g.get("numOfHosts"), 1) or 1) > 1 for g in mapping_items(cluster.get("workerGroupSpecs"))):
        return True
    texts = [str(get_path(doc.data, ("spec", "serveConfigV2")) or "")]
    texts.extend(str(c.data.get(key) or "") for t in templates for c in t.containers for key in ("command", "args"))
    return any(_PIPELINE_ACROSS.search(text) for text in texts)


def _fixed_cluster_gang(
    doc: Document, templates: tuple[PodTemplate, ...], gpu: tuple[PodTemplate, ...]
) -> GangShape | None:
    """A RayCluster or RayService: a gang only when it is one program across a fixed set of GPU workers."""
    cluster = as_mapping(get_path(doc.data, _cluster_path(doc)))
    if cluster.get("enableInTreeAutoscaling") is True:
        return None  # the autoscaler adds workers as tasks need them: the cluster never needs them all at once
    templated = not doc.placeholder_free and bool(templated_counts(cluster, ("spec",)))
    if not templated and (sum(t.replicas or 0 for t in gpu) < 2 or not _spans_nodes(doc, cluster, templates)):
        return None  # independent Serve replicas or a general-purpose cluster: no program spans its workers
    return counted_gang(doc, templates, gpu)


def _own_gang(doc: Document) -> GangVerdict | None:
    labels = as_mapping(doc.metadata.get("labels"))
    if labels.get(SCHEDULER_LABEL) or labels.get(VOLCANO_QUEUE_LABEL) or labels.get(GANG_LABEL) == "true":
        return GangVerdict("KubeRay batch scheduler (it creates the PodGroup)")
    return None


# A RayCluster, and a RayService's cluster: long-running clusters, one program across them only when fixed-size.
RAY_CLUSTER = WorkloadKind(
    kinds=frozenset({"RayCluster", "RayService"}),
    templates=_templates,
    gang=_fixed_cluster_gang,
    own_gang=_own_gang,
    kai_gangs=True,
    home=HOME,
)
RAY_JOB = WorkloadKind(
    kinds=frozenset({"RayJob"}),
    templates=_templates,
    gang=counted_gang,
    own_gang=_own_gang,
    kai_gangs=True,
    entrypoint=("spec", "entrypoint"),
)
