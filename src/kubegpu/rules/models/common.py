"""What the model-loading rules share: their practice and the containers they look at for an inference server."""

from __future__ import annotations

from kubegpu.manifests import (
    ContainerRef,
    PodTemplate,
)
from kubegpu.manifests.gpu_containers import gpu_containers
from kubegpu.ruleapi import RuleContext

PRACTICE = "model loading"


def server_containers(template: PodTemplate, ctx: RuleContext) -> list[ContainerRef]:
    """App containers that request accelerators; all app containers when the pod asks by annotation only."""
    gpu = [c for c, _ in gpu_containers(template, ctx.accelerator_resources)]
    return gpu or [c for c in template.containers if c.kind == "container"]
