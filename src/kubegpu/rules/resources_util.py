"""Small helpers shared by rules that read container resources (parsed once per container)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from kubegpu.manifests import ContainerRef, ContainerResources, PodTemplate, container_resources, memoised
from kubegpu.manifests.resources import accelerator_requests
from kubegpu.rules.base import RuleContext


def gpu_containers(template: PodTemplate, ctx: RuleContext) -> Iterator[tuple[ContainerRef, ContainerResources]]:
    """App containers (not init, not sidecars) that use the pod's accelerators.

    Those that request an accelerator resource; failing that, those holding a DRA claim; failing that
    (GPU given by a sharing annotation such as KAI's gpu-fraction), every app container.
    """
    chosen = memoised(template, ("gpu_containers", ctx.accelerator_resources), _gpu_containers, template,
                      ctx.accelerator_resources)
    for container in chosen:
        yield container, container_resources(container)


def _gpu_containers(template: PodTemplate, accelerators: tuple[str, ...]) -> list[ContainerRef]:
    app = [c for c in template.containers if c.kind == "container"]
    chosen = [c for c in app if accelerator_requests(container_resources(c), accelerators)]
    return chosen or [c for c in app if _claims(c)] or app


def _claims(container: ContainerRef) -> bool:
    resources = container.data.get("resources")
    return isinstance(resources, Mapping) and bool(resources.get("claims"))


def all_container_resources(template: PodTemplate) -> Iterator[tuple[ContainerRef, ContainerResources]]:
    for container in template.containers:
        yield container, container_resources(container)
