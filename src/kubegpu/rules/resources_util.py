"""Small helpers shared by rules that read container resources (parsed once per container)."""

from __future__ import annotations

from collections.abc import Iterator

from kubegpu.manifests import ContainerRef, ContainerResources, PodTemplate, container_resources
from kubegpu.manifests.resources import accelerator_requests
from kubegpu.rules.base import RuleContext


def gpu_containers(template: PodTemplate, ctx: RuleContext) -> Iterator[tuple[ContainerRef, ContainerResources]]:
    """App containers (not init, not sidecars) that request accelerators."""
    for container in template.containers:
        if container.kind != "container":
            continue
        resources = container_resources(container)
        if accelerator_requests(resources, ctx.accelerator_resources):
            yield container, resources


def all_container_resources(template: PodTemplate) -> Iterator[tuple[ContainerRef, ContainerResources]]:
    for container in template.containers:
        yield container, container_resources(container)
