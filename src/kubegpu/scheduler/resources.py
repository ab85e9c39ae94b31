"""Pod and node resource accounting as kube-scheduler sees it: actual and non-zero requests per resource.

Follows kubernetes v1.35 pkg/scheduler/framework (NodeInfo.Requested / NonZeroRequested) and
pkg/api/v1/resource (PodRequests: containers, restartable init sidecars, init max, overhead).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

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
class PodRequest:
    """The requests of one pod: actual sums, and sums with cpu/memory non-zero defaults (Fit only)."""

    requests: Mapping[str, int] = field(default_factory=dict)
    nonzero: Mapping[str, int] = field(default_factory=dict)

    def get(self, name: str, nonzero: bool = False) -> int:
        """The request for one resource (0 when absent)."""
        return (self.nonzero if nonzero else self.requests).get(name, 0)

    def is_best_effort_for(self, names: Iterable[str]) -> bool:
        """True when the pod requests none of the given resources (BalancedAllocation PreScore Skip)."""
        return all(self.requests.get(n, 0) == 0 for n in names)


def _container_requests(container: Mapping[str, object]) -> dict[str, int]:
    raw = container.get("requests") or {}
    if not isinstance(raw, Mapping):
        raise InputError("container requests must be a mapping")
    return {str(k): canonical_amount(str(k), v) for k, v in raw.items()}


def _add(into: dict[str, int], more: Mapping[str, int]) -> None:
    for key, value in more.items():
        into[key] = into.get(key, 0) + value


def _nonzero(requests: Mapping[str, int]) -> dict[str, int]:
    out = dict(requests)
    if CPU not in requests:
        out[CPU] = DEFAULT_MILLI_CPU_REQUEST
    if MEMORY not in requests:
        out[MEMORY] = DEFAULT_MEMORY_REQUEST
    return out


def pod_request(
    containers: Iterable[Mapping[str, object]],
    sidecars: Iterable[Mapping[str, object]] = (),
    init_containers: Iterable[Mapping[str, object]] = (),
    overhead: Mapping[str, object] | None = None,
) -> PodRequest:
    """Sum a pod's requests the way PodRequests does (sidecars add, init containers take the max).

    Non-zero defaults are applied per container that omits cpu or memory (an explicit 0 stays 0).
    """
    actual: dict[str, int] = {}
    nonzero: dict[str, int] = {}
    for container in list(containers) + list(sidecars):
        reqs = _container_requests(container)
        _add(actual, reqs)
        _add(nonzero, _nonzero(reqs))
    for container in init_containers:
        reqs = _container_requests(container)
        for target, values in ((actual, reqs), (nonzero, _nonzero(reqs))):
            for key, value in values.items():
                target[key] = max(target.get(key, 0), value)
    if overhead:
        extra = {str(k): canonical_amount(str(k), v) for k, v in overhead.items()}
        _add(actual, extra)
        _add(nonzero, extra)
    return PodRequest(requests=actual, nonzero=nonzero)


@dataclass(frozen=True)
class NodeResources:
    """One node's allocatable and what its bound pods request (actual and non-zero sums)."""

    name: str
    allocatable: Mapping[str, int]
    requested: Mapping[str, int] = field(default_factory=dict)
    nonzero_requested: Mapping[str, int] = field(default_factory=dict)
    pod_count: int = 0

    def with_pod(self, pod: PodRequest) -> NodeResources:
        """The node after binding one more pod."""
        req = dict(self.requested)
        _add(req, pod.requests)
        nz = dict(self.nonzero_requested)
        _add(nz, pod.nonzero)
        return NodeResources(self.name, self.allocatable, req, nz, self.pod_count + 1)
