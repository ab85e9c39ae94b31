"""Pod QoS class (Guaranteed, Burstable, BestEffort) from cpu and memory of every container.

Follows kubernetes v1.35 pkg/apis/core/v1/helper/qos/qos.go (ComputePodQOS): init and sidecar
containers count, zero quantities are ignored, sums of requests must equal sums of limits;
with pod-level resources the pod's own requests/limits decide.
"""

from __future__ import annotations

from collections.abc import Mapping

from kubegpu.kubelet.pod import CPU, MEMORY, PodRequest

GUARANTEED = "Guaranteed"
BURSTABLE = "Burstable"
BEST_EFFORT = "BestEffort"
_QOS_RESOURCES = (CPU, MEMORY)


def _add(total: dict[str, int], amounts: Mapping[str, int]) -> set[str]:
    found: set[str] = set()
    for resource in _QOS_RESOURCES:
        value = amounts.get(resource, 0)
        if value > 0:
            total[resource] = total.get(resource, 0) + value
            found.add(resource)
    return found


def qos_class(pod: PodRequest, pod_level_resources: bool = True) -> str:
    """The pod's QoS class; `pod_level_resources` is the PodLevelResources gate (on in 1.34+)."""
    requests: dict[str, int] = {}
    limits: dict[str, int] = {}
    guaranteed = True
    if pod_level_resources and pod.uses_pod_level_resources:
        _add(requests, pod.pod_requests or {})
        found = _add(limits, pod.pod_limits or {})
        if not {CPU, MEMORY} <= found:
            guaranteed = False
    else:
        for container in pod.containers + pod.init_containers:
            _add(requests, container.requests)
            found = _add(limits, container.limits)
            if not {CPU, MEMORY} <= found:
                guaranteed = False
    if not requests and not limits:
        return BEST_EFFORT
    if guaranteed:
        for resource, value in requests.items():
            if limits.get(resource) != value:
                guaranteed = False
                break
    if guaranteed and len(requests) == len(limits):
        return GUARANTEED
    return BURSTABLE
