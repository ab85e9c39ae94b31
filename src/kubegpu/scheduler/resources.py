"""Pod and node resource accounting as kube-scheduler sees it: actual and non-zero requests per resource.

Follows kubernetes v1.35 pkg/scheduler/framework (NodeInfo.Requested / NonZeroRequested) and
component-helpers resource.PodRequests, through the one pod model (`kubegpu.manifests.pod`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal

import kubegpu.manifests.pod as podmodel
from kubegpu.errors import InputError
from kubegpu.units.quantity import parse_quantity

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL_STORAGE = "ephemeral-storage"
PODS = "pods"
DEFAULT_MILLI_CPU_REQUEST = 100  # schedutil.DefaultMilliCPURequest
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024  # schedutil.DefaultMemoryRequest (200Mi)


def is_extended(name: str) -> bool:
    """True for scalar resources (domain-prefixed names and hugepages), which Fit skips when unrequested."""
    return "/" in name or name.startswith("hugepages-")


def canonical_amount(name: str, raw: object) -> int:
    """A quantity in the unit the scheduler counts: cpu in millicores, everything else in units."""
    quantity = parse_quantity(raw)
    return quantity.millis if name == CPU else quantity.ceil


@dataclass(frozen=True)
class ResourceRequest:
    """One pod's requests as kube-scheduler counts them (computePodResourceRequest): actual sums, and sums with
    the cpu/memory non-zero defaults (Fit only). The kubelet's view of a pod is kubegpu.kubelet.PodRequest."""

    requests: Mapping[str, int] = field(default_factory=dict)
    nonzero: Mapping[str, int] = field(default_factory=dict)

    def get(self, name: str, nonzero: bool = False) -> int:
        """The request for one resource (0 when absent)."""
        return (self.nonzero if nonzero else self.requests).get(name, 0)

    def is_best_effort_for(self, names: Iterable[str]) -> bool:
        """True when the pod requests none of the given resources (BalancedAllocation PreScore Skip)."""
        return all(self.requests.get(n, 0) == 0 for n in names)


def _add(into: dict[str, int], more: Mapping[str, int]) -> None:
    for key, value in more.items():
        into[key] = into.get(key, 0) + value


_NON_MISSING = {CPU: Decimal(DEFAULT_MILLI_CPU_REQUEST) / 1000, MEMORY: Decimal(DEFAULT_MEMORY_REQUEST)}


def resource_request_of(pod: podmodel.Pod, pod_level_resources: bool = True) -> ResourceRequest:
    """The scheduler's view of a pod: PodRequests, and PodRequests with the non-zero cpu/memory defaults
    filled in for each container that omits them (an explicit 0 stays 0), both with overhead."""
    actual = podmodel.pod_requests(pod, pod_level=pod_level_resources)
    nonzero = podmodel.pod_requests(pod, pod_level=pod_level_resources, non_missing=_NON_MISSING)
    return ResourceRequest(requests=podmodel.canonical_amounts(actual), nonzero=podmodel.canonical_amounts(nonzero))


def resource_request(
    containers: Iterable[Mapping[str, object]],
    sidecars: Iterable[Mapping[str, object]] = (),
    init_containers: Iterable[Mapping[str, object]] = (),
    overhead: Mapping[str, object] | None = None,
) -> ResourceRequest:
    """A pod given as lists of `{"requests": {...}}` (app containers, sidecars started after the init
    containers, init containers): the scheduler's view through the pod model."""
    parts: list[podmodel.Container] = []
    for kind, group in (
        (podmodel.KIND_INIT, init_containers),
        (podmodel.KIND_SIDECAR, sidecars),
        (podmodel.KIND_APP, containers),
    ):
        for i, container in enumerate(group):
            raw = container.get("requests") or {}
            if not isinstance(raw, Mapping):
                raise InputError("container requests must be a mapping")
            requests, _ = podmodel.read_amounts(raw, f"{kind}[{i}].requests")
            parts.append(podmodel.make_container(f"{kind}-{i}", kind, requests))
    extra, _ = podmodel.read_amounts(overhead, "overhead")
    return resource_request_of(podmodel.make_pod(parts, None, extra))


@dataclass(frozen=True)
class NodeResources:
    """One node's allocatable and what its bound pods request (actual and non-zero sums)."""

    name: str
    allocatable: Mapping[str, int]
    requested: Mapping[str, int] = field(default_factory=dict)
    nonzero_requested: Mapping[str, int] = field(default_factory=dict)
    pod_count: int = 0

    def with_pod(self, pod: ResourceRequest) -> NodeResources:
        """The node after binding one more pod."""
        req = dict(self.requested)
        _add(req, pod.requests)
        nz = dict(self.nonzero_requested)
        _add(nz, pod.nonzero)
        return NodeResources(self.name, self.allocatable, req, nz, self.pod_count + 1)
