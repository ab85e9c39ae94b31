"""NVIDIA Dynamo: DynamoGraphDeployment, services whose pods the operator builds, multi-node ones in groups.

Follows ai-dynamo/dynamo deploy/cloud/operator/api/v1alpha1/dynamocomponentdeployment_types.go
@ 020073063688f0288505ac584654b1802822cdb0 (DynamoComponentDeploymentSharedSpec: resources, replicas,
extraPodSpec with mainContainer, sharedMemory, multinode.nodeCount) and api/dynamo/common (ResourceItem cpu,
memory, gpu): spec.services maps each service name to one of these. Pods per service = replicas x nodeCount;
/dev/shm is a memory-backed emptyDir of sharedMemory.size (operator default 8Gi) unless sharedMemory.disabled.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from kubegpu.manifests.document import Document, FieldPath, as_mapping, format_path, get_path
from kubegpu.manifests.placeholders import is_placeholder
from kubegpu.manifests.template import ContainerRef, PodTemplate, containers_of, int_field
from kubegpu.workloads.kind import GangShape, GangVerdict, WorkloadKind, always
from kubegpu.workloads.vllm import DEFAULT_GPU

# A multi-node service (multinode.nodeCount > 1) runs each replica as one group of nodeCount pods, a Grove
# PodCliqueScalingGroup (gang scheduled through Grove's PodGang) or, with the annotation nvidia.com/enable-grove:
# "false", a LeaderWorkerSet that the operator gangs with Volcano (ai-dynamo/dynamo
# docs/kubernetes/deployment/multinode-deployment.md and deploy/cloud/operator/internal/dynamo/grove.go
# @ 3ecb210f4de10d9e09db8c38e85dd102106bf172). Grove packs each multinode replica's pods into one topology domain
# (spec.topologyConstraint.packDomain, or the service's own topologyConstraint.packDomain); without Grove the
# constraint is not applied (docs/kubernetes/topology-aware-scheduling.md).
GROVE_ANNOTATION = "nvidia.com/enable-grove"
_WIDE_DOMAINS = frozenset({"region", "zone", "datacenter"})


def _dynamo_items(item: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in ("cpu", "memory"):
        if item.get(key) not in (None, ""):
            out[key] = item[key]
    if item.get("gpu") not in (None, ""):
        out[str(item.get("gpuType") or DEFAULT_GPU)] = item["gpu"]
    custom = item.get("custom")
    if isinstance(custom, Mapping):
        out.update({str(k): v for k, v in custom.items()})
    return out


def _dynamo_graph(doc: Document) -> Iterator[PodTemplate]:
    services = as_mapping(get_path(doc.data, ("spec", "services")))
    for name, raw in services.items():
        service = as_mapping(raw)
        base: FieldPath = ("spec", "services", str(name))
        extra = as_mapping(service.get("extraPodSpec"))
        main = dict(as_mapping(extra.get("mainContainer")))
        resources = as_mapping(service.get("resources"))
        requests = _dynamo_items(as_mapping(resources.get("requests")))
        limits = _dynamo_items(as_mapping(resources.get("limits")))
        if requests or limits:
            main["resources"] = {"requests": requests, "limits": limits}
        main.setdefault("name", "main")
        mounts = list(main.get("volumeMounts") or [])
        pod: dict[str, Any] = {k: v for k, v in extra.items() if k != "mainContainer"}
        volumes = list(pod.get("volumes") or [])
        shm = as_mapping(service.get("sharedMemory"))
        if shm.get("disabled") is not True:
            volumes.append(
                {"name": "shared-memory", "emptyDir": {"medium": "Memory", "sizeLimit": shm.get("size") or "8Gi"}}
            )
            mounts.append({"name": "shared-memory", "mountPath": "/dev/shm"})
        main["volumeMounts"] = mounts
        pod["volumes"] = volumes
        refs = [
            ContainerRef(
                (*base, "extraPodSpec", "mainContainer") if extra.get("mainContainer") else base, main, "container"
            )
        ]
        refs.extend(containers_of(extra, (*base, "extraPodSpec")))
        pod["containers"] = [main, *(r.data for r in refs[1:] if r.kind == "container")]
        replicas = int_field(service.get("replicas"), 1)
        nodes = int_field(as_mapping(service.get("multinode")).get("nodeCount"), 1) or 1
        metadata = as_mapping(service.get("extraPodMetadata"))
        yield PodTemplate(
            doc,
            base,
            pod,
            (*base, "extraPodMetadata"),
            metadata,
            str(name),
            None if replicas is None else replicas * nodes,
            tuple(refs),
            (*base, "extraPodSpec", "volumes"),
        )


def _without_grove(doc: Document) -> bool:
    return str(as_mapping(doc.metadata.get("annotations")).get(GROVE_ANNOTATION) or "").lower() == "false"


def _gang(doc: Document, templates: tuple[PodTemplate, ...], gpu: tuple[PodTemplate, ...]) -> GangShape | None:
    """Each multi-node service replica is a group of nodeCount pods (a placeholder count is checked as 2 nodes)."""
    groups: list[tuple[PodTemplate, int]] = []
    slot = ""
    for template in gpu:
        raw = get_path(doc.data, (*template.path, "multinode", "nodeCount"))
        if is_placeholder(raw):  # checked as if it rendered to 2 nodes, and said so
            slot = slot or f"{format_path((*template.path, 'multinode', 'nodeCount'))}: {raw}"
            groups.append((template, 2))
        elif (count := int_field(raw, 1)) is not None and count > 1:
            groups.append((template, count))
    if not groups:
        return None  # single-node services: independent replicas
    nodes = max(n for _t, n in groups)
    multinode = tuple(t for t, _n in groups)
    return GangShape(
        doc,
        multinode,
        multinode,
        nodes,
        nodes,
        f"each replica's {nodes} pods (multinode.nodeCount: one multi-host group of the Dynamo operator)",
        slot,
    )


def _own_gang(doc: Document) -> GangVerdict:
    if _without_grove(doc):
        return GangVerdict("the Dynamo operator (a LeaderWorkerSet ganged by Volcano)")
    return GangVerdict("the Dynamo operator (Grove PodGang)")


def _placement(doc: Document, template: PodTemplate) -> str | None:
    """Grove's packDomain for the service (or the whole graph), when narrower than a zone."""
    if _without_grove(doc):
        return None
    service = as_mapping(get_path(doc.data, (*template.path, "topologyConstraint"))).get("packDomain")
    domain = service or as_mapping(get_path(doc.data, ("spec", "topologyConstraint"))).get("packDomain")
    if domain and str(domain) not in _WIDE_DOMAINS:
        return f"Dynamo topologyConstraint packDomain {domain}"
    return None


DYNAMO_GRAPH_DEPLOYMENT = WorkloadKind(
    kinds=frozenset({"DynamoGraphDeployment"}),
    templates=_dynamo_graph,
    gang=_gang,
    own_gang=_own_gang,
    placement=_placement,
    placement_advice="set spec.topologyConstraint (topologyProfile and a packDomain such as rack or block) or the "
    "service's topologyConstraint.packDomain, which Grove applies to each multinode replica, or a required "
    "podAffinity on a rack/block label in extraPodSpec",
    kueue_manages_pods=False,
    synthesised=always,
    operator_pods=True,
)
