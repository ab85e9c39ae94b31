"""The pod spec of a pod template as the API server would hold it, whatever the workload's own layout.

KServe components, Argo templates, TrainJob trainers and operators' custom resources keep their containers
outside `containers:`; every command that needs a real pod spec (admit, generators) reads it here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubegpu.manifests.document import as_mapping
from kubegpu.manifests.template import ContainerRef, PodTemplate, filled_resources


def pod_spec(template: PodTemplate) -> Mapping[str, Any]:
    """`template.spec` with `containers` and `initContainers` set from the template's containers (with the cpu
    and memory KServe fills in where the input decides them)."""
    spec = dict(template.spec)
    spec["containers"] = [_container(template, c) for c in template.containers if c.kind == "container"]
    init = [_container(template, c) for c in template.containers if c.kind != "container"]
    if init:
        spec["initContainers"] = init
    else:
        spec.pop("initContainers", None)
    return spec


def _container(template: PodTemplate, container: ContainerRef) -> dict[str, Any]:
    data = dict(container.data)
    fill = template.fill(container)
    if fill is not None and fill.container_name:
        data.setdefault("name", fill.container_name)  # the name the controller gives its container
    filled = filled_resources(as_mapping(data.get("resources")), fill)
    if filled is not None:
        data["resources"] = {**as_mapping(data.get("resources")), "requests": filled[0], "limits": filled[1]}
    return data
