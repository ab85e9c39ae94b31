"""A template's GPU containers paired with their parsed resources, found once per template: a dozen rules and
`coldstart` ask (the pod model, `manifests/pod.py`, decides which containers are GPU containers)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from kubegpu.manifests import ContainerRef, ContainerResources, PodTemplate, container_resources, memoised
from kubegpu.manifests.resources import template_gpu_containers


def gpu_containers(
    template: PodTemplate, accelerator_resources: Sequence[str]
) -> tuple[tuple[ContainerRef, ContainerResources], ...]:
    """The containers that use the pod's accelerators, as the pod model decides (KAI's
    gpu-fraction-container-name, else app containers requesting an accelerator, else those holding a DRA
    claim, else KAI's default first container or every app container). Paired once per template: a dozen
    rules ask."""
    accelerators = tuple(accelerator_resources)
    return memoised(template, ("gpu_container_resources", accelerators), _gpu_containers, template, accelerators)


def _gpu_containers(
    template: PodTemplate, accelerators: tuple[str, ...]
) -> tuple[tuple[ContainerRef, ContainerResources], ...]:
    return tuple([(c, container_resources(c)) for c in template_gpu_containers(template, accelerators)])


def all_container_resources(template: PodTemplate) -> Iterator[tuple[ContainerRef, ContainerResources]]:
    for container in template.containers:
        yield container, container_resources(container)
