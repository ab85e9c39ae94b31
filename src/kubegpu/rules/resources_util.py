"""Small helpers shared by rules that read container resources (parsed once per container)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from kubegpu.manifests import ContainerRef, ContainerResources, PodTemplate, container_resources
from kubegpu.manifests.resources import accelerator_requests
from kubegpu.rules.base import RuleContext


def gpu_containers(template: PodTemplate, ctx: RuleContext) -> Iterator[tuple[ContainerRef, ContainerResources]]:
    """App containers (not init, not sidecars) that use the pod's accelerators.

    Those that request an accelerator resource; failing that, those holding a DRA claim; failing that
    (GPU given by a sharing annotation such as KAI's gpu-fraction), every app container.
    """
    key = ("gpu_containers", ctx.accelerator_resources)
    cache: dict[object, list[ContainerRef]] = template.__dict__.setdefault("_cache", {})
    chosen = cache.get(key)
    if chosen is None:
        app = [c for c in template.containers if c.kind == "container"]
        chosen = [c for c in app if accelerator_requests(container_resources(c), ctx.accelerator_resources)]
        if not chosen:
            chosen = [c for c in app if _claims(c)] or app
        cache[key] = chosen
    for container in chosen:
        yield container, container_resources(container)


def _claims(container: ContainerRef) -> bool:
    resources = container.data.get("resources")
    return isinstance(resources, Mapping) and bool(resources.get("claims"))


def all_container_resources(template: PodTemplate) -> Iterator[tuple[ContainerRef, ContainerResources]]:
    for container in template.containers:
        yield container, container_resources(container)
