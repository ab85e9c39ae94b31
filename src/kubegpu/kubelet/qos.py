"""Pod QoS class (Guaranteed, Burstable, BestEffort) as the kubelet's resource managers use it.

The class is the one pod model's (`kubegpu.manifests.pod.qos_class`, kubernetes v1.35 ComputePodQOS);
`pod_level_resources` is the kubelet's PodLevelResources feature gate (on by default since 1.34).
"""

from __future__ import annotations

import kubegpu.manifests.pod as podmodel
from kubegpu.kubelet.pod import PodRequest
from kubegpu.manifests.pod import BEST_EFFORT, BURSTABLE, GUARANTEED

__all__ = ["BEST_EFFORT", "BURSTABLE", "GUARANTEED", "qos_class"]


def qos_class(pod: PodRequest, pod_level_resources: bool = True) -> str:
    """The pod's QoS class under the given PodLevelResources gate."""
    return podmodel.qos_class(pod.model, pod_level_resources)
