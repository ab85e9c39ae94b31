"""Read a container's requests and limits with their positions, and a pod template's resource model.

The resource arithmetic (requests, QoS, accelerators, GPU containers) is `kubegpu.manifests.pod`'s; this
module only keeps where each value is written, for findings and fixes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache
from typing import Any

import kubegpu.manifests.pod as podmodel
from kubegpu.errors import QuantityError
from kubegpu.manifests.accelerators import (
    DEFAULT_ACCELERATOR_RESOURCES,
    HAMI_RESOURCES,
    AcceleratorRegistry,
    is_accelerator,
)
from kubegpu.manifests.document import is_mapping
from kubegpu.manifests.memo import memoised
from kubegpu.manifests.pod import GPU_SHARING_ANNOTATIONS
from kubegpu.manifests.template import ContainerFill, ContainerRef, PodTemplate
from kubegpu.units import Quantity, parse_quantity


@dataclass(frozen=True)
class ResourceValue:
    """One requests/limits entry: the raw value, its path, and the parsed quantity (None if invalid)."""

    name: str
    raw: Any
    path: tuple[str | int, ...]
    quantity: Quantity | None
    error: str | None = None


@dataclass(frozen=True)
class ContainerResources:
    """Requests and limits of one container, each value parsed exactly."""

    container: ContainerRef
    requests: Mapping[str, ResourceValue]
    limits: Mapping[str, ResourceValue]

    @property
    def resources_path(self) -> tuple[str | int, ...]:
        return (*self.container.path, "resources")


def _entries(values: Any, base: tuple[str | int, ...]) -> dict[str, ResourceValue]:
    """The entries of one requests or limits mapping written at `base`."""
    if values is None or not is_mapping(values):
        return {}
    out: dict[str, ResourceValue] = {}
    for name, raw in values.items():
        key = name if type(name) is str else str(name)
        kind = type(raw)
        out[key] = _shared_value(key, raw, base) if kind is str or kind is int else _resource_value(key, raw, base)
    return out


# A monorepo writes the same few values at the same few paths thousands of times, and a frozen value costs as much
# to build as a dozen lookups: equal entries share one. Only exact str and int values (never bool, which equals an
# int, or float, whose -0.0 equals 0.0) are keys, so an entry shared is one written the same.
@lru_cache(maxsize=4096)
def _shared_value(name: str, raw: str | int, base: tuple[str | int, ...]) -> ResourceValue:
    return _resource_value(name, raw, base)


def _resource_value(name: str, raw: Any, base: tuple[str | int, ...]) -> ResourceValue:
    try:
        return ResourceValue(name, raw, (*base, name), parse_quantity(raw))
    except QuantityError as err:
        return ResourceValue(name, raw, (*base, name), None, str(err))


def container_resources(container: ContainerRef) -> ContainerResources:
    """Parsed requests and limits, computed once per container (every rule asks for them)."""
    return memoised(container, "resources", _container_resources, container)


def _container_resources(container: ContainerRef) -> ContainerResources:
    resources = container.data.get("resources")
    if not is_mapping(resources):
        return ContainerResources(container, {}, {})
    path = container.path
    return ContainerResources(
        container,
        _entries(resources.get("requests"), (*path, "resources", "requests")),
        _entries(resources.get("limits"), (*path, "resources", "limits")),
    )


def template_pod(template: PodTemplate) -> podmodel.Pod:
    """The pod model of a template, read leniently (invalid-quantity reports bad values); built once."""
    return memoised(template, "pod_model", _template_pod, template)


_KINDS = {"container": podmodel.KIND_APP, "init": podmodel.KIND_INIT, "sidecar": podmodel.KIND_SIDECAR}


def _template_pod(template: PodTemplate) -> podmodel.Pod:
    containers = tuple([_model_container(ref, template.fill(ref)) for ref in template.containers])
    spec = template.spec
    # A TrainJob's trainer has `resources` of its own container, not pod-level ones (it has no volumes field).
    raw_resources = spec.get("resources")
    resources = (
        podmodel.read_pod_resources(raw_resources, "spec.resources", strict=False)
        if raw_resources is not None and template.volumes_field is not None
        else None
    )
    raw_overhead = spec.get("overhead")
    overhead = podmodel.read_amounts(raw_overhead, "spec.overhead", strict=False)[0] if raw_overhead is not None else {}
    claims = spec.get("resourceClaims")
    claim_names = (
        tuple(str(c.get("name", "")) for c in claims if isinstance(c, Mapping)) if isinstance(claims, list) else ()
    )
    raw_annotations = template.annotations
    annotations = {str(k): str(v) for k, v in raw_annotations.items()} if raw_annotations else {}
    return podmodel.assembled_pod(containers, resources, overhead, annotations, claim_names)


def _model_container(ref: ContainerRef, fill: ContainerFill | None = None) -> podmodel.Container:
    """The model's container from the values container_resources already parsed (every rule reads them), with
    the cpu and memory KServe fills in where it leaves them out."""
    parsed = container_resources(ref)
    invalid: list[str] = []
    requests = _values(parsed.requests, invalid)
    limits = _values(parsed.limits, invalid)
    if fill is not None:
        _fill_in(requests, parsed.requests, fill.requests)
        _fill_in(limits, parsed.limits, fill.limits)
    resources = ref.data.get("resources")
    claims = resources.get("claims") if is_mapping(resources) else None
    names = tuple(str(c.get("name", "")) for c in claims if isinstance(c, Mapping)) if isinstance(claims, list) else ()
    # The dicts are this container's own: the model keeps them rather than copying them again.
    return podmodel.defaulted_container(ref.name, _KINDS[ref.kind], requests, limits, names, tuple(invalid))


def _values(entries: Mapping[str, ResourceValue], invalid: list[str]) -> dict[str, Decimal]:
    """The exact values of readable entries; the names of the others are added to `invalid`."""
    values: dict[str, Decimal] = {}
    for name, entry in entries.items():
        quantity = entry.quantity
        if quantity is None:
            invalid.append(name)
        else:
            values[name] = quantity.value
    return values


def _fill_in(values: dict[str, Decimal], own: Mapping[str, ResourceValue], fill: Mapping[str, object] | None) -> None:
    """Add the values KServe fills in for the keys the container leaves out (a value that is not a quantity is
    left out: the pod would not be created with it)."""
    for name, raw in (fill or {}).items():
        if name not in own:
            try:
                values[name] = parse_quantity(raw).value
            except QuantityError:
                continue


def template_gpu_containers(
    template: PodTemplate, prefixes: Sequence[str] = DEFAULT_ACCELERATOR_RESOURCES
) -> tuple[ContainerRef, ...]:
    """The template's containers that use its accelerators (the pod model decides which)."""
    listed = tuple(prefixes)
    return memoised(template, ("gpu_containers", listed), _template_gpu_containers, template, listed)


def _template_gpu_containers(template: PodTemplate, prefixes: tuple[str, ...]) -> tuple[ContainerRef, ...]:
    indices = podmodel.gpu_container_indices(template_pod(template), AcceleratorRegistry.of(prefixes))
    if not indices:
        return ()
    refs = template.containers
    order = podmodel.model_order([_KINDS[ref.kind] == podmodel.KIND_APP for ref in refs])  # indices are the model's
    return tuple([refs[order[i]] for i in indices])


def uses_accelerators(template: PodTemplate, prefixes: Sequence[str] = DEFAULT_ACCELERATOR_RESOURCES) -> bool:
    """Does this pod ask for accelerators: a resource, a DRA claim, or a GPU-sharing annotation?

    Answered once per template and accelerator list: every GPU-only rule asks.
    """
    return memoised(template, ("uses_accelerators", tuple(prefixes)), _uses_accelerators, template, prefixes)


def _uses_accelerators(template: PodTemplate, prefixes: Sequence[str]) -> bool:
    return podmodel.uses_accelerators(template_pod(template), AcceleratorRegistry.of(prefixes))


def gpu_count(template: PodTemplate, prefixes: Sequence[str] = DEFAULT_ACCELERATOR_RESOURCES) -> int:
    """Whole accelerators the pod asks for (its effective requests: sidecars add, init containers a max)."""
    return podmodel.device_count(template_pod(template), AcceleratorRegistry.of(prefixes))


__all__ = [
    "DEFAULT_ACCELERATOR_RESOURCES",
    "GPU_SHARING_ANNOTATIONS",
    "HAMI_RESOURCES",
    "ContainerResources",
    "ResourceValue",
    "container_resources",
    "gpu_count",
    "is_accelerator",
    "template_gpu_containers",
    "template_pod",
    "uses_accelerators",
]
