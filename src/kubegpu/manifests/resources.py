"""Read a container's requests and limits, and decide whether a pod template uses accelerators.

Accelerators: extended resources by prefix (configurable), DRA resource claims, GPU-sharing annotations.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from kubegpu.errors import QuantityError
from kubegpu.manifests.document import as_mapping
from kubegpu.manifests.memo import memoised
from kubegpu.manifests.workloads import ContainerRef, PodTemplate
from kubegpu.units import Quantity, parse_quantity

DEFAULT_ACCELERATOR_RESOURCES: tuple[str, ...] = (
    "nvidia.com/gpu",
    "nvidia.com/mig-",
    "nvidia.com/gpu.shared",
    "amd.com/gpu",
    "gpu.intel.com/",
    "habana.ai/gaudi",
    "aws.amazon.com/neuron",
)
# KAI Scheduler fractional GPUs and HAMi virtual GPUs are requested by annotation or HAMi resources.
GPU_SHARING_ANNOTATIONS: tuple[str, ...] = (
    "gpu-fraction",
    "gpu-memory",
    "kai.scheduler/gpu-fraction",
    "nvidia.com/use-gputype",
    "hami.io/gpu-scheduler-policy",
)
HAMI_RESOURCES = ("nvidia.com/gpumem", "nvidia.com/gpucores")


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


def _entries(container: ContainerRef, section: str) -> dict[str, ResourceValue]:
    resources = container.data.get("resources")
    if not isinstance(resources, Mapping):
        return {}
    values = resources.get(section)
    if not isinstance(values, Mapping):
        return {}
    out: dict[str, ResourceValue] = {}
    base = (*container.path, "resources", section)
    for name, raw in values.items():
        key = name if type(name) is str else str(name)
        try:
            out[key] = ResourceValue(key, raw, (*base, key), parse_quantity(raw))
        except QuantityError as err:
            out[key] = ResourceValue(key, raw, (*base, key), None, str(err))
    return out


def container_resources(container: ContainerRef) -> ContainerResources:
    """Parsed requests and limits, computed once per container (every rule asks for them)."""
    return memoised(container, "resources", _container_resources, container)


def _container_resources(container: ContainerRef) -> ContainerResources:
    return ContainerResources(container, _entries(container, "requests"), _entries(container, "limits"))


def is_accelerator(name: str, prefixes: Sequence[str] = DEFAULT_ACCELERATOR_RESOURCES) -> bool:
    """True when a resource name is an accelerator: exact match or a prefix ending in '-' or '/'."""
    return _is_accelerator(name, tuple(prefixes))


@lru_cache(maxsize=1024)  # a manifest set names a handful of resources thousands of times
def _is_accelerator(name: str, prefixes: tuple[str, ...]) -> bool:
    for prefix in prefixes:
        if name == prefix or (prefix.endswith(("-", "/")) and name.startswith(prefix)):
            return True
    return name in HAMI_RESOURCES


def accelerator_requests(
    resources: ContainerResources, prefixes: Sequence[str] = DEFAULT_ACCELERATOR_RESOURCES
) -> dict[str, ResourceValue]:
    """The container's accelerator entries (limits win; extended resources must set limits).

    Computed once per container and accelerator list; callers must not modify the result.
    """
    key = ("accelerator_requests", tuple(prefixes))
    return memoised(resources.container, key, _accelerator_requests, resources, prefixes)


def _accelerator_requests(resources: ContainerResources, prefixes: Sequence[str]) -> dict[str, ResourceValue]:
    merged = {**resources.requests, **resources.limits}
    return {name: value for name, value in merged.items() if is_accelerator(name, prefixes)}


def uses_accelerators(
    template: PodTemplate, prefixes: Sequence[str] = DEFAULT_ACCELERATOR_RESOURCES
) -> bool:
    """Does this pod ask for accelerators: a resource, a DRA claim, or a GPU-sharing annotation?

    Answered once per template and accelerator list: every GPU-only rule asks.
    """
    return memoised(template, ("uses_accelerators", tuple(prefixes)), _uses_accelerators, template, prefixes)


def _uses_accelerators(template: PodTemplate, prefixes: Sequence[str]) -> bool:
    for container in template.containers:
        requested = accelerator_requests(container_resources(container), prefixes)
        # `nvidia.com/gpu: 0` asks for nothing; an unparsable value is treated as a request.
        if any(value.quantity is None or value.quantity.value > 0 for value in requested.values()):
            return True
        claims = as_mapping(container.data.get("resources")).get("claims")
        if isinstance(claims, list) and claims:
            return True
    if isinstance(template.spec.get("resourceClaims"), list) and template.spec["resourceClaims"]:
        return True
    annotations = template.annotations
    return any(key in annotations or key.split("/")[-1] in _suffixes(annotations) for key in GPU_SHARING_ANNOTATIONS)


def gpu_count(
    template: PodTemplate, prefixes: Sequence[str] = DEFAULT_ACCELERATOR_RESOURCES
) -> int:
    """Whole accelerators the pod asks for (sum over app containers; max with init containers)."""
    app = 0
    init = 0
    for container in template.containers:
        total = 0
        for value in accelerator_requests(container_resources(container), prefixes).values():
            if value.quantity is not None and value.name not in HAMI_RESOURCES:
                total += value.quantity.ceil
        if container.kind == "init":
            init = max(init, total)
        else:
            app += total
    return max(app, init)


def _suffixes(annotations: Mapping[str, Any]) -> set[str]:
    return {str(key).split("/")[-1] for key in annotations}


