"""A pod as the kubelet's resource managers see it: containers by kind with exact requests.

Follows kubernetes v1.35 API defaulting (a missing request takes the limit) and the
restartPolicy: Always marker of sidecar (restartable init) containers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubegpu.errors import InputError, QuantityError
from kubegpu.units.quantity import parse_quantity

KIND_INIT = "init"
KIND_SIDECAR = "sidecar"
KIND_APP = "app"

CPU = "cpu"
MEMORY = "memory"


@dataclass(frozen=True)
class ContainerRequest:
    """One container: CPU in millicores, memory and hugepages in bytes, devices as counts."""

    name: str
    kind: str = KIND_APP
    requests: Mapping[str, int] = field(default_factory=dict)
    limits: Mapping[str, int] = field(default_factory=dict)

    @property
    def restartable(self) -> bool:
        return self.kind == KIND_SIDECAR

    def request(self, resource: str) -> int:
        return int(self.requests.get(resource, 0))


@dataclass(frozen=True)
class PodRequest:
    """A pod: its containers in kubelet order (init containers first) and optional pod resources."""

    name: str
    init_containers: tuple[ContainerRequest, ...] = ()
    containers: tuple[ContainerRequest, ...] = ()
    namespace: str = "default"
    uid: str = ""
    pod_requests: Mapping[str, int] | None = None
    pod_limits: Mapping[str, int] | None = None
    source: str | None = None

    @property
    def key(self) -> str:
        return self.uid or f"{self.namespace}/{self.name}"

    def all_containers(self) -> tuple[ContainerRequest, ...]:
        return self.init_containers + self.containers

    def effective(self, resource: str, limits: bool = False) -> int:
        """PodRequests/PodLimits of a resource: max(apps + sidecars, init peaks + sidecars)."""
        sidecars = 0
        init_peak = 0
        for c in self.init_containers:
            n = (c.limits if limits else c.requests).get(resource, 0)
            if c.restartable:
                sidecars += n
                init_peak = max(init_peak, sidecars)
            else:
                init_peak = max(init_peak, sidecars + n)
        apps = sum((c.limits if limits else c.requests).get(resource, 0) for c in self.containers)
        return max(init_peak, apps + sidecars)

    def resource_names(self) -> list[str]:
        names = {r for c in self.all_containers() for r in (*c.requests, *c.limits)}
        return sorted(names)

    @property
    def uses_pod_level_resources(self) -> bool:
        return self.pod_requests is not None or self.pod_limits is not None

    @classmethod
    def from_pod_spec(
        cls,
        name: str,
        spec: Mapping[str, Any],
        source: str | None = None,
        namespace: str = "default",
        uid: str = "",
    ) -> PodRequest:
        """Read a PodSpec mapping; InputError naming the field for anything unreadable."""
        if not isinstance(spec, Mapping):
            raise InputError(f"pod {name}: spec must be a mapping", file=source)
        inits = tuple(
            _container(c, i, "initContainers", name, source)
            for i, c in enumerate(_seq(spec.get("initContainers"), "initContainers", name, source))
        )
        apps = tuple(
            _container(c, i, "containers", name, source)
            for i, c in enumerate(_seq(spec.get("containers"), "containers", name, source))
        )
        if not apps:
            raise InputError(f"pod {name}: spec.containers is empty", file=source)
        pod_req: dict[str, int] | None = None
        pod_lim: dict[str, int] | None = None
        resources = spec.get("resources")
        if resources:
            pod_req, pod_lim = _resources(resources, f"pod {name}: spec.resources", source)
        return cls(
            name=name,
            init_containers=inits,
            containers=apps,
            namespace=namespace,
            uid=uid,
            pod_requests=pod_req,
            pod_limits=pod_lim,
            source=source,
        )


def _seq(value: Any, field_name: str, pod: str, source: str | None) -> Sequence[Any]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise InputError(f"pod {pod}: spec.{field_name} must be a list", file=source)
    return value


def _container(
    raw: Any, index: int, field_name: str, pod: str, source: str | None
) -> ContainerRequest:
    where = f"pod {pod}: spec.{field_name}[{index}]"
    if not isinstance(raw, Mapping):
        raise InputError(f"{where} must be a mapping", file=source)
    name = str(raw.get("name") or f"{field_name}-{index}")
    kind = KIND_APP
    if field_name == "initContainers":
        kind = KIND_SIDECAR if raw.get("restartPolicy") == "Always" else KIND_INIT
    requests, limits = _resources(raw.get("resources") or {}, f"{where} ({name}).resources", source)
    return ContainerRequest(name=name, kind=kind, requests=requests, limits=limits)


def _resources(raw: Any, where: str, source: str | None) -> tuple[dict[str, int], dict[str, int]]:
    if not isinstance(raw, Mapping):
        raise InputError(f"{where} must be a mapping", file=source)
    limits = _amounts(raw.get("limits"), f"{where}.limits", source)
    requests = _amounts(raw.get("requests"), f"{where}.requests", source)
    for resource, value in limits.items():
        requests.setdefault(resource, value)  # API defaulting: request defaults to the limit
    return requests, limits


def _amounts(raw: Any, where: str, source: str | None) -> dict[str, int]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise InputError(f"{where} must be a mapping", file=source)
    out: dict[str, int] = {}
    for resource, value in raw.items():
        try:
            quantity = parse_quantity(value)
        except QuantityError as err:
            raise InputError(f"{where}.{resource}: {err.message}", file=source) from err
        if quantity.value < 0:
            raise InputError(f"{where}.{resource}: must not be negative", file=source)
        out[str(resource)] = quantity.millis if resource == CPU else quantity.ceil
    return out
