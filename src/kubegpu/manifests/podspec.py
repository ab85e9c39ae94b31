"""The pod spec of a pod template as the API server would hold it, whatever the workload's own layout.

KServe components, Argo templates, TrainJob trainers and operators' custom resources keep their containers
outside `containers:`; every command that needs a real pod spec (admit, generators) reads it here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubegpu.manifests.workloads import PodTemplate


def pod_spec(template: PodTemplate) -> Mapping[str, Any]:
    """`template.spec` with `containers` and `initContainers` set from the template's containers."""
    spec = dict(template.spec)
    spec["containers"] = [dict(c.data) for c in template.containers if c.kind == "container"]
    init = [dict(c.data) for c in template.containers if c.kind != "container"]
    if init:
        spec["initContainers"] = init
    else:
        spec.pop("initContainers", None)
    return spec
