"""What KServe adds to a predictor's container, as the rules read it: the facts the input alone decides
(`manifests/kserve.py`: default resources, the runtimes KServe ships), and a ServingRuntime of the input.

Follows kserve v0.15: a `model:` predictor's container is the ServingRuntime's container (the one named by
`runtime:`, or the one chosen for its model format) with the predictor's fields merged over it, and the pod
takes the runtime's volumes. A runtime in the input is read here; any other runtime that KServe does not ship
is unknown, and the rules say that it decides.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubegpu.errors import QuantityError
from kubegpu.manifests import ContainerRef, Document, PodTemplate, as_mapping, mapping_items
from kubegpu.manifests.kserve import kserve_fill
from kubegpu.manifests.resources import ResourceValue
from kubegpu.rules.base import RuleContext
from kubegpu.units import parse_quantity

RUNTIME_KINDS = ("ServingRuntime", "ClusterServingRuntime")
_SHM_PATH = "/dev/shm"


@dataclass(frozen=True)
class Supply:
    """Who completes a KServe container, and what it adds for the keys the written container leaves out.

    `requests`/`limits` are None when the supplier is a ServingRuntime that is not in the input (unknown);
    `shm` says whether the supplier mounts a memory-backed /dev/shm (None: unknown).
    """

    source: str  # in words, after "KServe fills in what it leaves out from": "its default resources (...)"
    requests: Mapping[str, ResourceValue] | None
    limits: Mapping[str, ResourceValue] | None
    shm: bool | None

    @property
    def known(self) -> bool:
        return self.requests is not None


def supply(template: PodTemplate, container: ContainerRef, ctx: RuleContext) -> Supply | None:
    """What KServe adds to `container` (a component container of an InferenceService); None for anything else.

    A ServingRuntime of the input that the predictor names (or the only one chosen for its model format) wins;
    otherwise the facts the input alone decides (`kserve_fill`).
    """
    fill = kserve_fill(template, container)
    if fill is None:
        return None
    if container.path[2] == "model":
        runtime = _find_runtime(template, container, ctx)
        if runtime is not None:
            return _runtime_supply(runtime)
    if fill.resources is None:
        return Supply(fill.source, None, None, fill.shm)
    values = {name: _value(name, raw) for name, raw in fill.resources.items()}
    return Supply(fill.source, values, values, fill.shm)


def _value(name: str, raw: Any) -> ResourceValue:
    try:
        return ResourceValue(name, raw, (), parse_quantity(raw))
    except QuantityError as err:
        return ResourceValue(name, raw, (), None, str(err))


def _runtime_supply(runtime: Document) -> Supply:
    spec = as_mapping(runtime.data.get("spec"))
    containers = list(mapping_items(spec.get("containers")))
    main = next((c for c in containers if c.get("name") == "kserve-container"), containers[0] if containers else {})
    resources = as_mapping(main.get("resources"))
    requests, limits = (
        {str(k): _value(str(k), v) for k, v in as_mapping(resources.get(section)).items()}
        for section in ("requests", "limits")
    )
    memory = {
        str(v.get("name"))
        for v in mapping_items(spec.get("volumes"))
        if str(as_mapping(v.get("emptyDir")).get("medium", "")).lower() == "memory"
    }
    shm = any(
        str(m.get("mountPath", "")).rstrip("/") == _SHM_PATH and str(m.get("name")) in memory
        for m in mapping_items(main.get("volumeMounts"))
    )
    return Supply(f"{runtime.kind} '{runtime.ref.name}'", requests, limits, shm)


def _find_runtime(template: PodTemplate, container: ContainerRef, ctx: RuleContext) -> Document | None:
    """The runtime named by `runtime:` (a namespaced one first), else the only auto-selected one for the format."""
    name = container.data.get("runtime")
    namespace = template.document.ref.namespace
    runtimes = ctx.documents_of(*RUNTIME_KINDS)
    if isinstance(name, str) and name:
        named = [d for d in runtimes if d.metadata.get("name") == name]
        local = [d for d in named if d.kind == "ServingRuntime" and d.ref.namespace == namespace]
        found = local or [d for d in named if d.kind == "ClusterServingRuntime"]
        return found[0] if found else None
    model_format = as_mapping(container.data.get("modelFormat")).get("name")
    if not isinstance(model_format, str):
        return None
    candidates = [
        d
        for d in runtimes
        if (d.kind == "ClusterServingRuntime" or d.ref.namespace == namespace)
        and any(
            f.get("autoSelect") is True and str(f.get("name", "")).lower() == model_format.lower()
            for f in mapping_items(as_mapping(d.data.get("spec")).get("supportedModelFormats"))
        )
    ]
    return candidates[0] if len(candidates) == 1 else None


def effective(
    own: Mapping[str, ResourceValue], supplied: Mapping[str, ResourceValue] | None
) -> Mapping[str, ResourceValue]:
    """The container's own values, with the supplier's for the keys it leaves out."""
    if not supplied:
        return own
    merged = dict(supplied)
    merged.update(own)
    return merged
