"""Kubelet admission model: Topology, CPU, memory and device managers deciding pod admission.

Follows kubernetes v1.35 pkg/kubelet/cm; see docs/dev/kubelet-api.md for the public API.
"""

from kubegpu.kubelet.admission import Admission, ContainerAssignment, ProviderAnswer, TraceStep
from kubegpu.kubelet.bitmask import NUMAMask
from kubegpu.kubelet.config import KubeletConfig, KubeletStartupError
from kubegpu.kubelet.hints import TopologyHint
from kubegpu.kubelet.node_state import NodeState
from kubegpu.kubelet.pod import ContainerRequest, PodRequest, document_pods
from kubegpu.kubelet.qos import BEST_EFFORT, BURSTABLE, GUARANTEED, qos_class
from kubegpu.kubelet.startup import check_startup

__all__ = [
    "BEST_EFFORT",
    "BURSTABLE",
    "GUARANTEED",
    "Admission",
    "ContainerAssignment",
    "ContainerRequest",
    "KubeletConfig",
    "KubeletStartupError",
    "NUMAMask",
    "NodeState",
    "PodRequest",
    "ProviderAnswer",
    "TopologyHint",
    "TraceStep",
    "check_startup",
    "document_pods",
    "qos_class",
]
