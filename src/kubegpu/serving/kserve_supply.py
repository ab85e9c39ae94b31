"""What KServe adds to a predictor's container, as the rules read it: the facts the input alone decides
(`workloads/kserve.py`: default resources, the runtimes KServe ships), and a ServingRuntime of the input.

Follows kserve v0.15: a `model:` predictor's container is the ServingRuntime's container (the one named by
`runtime:`, or the one chosen for its model format) with the predictor's fields merged over it, and the pod
takes the runtime's volumes. A runtime in the input is bound to its predictor by the input's expansion
(`workloads.expand.bind_runtimes`); any other runtime that KServe does not ship is unknown, and the rules say
that it decides.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubegpu.errors import QuantityError
from kubegpu.manifests import ContainerRef, PodTemplate
from kubegpu.manifests.resources import ResourceValue
from kubegpu.units import parse_quantity


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


def supply(template: PodTemplate, container: ContainerRef) -> Supply | None:
    """What KServe adds to `container` (a component container of an InferenceService); None for anything else.

    A ServingRuntime of the input was bound to its predictor when the input was expanded (workloads.expand), so
    the template's `fill` already says what lint's pod model, admit and gen read; this only parses its values.
    """
    fill = template.fill(container)
    if fill is None:
        return None
    if fill.requests is None or fill.limits is None:
        return Supply(fill.source, None, None, fill.shm)
    requests = {str(name): _value(str(name), raw) for name, raw in fill.requests.items()}
    limits = {str(name): _value(str(name), raw) for name, raw in fill.limits.items()}
    return Supply(fill.source, requests, limits, fill.shm)


def _value(name: str, raw: Any) -> ResourceValue:
    try:
        return ResourceValue(name, raw, (), parse_quantity(raw))
    except QuantityError as err:
        return ResourceValue(name, raw, (), None, str(err))


def effective(
    own: Mapping[str, ResourceValue], supplied: Mapping[str, ResourceValue] | None
) -> Mapping[str, ResourceValue]:
    """The container's own values, with the supplier's for the keys it leaves out."""
    if not supplied:
        return own
    merged = dict(supplied)
    merged.update(own)
    return merged
