"""Helpers for scenario tests: pods and kubelet configs written the way users write them."""

from __future__ import annotations

from typing import Any

from kubegpu.kubelet import KubeletConfig, NodeState, PodRequest
from kubegpu.topology.presets import load_node

# Whole cores 0,1 (threads 0,1,112,113 on the DGX H100 numbering) reserved for the system.
DGX_RESERVED = "0-1,112-113"


def config(**fields: Any) -> KubeletConfig:
    base: dict[str, Any] = {
        "cpuManagerPolicy": "static",
        "memoryManagerPolicy": "Static",
        "topologyManagerPolicy": "restricted",
        "topologyManagerScope": "pod",
        "reservedSystemCPUs": DGX_RESERVED,
        "kubeReserved": {"memory": "2Gi"},
        "systemReserved": {"memory": "2Gi"},
        # 2Gi + 2Gi + 100Mi (default evictionHard) = 4196Mi, split over both NUMA nodes.
        "reservedMemory": [
            {"numaNode": 0, "limits": {"memory": "2098Mi"}},
            {"numaNode": 1, "limits": {"memory": "2098Mi"}},
        ],
    }
    base.update(fields)
    return KubeletConfig.from_dict(base, source="scenario")


def state(preset: str = "dgx-h100", **fields: Any) -> NodeState:
    return NodeState(load_node(preset), config(**fields))


def pod(
    name: str,
    cpu: str,
    memory: str = "64Gi",
    gpus: int = 0,
    requests: dict[str, str] | None = None,
    resource: str = "nvidia.com/gpu",
) -> PodRequest:
    limits: dict[str, Any] = {"cpu": cpu, "memory": memory}
    if gpus:
        limits[resource] = gpus
    resources: dict[str, Any] = {"limits": limits}
    if requests:
        resources["requests"] = requests
    return PodRequest.from_pod_spec(name, {"containers": [{"name": "main", "resources": resources}]}, source="scenario")
