"""Turn API objects (plain dicts as the API server returns them) into the snapshot model.

A pod's requests, QoS and accelerators are the one pod model's (`kubegpu.manifests.pod`, kubernetes v1.35
`component-helpers/resource.PodRequests`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import kubegpu.manifests.pod as podmodel
from kubegpu.errors import InputError, QuantityError
from kubegpu.live.model import (
    BudgetStatus,
    ContainerInfo,
    DisruptionBudget,
    IntOrPercent,
    KueueClusterQueue,
    KueueFlavorQuota,
    KueueLocalQueue,
    KueuePodSet,
    KueueTopology,
    KueueWorkload,
    LabelSelector,
    NodeAffinity,
    NodeInfo,
    NodeResourceTopology,
    NRTZone,
    OwnerRef,
    PersistentVolumeInfo,
    PodInfo,
    PodShape,
    PodVolume,
    PriorityClassInfo,
    ResourceList,
    SelectorRequirement,
    Taint,
    Toleration,
    VolumeClaim,
    ZoneResource,
)
from kubegpu.manifests.accelerators import DEFAULT_REGISTRY, AcceleratorRegistry
from kubegpu.units.quantity import parse_quantity

# Pods one Kueue pod set may ask for: Kubernetes' supported maximum of pods per cluster (every reader expands a pod
# set into its pods).
MAX_POD_SET_COUNT = 150_000
# The annotation of a pod template that asks Kueue to place its pod set within one domain of a topology level.
REQUIRED_TOPOLOGY_ANNOTATION = "kueue.x-k8s.io/podset-required-topology"


def resource_list(raw: object, where: str, source: str) -> dict[str, int]:
    """A ResourceList in canonical integer units (cpu millis, others rounded up)."""
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise InputError(f"{where}: expected a map of resource quantities", file=source)
    out: dict[str, int] = {}
    for name, value in raw.items():
        out[str(name)] = _amount(str(name), value, f"{where}.{name}", source)
    return out


def _amount(resource: str, value: object, where: str, source: str) -> int:
    try:
        quantity = parse_quantity(value)
    except QuantityError as err:
        raise InputError(f"{where}: {err}", file=source) from err
    return quantity.millis if resource == "cpu" else quantity.ceil


def _map(raw: object, where: str, source: str) -> Mapping[str, Any]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise InputError(f"{where}: expected an object", file=source)
    return raw


def _list(raw: object, where: str, source: str) -> list[Any]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise InputError(f"{where}: expected a list", file=source)
    return raw


def _str_map(raw: object, where: str, source: str) -> dict[str, str]:
    return {str(k): str(v) for k, v in _map(raw, where, source).items()}


def object_name(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata")
    if isinstance(meta, Mapping) and isinstance(meta.get("name"), str):
        return str(meta["name"])
    return "<unnamed>"


def parse_node(obj: Mapping[str, Any], source: str = "<api>") -> NodeInfo:
    """A Node object: allocatable, capacity, labels, taints, cordon and Ready condition."""
    name = object_name(obj)
    where = f"Node {name}"
    meta = _map(obj.get("metadata"), f"{where}.metadata", source)
    spec = _map(obj.get("spec"), f"{where}.spec", source)
    status = _map(obj.get("status"), f"{where}.status", source)
    taints = tuple(
        Taint(str(t.get("key", "")), str(t.get("value", "")), str(t.get("effect", "")))
        for t in _list(spec.get("taints"), f"{where}.spec.taints", source)
        if isinstance(t, Mapping)
    )
    ready = True
    for cond in _list(status.get("conditions"), f"{where}.status.conditions", source):
        if isinstance(cond, Mapping) and cond.get("type") == "Ready":
            ready = cond.get("status") == "True"
    capacity = resource_list(status.get("capacity"), f"{where}.status.capacity", source)
    allocatable = status.get("allocatable")
    return NodeInfo(
        name=name,
        allocatable=capacity
        if allocatable is None
        else resource_list(allocatable, f"{where}.status.allocatable", source),
        capacity=capacity,
        labels=_str_map(meta.get("labels"), f"{where}.metadata.labels", source),
        taints=taints,
        unschedulable=bool(spec.get("unschedulable", False)),
        ready=ready,
    )


def _container(container: podmodel.Container) -> ContainerInfo:
    return ContainerInfo(
        name=container.name,
        requests=podmodel.canonical_amounts(container.requests),
        limits=podmodel.canonical_amounts(container.limits),
        init=container.kind != podmodel.KIND_APP,
        restartable=container.restartable,
    )


def tolerations(raw: object, where: str, source: str) -> tuple[Toleration, ...]:
    return tuple(
        Toleration(
            str(t.get("key", "")), str(t.get("operator", "Equal")), str(t.get("value", "")), str(t.get("effect", ""))
        )
        for t in _list(raw, where, source)
        if isinstance(t, Mapping)
    )


def node_affinity(spec: Mapping[str, Any], where: str, source: str) -> NodeAffinity:
    """spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution, as terms."""
    affinity = _map(spec.get("affinity"), f"{where}.affinity", source)
    node = _map(affinity.get("nodeAffinity"), f"{where}.affinity.nodeAffinity", source)
    required = _map(
        node.get("requiredDuringSchedulingIgnoredDuringExecution"), f"{where}.affinity.nodeAffinity.required", source
    )
    return node_selector_terms(required, where, source)


def node_selector_terms(required: Mapping[str, Any], where: str, source: str) -> NodeAffinity:
    """A v1 NodeSelector (`nodeSelectorTerms`: ORed terms of ANDed requirements), as terms."""
    terms: list[tuple[SelectorRequirement, ...]] = []
    for i, raw in enumerate(_list(required.get("nodeSelectorTerms"), f"{where}.nodeSelectorTerms", source)):
        term = _map(raw, f"{where}.nodeSelectorTerms[{i}]", source)
        reqs: list[SelectorRequirement] = []
        for kind, is_field in (("matchExpressions", False), ("matchFields", True)):
            for j, expr in enumerate(_list(term.get(kind), f"{where}.nodeSelectorTerms[{i}].{kind}", source)):
                e = _map(expr, f"{where}.nodeSelectorTerms[{i}].{kind}[{j}]", source)
                values = tuple(str(v) for v in _list(e.get("values"), f"{where}.values", source))
                reqs.append(SelectorRequirement(str(e.get("key", "")), str(e.get("operator", "")), values, is_field))
        terms.append(tuple(reqs))
    return tuple(terms)


def parse_pod_spec(
    spec: Mapping[str, Any], where: str, source: str, annotations: Mapping[str, Any] | None = None
) -> tuple[tuple[ContainerInfo, ...], dict[str, int], podmodel.Pod]:
    """Containers (init first), effective requests (PodRequests) and the pod model of a pod spec."""
    model = podmodel.read_pod_spec(spec, annotations, where=f"{where}.spec", source=source)
    containers = tuple(_container(c) for c in model.containers)
    return containers, podmodel.canonical_amounts(podmodel.pod_requests(model)), model


def _int(raw: object, where: str, source: str) -> int | None:
    """An integer field (None when absent); a string or a fraction is refused."""
    if raw is None:
        return None
    if isinstance(raw, bool) or not isinstance(raw, int):
        raise InputError(f"{where}: expected an integer", file=source)
    return raw


def _owners(meta: Mapping[str, Any], where: str, source: str) -> tuple[OwnerRef, ...]:
    return tuple(
        OwnerRef(
            api_version=str(o.get("apiVersion", "")),
            kind=str(o.get("kind", "")),
            name=str(o.get("name", "")),
            controller=o.get("controller") is True,
        )
        for o in _list(meta.get("ownerReferences"), f"{where}.metadata.ownerReferences", source)
        if isinstance(o, Mapping)
    )


def _volumes(spec: Mapping[str, Any], where: str, source: str) -> tuple[PodVolume, ...]:
    """spec.volumes: each volume's name and source kind (the one key besides `name`)."""
    out: list[PodVolume] = []
    for i, raw in enumerate(_list(spec.get("volumes"), f"{where}.spec.volumes", source)):
        volume = _map(raw, f"{where}.spec.volumes[{i}]", source)
        kinds = sorted(str(k) for k in volume if k != "name")
        kind = kinds[0] if kinds else ""
        medium = claim = ""
        if kind == "emptyDir":
            medium = str(
                _map(volume.get("emptyDir"), f"{where}.spec.volumes[{i}].emptyDir", source).get("medium") or ""
            )
        elif kind == "persistentVolumeClaim":
            pvc = _map(volume.get("persistentVolumeClaim"), f"{where}.spec.volumes[{i}].persistentVolumeClaim", source)
            claim = str(pvc.get("claimName") or "")
        out.append(PodVolume(name=str(volume.get("name", "")), source=kind, medium=medium, claim=claim))
    return tuple(out)


def _host_ports(spec: Mapping[str, Any], where: str, source: str) -> bool:
    for kind in ("initContainers", "containers"):
        for i, raw in enumerate(_list(spec.get(kind), f"{where}.spec.{kind}", source)):
            container = _map(raw, f"{where}.spec.{kind}[{i}]", source)
            for j, port in enumerate(_list(container.get("ports"), f"{where}.spec.{kind}[{i}].ports", source)):
                if _map(port, f"{where}.spec.{kind}[{i}].ports[{j}]", source).get("hostPort"):
                    return True
    return False


def _pod_rules(spec: Mapping[str, Any], where: str, source: str) -> tuple[str, ...]:
    """The pod's required scheduling rules that depend on other pods (InterPodAffinity, PodTopologySpread with
    DoNotSchedule, NodePorts)."""
    rules: list[str] = []
    affinity = _map(spec.get("affinity"), f"{where}.spec.affinity", source)
    for key, name in (("podAffinity", "pod affinity"), ("podAntiAffinity", "pod anti-affinity")):
        terms = _map(affinity.get(key), f"{where}.spec.affinity.{key}", source)
        if terms.get("requiredDuringSchedulingIgnoredDuringExecution"):
            rules.append(name)
    spread = _list(spec.get("topologySpreadConstraints"), f"{where}.spec.topologySpreadConstraints", source)
    if any(isinstance(c, Mapping) and c.get("whenUnsatisfiable", "DoNotSchedule") == "DoNotSchedule" for c in spread):
        rules.append("topology spread")
    if _host_ports(spec, where, source):
        rules.append("host ports")
    return tuple(rules)


def _ready(status: Mapping[str, Any], where: str, source: str) -> bool:
    """IsPodReady: the Ready condition is True."""
    return any(
        isinstance(c, Mapping) and c.get("type") == "Ready" and c.get("status") == "True"
        for c in _list(status.get("conditions"), f"{where}.status.conditions", source)
    )


def parse_pod(obj: Mapping[str, Any], source: str = "<api>") -> PodInfo:
    """A Pod object: phase, node, effective requests, QoS, selectors and tolerations; owners, priority,
    readiness and volumes."""
    meta = _map(obj.get("metadata"), "Pod.metadata", source)
    namespace = str(meta.get("namespace") or "default")
    name = object_name(obj)
    where = f"Pod {namespace}/{name}"
    spec = _map(obj.get("spec"), f"{where}.spec", source)
    status = _map(obj.get("status"), f"{where}.status", source)
    annotations = _str_map(meta.get("annotations"), f"{where}.metadata.annotations", source)
    containers, requests, model = parse_pod_spec(spec, where, source, annotations)
    node_name = spec.get("nodeName")
    return PodInfo(
        namespace=namespace,
        name=name,
        phase=str(status.get("phase") or "Pending"),
        node_name=str(node_name) if node_name else None,
        requests=requests,
        containers=containers,
        qos_class=str(status.get("qosClass") or ""),
        node_selector=_str_map(spec.get("nodeSelector"), f"{where}.spec.nodeSelector", source),
        tolerations=tolerations(spec.get("tolerations"), f"{where}.spec.tolerations", source),
        node_affinity=node_affinity(spec, f"{where}.spec", source),
        labels=_str_map(meta.get("labels"), f"{where}.metadata.labels", source),
        annotations=annotations,
        scheduling_gated=bool(_list(spec.get("schedulingGates"), f"{where}.schedulingGates", source)),
        raw=obj,
        spec=model,
        owners=_owners(meta, where, source),
        priority=_int(spec.get("priority"), f"{where}.spec.priority", source),
        priority_class=str(spec.get("priorityClassName") or ""),
        ready=_ready(status, where, source),
        deleting=meta.get("deletionTimestamp") is not None,
        volumes=_volumes(spec, where, source),
        pod_rules=_pod_rules(spec, where, source),
        uid=str(meta.get("uid") or ""),
        resource_version=str(meta.get("resourceVersion") or ""),
    )


def shape_of(
    requests: ResourceList,
    node_selector: Mapping[str, str],
    tols: tuple[Toleration, ...],
    affinity: NodeAffinity = (),
    registry: AcceleratorRegistry = DEFAULT_REGISTRY,
) -> PodShape | None:
    """The accelerator shape of a pod (None for a pod without accelerators)."""
    accel = sorted((r, v) for r, v in requests.items() if registry.is_accelerator(r) and v > 0)
    if not accel:
        return None
    resource, gpus = accel[0]
    return PodShape(
        gpu_resource=resource,
        gpus=gpus,
        cpu_millis=requests.get("cpu", 0),
        memory_bytes=requests.get("memory", 0),
        node_selector=tuple(sorted(node_selector.items())),
        tolerations=tols,
        node_affinity=affinity,
    )


def pod_shape(pod: PodInfo, registry: AcceleratorRegistry = DEFAULT_REGISTRY) -> PodShape | None:
    return shape_of(pod.requests, pod.node_selector, pod.tolerations, pod.node_affinity, registry)


def parse_nrt(obj: Mapping[str, Any], source: str = "<api>") -> NodeResourceTopology:
    """A topology.node.k8s.io/v1alpha2 NodeResourceTopology (v1alpha1 `topologyPolicies` kept)."""
    name = object_name(obj)
    where = f"NodeResourceTopology {name}"
    zones = []
    for i, raw in enumerate(_list(obj.get("zones"), f"{where}.zones", source)):
        zone = _map(raw, f"{where}.zones[{i}]", source)
        resources: dict[str, ZoneResource] = {}
        entries = _list(zone.get("resources"), f"{where}.zones[{i}].resources", source)
        for j, res in enumerate(entries):
            entry = _map(res, f"{where}.zones[{i}].resources[{j}]", source)
            rname = str(entry.get("name", ""))
            vals = {
                k: _amount(rname, entry[k], f"{where}.zones[{i}].resources[{j}].{k}", source)
                for k in ("capacity", "allocatable", "available")
                if k in entry
            }
            resources[rname] = ZoneResource(
                capacity=vals.get("capacity", 0),
                allocatable=vals.get("allocatable", vals.get("capacity", 0)),
                available=vals.get("available", 0),
            )
        costs = {
            str(c.get("name")): int(c.get("value", 0))
            for c in _list(zone.get("costs"), f"{where}.zones[{i}].costs", source)
            if isinstance(c, Mapping)
        }
        zones.append(
            NRTZone(
                name=str(zone.get("name", f"zone-{i}")),
                type=str(zone.get("type", "")),
                resources=resources,
                parent=str(zone.get("parent", "")),
                costs=costs,
            )
        )
    attributes = {
        str(a.get("name")): str(a.get("value", ""))
        for a in _list(obj.get("attributes"), f"{where}.attributes", source)
        if isinstance(a, Mapping)
    }
    policies = tuple(str(p) for p in _list(obj.get("topologyPolicies"), f"{where}.topologyPolicies", source))
    return NodeResourceTopology(name=name, zones=tuple(zones), attributes=attributes, topology_policies=policies)


def parse_kueue_topology(obj: Mapping[str, Any], source: str = "<api>") -> KueueTopology:
    """A Kueue Topology: `spec.levels[].nodeLabel`, top level first."""
    name = object_name(obj)
    spec = _map(obj.get("spec"), f"Topology {name}.spec", source)
    levels = tuple(
        str(level.get("nodeLabel", ""))
        for level in _list(spec.get("levels"), f"Topology {name}.spec.levels", source)
        if isinstance(level, Mapping)
    )
    return KueueTopology(name=name, levels=levels)


def parse_kueue_workload(obj: Mapping[str, Any], source: str = "<api>") -> KueueWorkload:
    """A Kueue Workload: its PodSets and whether it is admitted (condition Admitted) or finished."""
    meta = _map(obj.get("metadata"), "Workload.metadata", source)
    namespace = str(meta.get("namespace") or "default")
    name = object_name(obj)
    where = f"Workload {namespace}/{name}"
    spec = _map(obj.get("spec"), f"{where}.spec", source)
    status = _map(obj.get("status"), f"{where}.status", source)
    conditions = {
        str(c.get("type")): c.get("status") == "True"
        for c in _list(status.get("conditions"), f"{where}.status.conditions", source)
        if isinstance(c, Mapping)
    }
    pod_sets = []
    for i, raw in enumerate(_list(spec.get("podSets"), f"{where}.spec.podSets", source)):
        ps = _map(raw, f"{where}.spec.podSets[{i}]", source)
        template = _map(ps.get("template"), f"{where}.spec.podSets[{i}].template", source)
        tspec = _map(template.get("spec"), f"{where}.spec.podSets[{i}].template.spec", source)
        _, requests, _ = parse_pod_spec(tspec, f"{where}.spec.podSets[{i}].template", source)
        shape = shape_of(
            requests,
            _str_map(tspec.get("nodeSelector"), f"{where}.podSets[{i}]", source),
            tolerations(tspec.get("tolerations"), f"{where}.podSets[{i}]", source),
            node_affinity(tspec, f"{where}.podSets[{i}]", source),
        )
        try:
            count = int(ps.get("count", 1))
        except (TypeError, ValueError, OverflowError) as err:
            raise InputError(f"{where}.spec.podSets[{i}].count: not an integer", file=source) from err
        if count > MAX_POD_SET_COUNT:
            raise InputError(
                f"{where}.spec.podSets[{i}].count: {count} pods is beyond what a cluster runs ({MAX_POD_SET_COUNT})",
                file=source,
            )
        request = _map(ps.get("topologyRequest"), f"{where}.spec.podSets[{i}].topologyRequest", source)
        annotations = _str_map(
            _map(template.get("metadata"), f"{where}.spec.podSets[{i}].template.metadata", source).get("annotations"),
            f"{where}.spec.podSets[{i}].template.metadata.annotations",
            source,
        )
        required = request.get("required") or annotations.get(REQUIRED_TOPOLOGY_ANNOTATION) or ""
        pod_sets.append(
            KueuePodSet(
                name=str(ps.get("name", f"podset-{i}")),
                count=count,
                shape=shape,
                required_topology=str(required),
                template_spec=tspec,
            )
        )
    waiting = ""
    for c in _list(status.get("conditions"), f"{where}.status.conditions", source):
        if isinstance(c, Mapping) and c.get("type") == "QuotaReserved" and c.get("status") == "False":
            waiting = str(c.get("message") or "")
    return KueueWorkload(
        namespace=namespace,
        name=name,
        queue_name=str(spec.get("queueName", "")),
        admitted=conditions.get("Admitted", False),
        finished=conditions.get("Finished", False),
        pod_sets=tuple(pod_sets),
        priority=_int(spec.get("priority"), f"{where}.spec.priority", source),
        waiting_message=waiting,
    )


def parse_kueue_local_queue(obj: Mapping[str, Any], source: str = "<api>") -> KueueLocalQueue:
    """A Kueue LocalQueue: its namespace, name and spec.clusterQueue."""
    meta = _map(obj.get("metadata"), "LocalQueue.metadata", source)
    namespace = str(meta.get("namespace") or "default")
    name = object_name(obj)
    spec = _map(obj.get("spec"), f"LocalQueue {namespace}/{name}.spec", source)
    return KueueLocalQueue(namespace=namespace, name=name, cluster_queue=str(spec.get("clusterQueue") or ""))


def _flavor_amounts(raw: object, where: str, source: str) -> dict[tuple[str, str], int]:
    """A FlavorUsage list (status.flavorsReservation or status.flavorsUsage): `total` per (flavor, resource)."""
    amounts: dict[tuple[str, str], int] = {}
    for i, flavor in enumerate(_list(raw, where, source)):
        entry = _map(flavor, f"{where}[{i}]", source)
        for j, res in enumerate(_list(entry.get("resources"), f"{where}[{i}].resources", source)):
            item = _map(res, f"{where}[{i}].resources[{j}]", source)
            resource = str(item.get("name", ""))
            if item.get("total") is not None:
                amount = _amount(resource, item["total"], f"{where}[{i}].resources[{j}].total", source)
                amounts[(str(entry.get("name", "")), resource)] = amount
    return amounts


def _flavor_quotas(
    spec: Mapping[str, Any], status: Mapping[str, Any], where: str, source: str
) -> list[KueueFlavorQuota]:
    """Every resource of every flavor: nominalQuota and borrowingLimit from the spec, the reservation from
    status.flavorsReservation and the usage from status.flavorsUsage."""
    reserved = _flavor_amounts(status.get("flavorsReservation"), f"{where}.status.flavorsReservation", source)
    used = _flavor_amounts(status.get("flavorsUsage"), f"{where}.status.flavorsUsage", source)
    out: list[KueueFlavorQuota] = []
    for g, group in enumerate(_list(spec.get("resourceGroups"), f"{where}.spec.resourceGroups", source)):
        flavors = _map(group, f"{where}.spec.resourceGroups[{g}]", source).get("flavors")
        for i, flavor in enumerate(_list(flavors, f"{where}.spec.resourceGroups[{g}].flavors", source)):
            entry = _map(flavor, f"{where}.spec.resourceGroups[{g}].flavors[{i}]", source)
            name = str(entry.get("name", ""))
            at = f"{where}.spec.resourceGroups[{g}].flavors[{i}].resources"
            for j, res in enumerate(_list(entry.get("resources"), at, source)):
                item = _map(res, f"{at}[{j}]", source)
                resource = str(item.get("name", ""))
                nominal = _amount(resource, item.get("nominalQuota", 0), f"{at}[{j}].nominalQuota", source)
                limit = item.get("borrowingLimit")
                borrowing = None if limit is None else _amount(resource, limit, f"{at}[{j}].borrowingLimit", source)
                key = (name, resource)
                out.append(KueueFlavorQuota(name, resource, nominal, reserved.get(key, 0), borrowing, used.get(key, 0)))
    return out


def _flavor_totals(raw: object, key: str, where: str, source: str) -> dict[str, int]:
    """Sum `key` of every accelerator resource over a list of flavors (quota or usage)."""
    totals: dict[str, int] = {}
    for i, flavor in enumerate(_list(raw, where, source)):
        entry = _map(flavor, f"{where}[{i}]", source)
        for j, res in enumerate(_list(entry.get("resources"), f"{where}[{i}].resources", source)):
            item = _map(res, f"{where}[{i}].resources[{j}]", source)
            name = str(item.get("name", ""))
            if DEFAULT_REGISTRY.is_accelerator(name) and item.get(key) is not None:
                amount = _amount(name, item[key], f"{where}[{i}].resources[{j}].{key}", source)
                totals[name] = totals.get(name, 0) + amount
    return totals


def parse_kueue_cluster_queue(obj: Mapping[str, Any], source: str = "<api>") -> KueueClusterQueue:
    """A Kueue ClusterQueue: nominal accelerator quota over its flavors, and what is reserved."""
    name = object_name(obj)
    where = f"ClusterQueue {name}"
    spec = _map(obj.get("spec"), f"{where}.spec", source)
    status = _map(obj.get("status"), f"{where}.status", source)
    nominal: dict[str, int] = {}
    for i, group in enumerate(_list(spec.get("resourceGroups"), f"{where}.spec.resourceGroups", source)):
        flavors = _map(group, f"{where}.spec.resourceGroups[{i}]", source).get("flavors")
        for resource, amount in _flavor_totals(
            flavors, "nominalQuota", f"{where}.spec.resourceGroups[{i}].flavors", source
        ).items():
            nominal[resource] = nominal.get(resource, 0) + amount
    reserved = _flavor_totals(status.get("flavorsReservation"), "total", f"{where}.status.flavorsReservation", source)

    def count(key: str) -> int:
        value = status.get(key, 0)
        return value if isinstance(value, int) and not isinstance(value, bool) else 0

    cohort = str(spec.get("cohortName") or spec.get("cohort") or "")
    return KueueClusterQueue(
        name=name,
        cohort=cohort,
        nominal=nominal,
        reserved=reserved,
        pending_workloads=count("pendingWorkloads"),
        admitted_workloads=count("admittedWorkloads"),
        flavors=tuple(_flavor_quotas(spec, status, where, source)),
    )


def _int_or_percent(raw: object, where: str, source: str) -> IntOrPercent | None:
    """An IntOrString field such as minAvailable: a whole number, or a string "N%" (a string of digits is the
    number itself, as intstr reads it)."""
    if raw is None:
        return None
    if isinstance(raw, bool):
        raise InputError(f"{where}: expected a number or a percentage", file=source)
    if isinstance(raw, int):
        if raw < 0:
            raise InputError(f"{where}: must not be negative", file=source)
        return raw
    text = str(raw).strip()
    if text.endswith("%") and text[:-1].isdigit():
        return text
    if text.isdigit():
        return int(text)
    raise InputError(f"{where}: expected a number or a percentage, not {text[:40]!r}", file=source)


def label_selector(raw: object, where: str, source: str) -> LabelSelector | None:
    """A metav1.LabelSelector (None when absent). An operator other than In, NotIn, Exists and DoesNotExist
    makes the selector match nothing, as LabelSelectorAsSelector's error does for the eviction API."""
    if raw is None:
        return None
    selector = _map(raw, where, source)
    labels = tuple(sorted(_str_map(selector.get("matchLabels"), f"{where}.matchLabels", source).items()))
    requirements: list[SelectorRequirement] = []
    valid = True
    for i, expr in enumerate(_list(selector.get("matchExpressions"), f"{where}.matchExpressions", source)):
        e = _map(expr, f"{where}.matchExpressions[{i}]", source)
        operator = str(e.get("operator", ""))
        values = tuple(str(v) for v in _list(e.get("values"), f"{where}.matchExpressions[{i}].values", source))
        if operator not in ("In", "NotIn", "Exists", "DoesNotExist"):
            valid = False
        requirements.append(SelectorRequirement(str(e.get("key", "")), operator, values))
    return LabelSelector(labels, tuple(requirements), valid)


def parse_disruption_budget(obj: Mapping[str, Any], source: str = "<api>") -> DisruptionBudget:
    """A policy/v1 PodDisruptionBudget: selector, minAvailable or maxUnavailable, the unhealthy pod eviction
    policy, and the status the disruption controller wrote (None when it has written none)."""
    meta = _map(obj.get("metadata"), "PodDisruptionBudget.metadata", source)
    namespace = str(meta.get("namespace") or "default")
    name = object_name(obj)
    where = f"PodDisruptionBudget {namespace}/{name}"
    spec = _map(obj.get("spec"), f"{where}.spec", source)
    raw_status = obj.get("status")
    status = None
    if isinstance(raw_status, Mapping) and "disruptionsAllowed" in raw_status:

        def count(key: str) -> int:
            return _int(raw_status.get(key), f"{where}.status.{key}", source) or 0

        status = BudgetStatus(
            observed_generation=count("observedGeneration"),
            disruptions_allowed=count("disruptionsAllowed"),
            current_healthy=count("currentHealthy"),
            desired_healthy=count("desiredHealthy"),
            expected_pods=count("expectedPods"),
        )
    return DisruptionBudget(
        namespace=namespace,
        name=name,
        selector=label_selector(spec.get("selector"), f"{where}.spec.selector", source),
        min_available=_int_or_percent(spec.get("minAvailable"), f"{where}.spec.minAvailable", source),
        max_unavailable=_int_or_percent(spec.get("maxUnavailable"), f"{where}.spec.maxUnavailable", source),
        unhealthy_pod_eviction_policy=str(spec.get("unhealthyPodEvictionPolicy") or "IfHealthyBudget"),
        generation=_int(meta.get("generation"), f"{where}.metadata.generation", source) or 0,
        status=status,
    )


def parse_priority_class(obj: Mapping[str, Any], source: str = "<api>") -> PriorityClassInfo:
    """A scheduling.k8s.io/v1 PriorityClass: value, globalDefault, preemptionPolicy."""
    name = object_name(obj)
    where = f"PriorityClass {name}"
    value = _int(obj.get("value"), f"{where}.value", source)
    if value is None:
        raise InputError(f"{where}.value: required", file=source)
    return PriorityClassInfo(
        name=name,
        value=value,
        global_default=obj.get("globalDefault") is True,
        preemption_policy=str(obj.get("preemptionPolicy") or "PreemptLowerPriority"),
    )


def parse_volume_claim(obj: Mapping[str, Any], source: str = "<api>") -> VolumeClaim:
    """A PersistentVolumeClaim: the volume it is bound to (spec.volumeName)."""
    meta = _map(obj.get("metadata"), "PersistentVolumeClaim.metadata", source)
    namespace = str(meta.get("namespace") or "default")
    name = object_name(obj)
    spec = _map(obj.get("spec"), f"PersistentVolumeClaim {namespace}/{name}.spec", source)
    return VolumeClaim(namespace=namespace, name=name, volume_name=str(spec.get("volumeName") or ""))


def parse_persistent_volume(obj: Mapping[str, Any], source: str = "<api>") -> PersistentVolumeInfo:
    """A PersistentVolume: local (spec.local or spec.hostPath: its data lives on one node) and its required node
    affinity (spec.nodeAffinity.required)."""
    name = object_name(obj)
    where = f"PersistentVolume {name}"
    spec = _map(obj.get("spec"), f"{where}.spec", source)
    affinity = _map(spec.get("nodeAffinity"), f"{where}.spec.nodeAffinity", source)
    required = _map(affinity.get("required"), f"{where}.spec.nodeAffinity.required", source)
    return PersistentVolumeInfo(
        name=name,
        local=spec.get("local") is not None or spec.get("hostPath") is not None,
        node_affinity=node_selector_terms(required, f"{where}.spec.nodeAffinity.required", source),
    )


def parse_configz(obj: object, node: str, source: str = "<api>") -> Mapping[str, Any]:
    """The kubelet's `/configz` answer: `{"kubeletconfig": {...}}`; returns the inner config."""
    if not isinstance(obj, Mapping) or not isinstance(obj.get("kubeletconfig"), Mapping):
        raise InputError(f"configz of node {node}: expected an object with 'kubeletconfig'", file=source)
    config: Mapping[str, Any] = obj["kubeletconfig"]
    return config
