"""The one model of a pod's resources: effective requests and limits, QoS class, accelerators, GPU containers.

Follows kubernetes v1.35: API defaulting of a Pod (pkg/apis/core/v1/defaults.go: container requests default
to limits, then defaultHugePagePodLimits and defaultPodRequests for pod-level resources), PodRequests and
PodLimits (k8s.io/component-helpers/resource), ComputePodQOS (pkg/apis/core/v1/helper/qos), and KAI
Scheduler's `gpu-fraction-container-name` annotation. Every command (lint, admit, simulate, audit, the
webhook) reads a pod's resources through this module. Not modelled: in-place resize (status resources),
DRA node-allocatable claim status, and defaultPodLimits, which newer kubernetes sources add.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import ROUND_CEILING, Decimal
from typing import Any

from kubegpu.errors import InputError, QuantityError
from kubegpu.manifests.accelerators import DEFAULT_REGISTRY, AcceleratorRegistry
from kubegpu.units import parse_quantity

KIND_INIT = "init"
KIND_SIDECAR = "sidecar"  # an init container with restartPolicy: Always
KIND_APP = "app"

CPU = "cpu"
MEMORY = "memory"
HUGEPAGES_PREFIX = "hugepages-"
QOS_RESOURCES = (CPU, MEMORY)
_ALL_QOS_RESOURCES = frozenset(QOS_RESOURCES)
GUARANTEED = "Guaranteed"
BURSTABLE = "Burstable"
BEST_EFFORT = "BestEffort"

# KAI Scheduler (pkg/common/constants): fractional GPUs by annotation; the container that gets the fraction.
KAI_GPU_FRACTION = "gpu-fraction"
KAI_GPU_MEMORY = "gpu-memory"
KAI_GPU_FRACTION_CONTAINER_NAME = "gpu-fraction-container-name"
# GPU-sharing annotations that make a pod a GPU pod without an accelerator resource (KAI, HAMi).
GPU_SHARING_ANNOTATIONS: tuple[str, ...] = (
    KAI_GPU_FRACTION,
    KAI_GPU_MEMORY,
    "kai.scheduler/gpu-fraction",
    "nvidia.com/use-gputype",
    "hami.io/gpu-scheduler-policy",
)

Amounts = Mapping[str, Decimal]


@dataclass(frozen=True)
class Container:
    """One container's resources as the API server stores them (a missing request takes the limit).

    `invalid` names the entries whose quantity could not be read (only when read leniently).
    """

    name: str
    kind: str = KIND_APP
    requests: Amounts = field(default_factory=dict)
    limits: Amounts = field(default_factory=dict)
    claims: tuple[str, ...] = ()
    invalid: tuple[str, ...] = ()

    @property
    def restartable(self) -> bool:
        return self.kind == KIND_SIDECAR


@dataclass(frozen=True)
class PodResources:
    """Pod-level `spec.resources` after defaulting."""

    requests: Amounts = field(default_factory=dict)
    limits: Amounts = field(default_factory=dict)


@dataclass(frozen=True)
class Pod:
    """A pod's containers (init containers in order, then app containers), pod-level resources and overhead."""

    containers: tuple[Container, ...]
    resources: PodResources | None = None  # None: the pod spec has no `resources` field
    overhead: Amounts = field(default_factory=dict)
    annotations: Mapping[str, str] = field(default_factory=dict)
    resource_claims: tuple[str, ...] = ()  # spec.resourceClaims[].name

    @property
    def init_containers(self) -> tuple[Container, ...]:
        return tuple(c for c in self.containers if c.kind != KIND_APP)

    @property
    def app_containers(self) -> tuple[Container, ...]:
        return tuple(c for c in self.containers if c.kind == KIND_APP)


# -- building a pod (with the API server's defaulting) ----------------------------------------------------


def make_container(
    name: str,
    kind: str = KIND_APP,
    requests: Amounts | None = None,
    limits: Amounts | None = None,
    claims: Sequence[str] = (),
    invalid: Sequence[str] = (),
    defaults: bool = True,
) -> Container:
    """A container after defaulting: each limit without a request is also the request."""
    return defaulted_container(
        name, kind, dict(requests or {}), dict(limits or {}), tuple(claims), tuple(invalid), defaults
    )


def defaulted_container(
    name: str,
    kind: str,
    requests: dict[str, Decimal],
    limits: dict[str, Decimal],
    claims: tuple[str, ...] = (),
    invalid: tuple[str, ...] = (),
    defaults: bool = True,
) -> Container:
    """`make_container` for a caller that hands over dicts of its own (the container keeps them, `requests`
    defaulted in place): lint builds one per container of every template, and copying them again cost a fifth."""
    if defaults:
        for name_, value in limits.items():
            if name_ not in requests:
                requests[name_] = value
    return Container(name, kind, requests, limits, claims, invalid)


def make_pod(
    containers: Iterable[Container],
    resources: tuple[Amounts, Amounts] | None = None,
    overhead: Amounts | None = None,
    annotations: Mapping[str, str] | None = None,
    resource_claims: Sequence[str] = (),
    defaults: bool = True,
) -> Pod:
    """A pod with init containers first; pod-level resources defaulted as the API server does for a Pod
    (`defaults=False` keeps them as written, as upstream's unit tests build pods)."""
    return assembled_pod(
        tuple(containers), resources, dict(overhead or {}), dict(annotations or {}), tuple(resource_claims), defaults
    )


def assembled_pod(
    containers: tuple[Container, ...],
    resources: tuple[Amounts, Amounts] | None,
    overhead: dict[str, Decimal],
    annotations: dict[str, str],
    resource_claims: tuple[str, ...] = (),
    defaults: bool = True,
) -> Pod:
    """`make_pod` for a caller that hands over a tuple and dicts of its own (the pod keeps them): lint builds one
    per template, and copying them again is work nobody reads."""
    order = model_order([c.kind == KIND_APP for c in containers])
    ordered = containers if type(order) is range else tuple([containers[i] for i in order])
    pod_resources = None
    if resources is not None:
        requests, limits = dict(resources[0]), dict(resources[1])
        pod_resources = (
            _default_pod_resources(ordered, requests, limits) if defaults else PodResources(requests, limits)
        )
    return Pod(ordered, pod_resources, overhead, annotations, resource_claims)


def model_order(is_app: Sequence[bool]) -> Sequence[int]:
    """The pod's containers in the model's order, as indices into them as written (`is_app` per container): init
    containers and sidecars first, each group in its order; a range when they already are, as in most pods."""
    seen_app = False
    for app in is_app:
        if app:
            seen_app = True
        elif seen_app:
            return (*(i for i, a in enumerate(is_app) if not a), *(i for i, a in enumerate(is_app) if a))
    return range(len(is_app))


def is_supported_pod_level_resource(name: str) -> bool:
    """cpu, memory and hugepages-* can be set at pod level (IsSupportedPodLevelResource)."""
    return name in QOS_RESOURCES or name.startswith(HUGEPAGES_PREFIX)


def _default_pod_resources(
    containers: tuple[Container, ...], requests: dict[str, Decimal], limits: dict[str, Decimal]
) -> PodResources:
    # defaultHugePagePodLimits: hugepages limited in containers but not at pod level take their aggregate.
    if requests or limits:
        for name, value in aggregate((c.kind, c.limits) for c in containers).items():
            if name.startswith(HUGEPAGES_PREFIX) and name not in requests and name not in limits:
                limits[name] = value
    # defaultPodRequests (only when pod-level limits exist): cpu and memory take the containers' aggregate
    # request, then anything still missing takes the pod-level limit.
    if limits:
        for name, value in aggregate((c.kind, c.requests) for c in containers).items():
            if name in QOS_RESOURCES and name not in requests:
                requests[name] = value
        for name, value in limits.items():
            if is_supported_pod_level_resource(name) and name not in requests:
                requests[name] = value
    return PodResources(requests, limits)


# -- reading a pod spec ------------------------------------------------------------------------------------


def read_amounts(
    raw: Any, where: str, strict: bool = True, source: str | None = None
) -> tuple[dict[str, Decimal], list[str]]:
    """A ResourceList as exact values, and the names whose value is not a quantity.

    Strict: an unreadable value, a negative one or a list that is not a mapping is an InputError naming
    `where`. Lenient (lint, whose invalid-quantity rule reports them): they are left out and named.
    """
    if raw is None:
        return {}, []
    if not isinstance(raw, Mapping):
        if strict:
            raise InputError(f"{where} must be a mapping of resource quantities", file=source)
        return {}, []
    out: dict[str, Decimal] = {}
    invalid: list[str] = []
    for key, value in raw.items():
        name = key if type(key) is str else str(key)
        try:
            quantity = parse_quantity(value)
        except QuantityError as err:
            if strict:
                raise InputError(f"{where}.{name}: {err.message}", file=source) from None
            invalid.append(name)
            continue
        if quantity.value < 0 and strict:
            raise InputError(f"{where}.{name}: must not be negative", file=source)
        out[name] = quantity.value
    return out, invalid


def read_container(
    raw: Any,
    kind: str,
    where: str,
    strict: bool = True,
    source: str | None = None,
    default_name: str = "",
    defaults: bool = True,
) -> Container:
    """One container mapping (`kind` is app, init or sidecar; an init container with restartPolicy: Always
    is a sidecar whatever `kind` says)."""
    if not isinstance(raw, Mapping):
        if strict:
            raise InputError(f"{where} must be a mapping", file=source)
        raw = {}
    name = str(raw.get("name") or default_name)
    if kind == KIND_INIT and raw.get("restartPolicy") == "Always":
        kind = KIND_SIDECAR
    resources = raw.get("resources")
    if resources is None:
        resources = {}
    if not isinstance(resources, Mapping):
        if strict:
            raise InputError(f"{where}.resources must be a mapping", file=source)
        resources = {}
    requests, bad_requests = read_amounts(resources.get("requests"), f"{where}.resources.requests", strict, source)
    limits, bad_limits = read_amounts(resources.get("limits"), f"{where}.resources.limits", strict, source)
    claims = resources.get("claims")
    names = tuple(str(c.get("name", "")) for c in claims if isinstance(c, Mapping)) if isinstance(claims, list) else ()
    return make_container(name, kind, requests, limits, names, (*bad_requests, *bad_limits), defaults)


def read_pod_resources(
    raw: Any, where: str, strict: bool = True, source: str | None = None
) -> tuple[Amounts, Amounts] | None:
    """Pod-level `spec.resources`: None when absent (null counts as absent), else (requests, limits)."""
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        if strict:
            raise InputError(f"{where} must be a mapping", file=source)
        return None
    requests, _ = read_amounts(raw.get("requests"), f"{where}.requests", strict, source)
    limits, _ = read_amounts(raw.get("limits"), f"{where}.limits", strict, source)
    return requests, limits


def read_pod_spec(
    spec: Any,
    annotations: Mapping[str, Any] | None = None,
    *,
    strict: bool = True,
    where: str = "spec",
    source: str | None = None,
    defaults: bool = True,
) -> Pod:
    """A PodSpec mapping (and the pod's annotations) as the model; strict reading raises InputError."""
    if not isinstance(spec, Mapping):
        if strict:
            raise InputError(f"{where} must be a mapping", file=source)
        spec = {}
    containers: list[Container] = []
    for field_name, kind in (("initContainers", KIND_INIT), ("containers", KIND_APP)):
        items = spec.get(field_name)
        if items is None:
            continue
        if not isinstance(items, list):
            if strict:
                raise InputError(f"{where}.{field_name} must be a list", file=source)
            continue
        for i, raw in enumerate(items):
            containers.append(
                read_container(raw, kind, f"{where}.{field_name}[{i}]", strict, source, f"{field_name}-{i}", defaults)
            )
    overhead, _ = read_amounts(spec.get("overhead"), f"{where}.overhead", strict, source)
    claims = spec.get("resourceClaims")
    claim_names = (
        tuple(str(c.get("name", "")) for c in claims if isinstance(c, Mapping)) if isinstance(claims, list) else ()
    )
    return make_pod(
        containers,
        read_pod_resources(spec.get("resources"), f"{where}.resources", strict, source),
        overhead,
        {str(k): str(v) for k, v in (annotations or {}).items()},
        claim_names,
        defaults,
    )


# -- PodRequests / PodLimits -------------------------------------------------------------------------------


def _add(total: dict[str, Decimal], more: Amounts) -> None:
    for name, value in more.items():
        total[name] = total.get(name, Decimal(0)) + value


def _max_into(total: dict[str, Decimal], other: Amounts) -> None:
    for name, value in other.items():
        if name not in total or value > total[name]:
            total[name] = value


def aggregate(steps: Iterable[tuple[str, Amounts]]) -> dict[str, Decimal]:
    """The one summation of a pod's containers (the sidecar KEP's formula, as AggregateContainerRequests).

    `steps` are (kind, amounts) in pod order, init containers first. App containers and restartable sidecars
    add up; each regular init container runs alone with the sidecars started before it, and the pod needs the
    largest of those steps if that is more. The kubelet's resource managers call it with their own
    per-container amounts (guaranteed CPUs, memory-manager resources).
    """
    result: dict[str, Decimal] = {}
    sidecars: dict[str, Decimal] = {}
    init_peak: dict[str, Decimal] = {}
    for kind, amounts in steps:
        if kind == KIND_APP:
            _add(result, amounts)
        elif kind == KIND_SIDECAR:
            _add(result, amounts)
            _add(sidecars, amounts)
            _max_into(init_peak, sidecars)
        else:
            step = dict(amounts)
            _add(step, sidecars)
            _max_into(init_peak, step)
    _max_into(result, init_peak)
    return result


def _aggregate(pod: Pod, section: str, non_missing: Amounts | None = None) -> dict[str, Decimal]:
    """AggregateContainerRequests / AggregateContainerLimits; `non_missing` fills in a request a container
    leaves out (the scheduler's non-zero defaults), an explicit 0 stays 0."""
    steps: list[tuple[str, Amounts]] = []
    for container in pod.containers:
        amounts: Amounts = container.requests if section == "requests" else container.limits
        if non_missing:
            amounts = {**{k: v for k, v in non_missing.items() if k not in amounts}, **amounts}
        steps.append((container.kind, amounts))
    return aggregate(steps)


def pod_level_requests_set(pod: Pod) -> bool:
    """IsPodLevelRequestsSet: pod-level requests name a supported resource."""
    return pod.resources is not None and any(is_supported_pod_level_resource(n) for n in pod.resources.requests)


def pod_level_resources_set(pod: Pod) -> bool:
    """IsPodLevelResourcesSet: pod-level requests or limits name a supported resource."""
    return pod.resources is not None and any(
        is_supported_pod_level_resource(n) for n in (*pod.resources.requests, *pod.resources.limits)
    )


def pod_requests(
    pod: Pod, *, pod_level: bool = True, overhead: bool = True, non_missing: Amounts | None = None
) -> dict[str, Decimal]:
    """PodRequests: the containers' aggregate, pod-level requests where set (`pod_level` is the
    PodLevelResources gate), plus the overhead."""
    reqs = _aggregate(pod, "requests", non_missing)
    if pod_level and pod.resources is not None and pod_level_requests_set(pod):
        for name, value in pod.resources.requests.items():
            if is_supported_pod_level_resource(name):
                reqs[name] = value
    if overhead:
        _add(reqs, pod.overhead)
    return reqs


def pod_limits(pod: Pod, *, pod_level: bool = True, overhead: bool = True) -> dict[str, Decimal]:
    """PodLimits: the containers' aggregate, pod-level limits where set, overhead added to non-zero limits."""
    limits = _aggregate(pod, "limits")
    if pod_level and pod.resources is not None and pod_level_resources_set(pod):
        for name, value in pod.resources.limits.items():
            if is_supported_pod_level_resource(name):
                limits[name] = value
    if overhead:
        for name, value in pod.overhead.items():
            if limits.get(name, 0) != 0:
                limits[name] += value
    return limits


def canonical(name: str, value: Decimal) -> int:
    """A value in the integer unit the kubelet and scheduler count: cpu in millicores (MilliValue), anything
    else rounded up (Value)."""
    scaled = value * 1000 if name == CPU else value
    return int(scaled.to_integral_value(rounding=ROUND_CEILING))


def canonical_amounts(amounts: Amounts) -> dict[str, int]:
    return {name: canonical(name, value) for name, value in amounts.items()}


# -- QoS ---------------------------------------------------------------------------------------------------


def _positive(into: dict[str, Decimal], amounts: Amounts) -> set[str]:
    found: set[str] = set()
    for name in QOS_RESOURCES:
        value = amounts.get(name)
        if value is not None and value > 0:
            into[name] = into.get(name, Decimal(0)) + value
            found.add(name)
    return found


def qos_class(pod: Pod, pod_level_resources: bool = True) -> str:
    """ComputePodQOS: Guaranteed, Burstable or BestEffort from cpu and memory only.

    With the PodLevelResources gate on and `spec.resources` present (even empty), the pod-level values alone
    decide. Otherwise every container counts (init and sidecars too, ephemeral containers cannot set
    resources): zero values count as unset, and the sums of requests must equal the sums of limits with
    every container limiting both cpu and memory.
    """
    requests: dict[str, Decimal] = {}
    limits: dict[str, Decimal] = {}
    guaranteed = True
    if pod_level_resources and pod.resources is not None:
        _positive(requests, pod.resources.requests)
        if not _positive(limits, pod.resources.limits) >= _ALL_QOS_RESOURCES:
            guaranteed = False
    else:
        containers = pod.containers
        if containers and containers[0].kind != KIND_APP:  # app containers are summed first (init ones lead)
            containers = (*pod.app_containers, *pod.init_containers)
        for container in containers:
            _positive(requests, container.requests)
            if not _positive(limits, container.limits) >= _ALL_QOS_RESOURCES:
                guaranteed = False
    if not requests and not limits:
        return BEST_EFFORT
    if guaranteed and len(requests) == len(limits) and all(limits.get(n) == v for n, v in requests.items()):
        return GUARANTEED
    return BURSTABLE


def exclusive_cpus(qos: str, cpu: Decimal, pod_level: bool = False) -> int:
    """How many CPUs the static CPU manager gives a container for itself: its CPU request when the pod is
    Guaranteed, has no pod-level resources and the request is a whole number of CPUs; otherwise none (it runs in
    the shared pool). Follows kubernetes v1.35 pkg/kubelet/cm/cpumanager/policy_static.go (guaranteedCPUs, and
    Allocate skipping pods whose pod-level resources are set). Every command that asks reads this: the kubelet
    model, lint's CPU rules, the live audit and admit's remedy.
    """
    if qos != GUARANTEED or pod_level or cpu <= 0 or cpu != cpu.to_integral_value():
        return 0
    return int(cpu)


def exclusive_cpus_of_millis(qos: str, millicpus: int, pod_level: bool = False) -> int:
    """exclusive_cpus for a CPU request counted in millicores (as the kubelet model counts it)."""
    return exclusive_cpus(qos, Decimal(millicpus) / 1000, pod_level)


# -- accelerators and GPU containers -----------------------------------------------------------------------


def requests_accelerator(container: Container, registry: AcceleratorRegistry = DEFAULT_REGISTRY) -> bool:
    """The container asks for an accelerator resource (a non-zero or unreadable value)."""
    is_accelerator = registry.is_accelerator
    for section in (container.requests, container.limits):
        for name, value in section.items():  # a loop, not any(): asked of every container lint reads
            if is_accelerator(name) and value != 0:
                return True
    return bool(container.invalid) and any(is_accelerator(n) for n in container.invalid)


def accelerator_requests(pod: Pod, registry: AcceleratorRegistry = DEFAULT_REGISTRY) -> dict[str, Decimal]:
    """The pod's effective requests of accelerator resources (PodRequests restricted to the registry)."""
    return {n: v for n, v in pod_requests(pod).items() if registry.is_accelerator(n) and v > 0}


def container_device_count(container: Container, registry: AcceleratorRegistry = DEFAULT_REGISTRY) -> int:
    """Whole accelerator devices one container asks for."""
    return sum(canonical(n, v) for n, v in container.requests.items() if v > 0 and registry.counts_devices(n))


def device_count(pod: Pod, registry: AcceleratorRegistry = DEFAULT_REGISTRY) -> int:
    """Whole accelerator devices the pod asks for (HAMi memory and core shares are not devices)."""
    return sum(canonical(n, v) for n, v in accelerator_requests(pod, registry).items() if registry.counts_devices(n))


def _sharing_annotation(annotations: Mapping[str, str]) -> bool:
    if not annotations:
        return False
    suffixes = {key.split("/")[-1] for key in annotations}
    return any(key in annotations or key.split("/")[-1] in suffixes for key in GPU_SHARING_ANNOTATIONS)


def uses_accelerators(pod: Pod, registry: AcceleratorRegistry = DEFAULT_REGISTRY) -> bool:
    """A GPU pod: an accelerator resource, a DRA claim, or a GPU-sharing annotation (KAI, HAMi)."""
    for container in pod.containers:
        if container.claims or requests_accelerator(container, registry):
            return True
    return bool(pod.resource_claims) or _sharing_annotation(pod.annotations)


def gpu_container_indices(pod: Pod, registry: AcceleratorRegistry = DEFAULT_REGISTRY) -> tuple[int, ...]:
    """Which containers (indices into `pod.containers`) use the pod's accelerators.

    The container KAI's `gpu-fraction-container-name` annotation names (any kind); else the app containers
    requesting an accelerator; else those holding a DRA claim; else, for a KAI fraction, the first app
    container (KAI's default); else, when the pod uses accelerators otherwise (a pod-level claim, a HAMi
    annotation), every app container. Init containers and sidecars only when the annotation names them.
    """
    named = pod.annotations.get(KAI_GPU_FRACTION_CONTAINER_NAME)
    if named:
        return tuple(i for i, c in enumerate(pod.containers) if c.name == named)
    containers = pod.containers
    apps: list[int] = []
    chosen: list[int] = []
    for i, container in enumerate(containers):  # one loop, not two comprehensions: asked of every GPU template
        if container.kind == KIND_APP:
            apps.append(i)
            if requests_accelerator(container, registry):
                chosen.append(i)
    if chosen:
        return tuple(chosen)
    chosen = [i for i in apps if containers[i].claims]
    if chosen:
        return tuple(chosen)
    if not apps or not uses_accelerators(pod, registry):
        return ()
    if KAI_GPU_FRACTION in pod.annotations or KAI_GPU_MEMORY in pod.annotations:
        return (apps[0],)
    return tuple(apps)


def gpu_containers(pod: Pod, registry: AcceleratorRegistry = DEFAULT_REGISTRY) -> tuple[Container, ...]:
    """The containers that use the pod's accelerators (see `gpu_container_indices`)."""
    return tuple(pod.containers[i] for i in gpu_container_indices(pod, registry))
