"""The NRT-based NUMA check on small hand-made nodes: each case states the zone usage it implies."""

from __future__ import annotations

from typing import Any

from kubegpu.live.audit import numa_misplacement
from kubegpu.live.snapshot import build_snapshot


def _node() -> dict[str, Any]:
    return {
        "kind": "Node",
        "apiVersion": "v1",
        "metadata": {"name": "n"},
        "status": {"allocatable": {"cpu": "64", "memory": "512Gi", "nvidia.com/gpu": "4"}},
    }


def _pod(name: str, cpu: str, gpus: int, guaranteed: bool = True) -> dict[str, Any]:
    limits = {"cpu": cpu, "memory": "16Gi", "nvidia.com/gpu": str(gpus)}
    requests = dict(limits) if guaranteed else {**limits, "cpu": "1"}
    return {
        "kind": "Pod",
        "apiVersion": "v1",
        "metadata": {"name": name, "namespace": "ml"},
        "spec": {
            "nodeName": "n",
            "containers": [
                {
                    "name": "c",
                    "resources": {
                        "requests": requests,
                        "limits": limits if guaranteed else {"memory": "16Gi", "nvidia.com/gpu": str(gpus)},
                    },
                }
            ],
        },
        "status": {"phase": "Running"},
    }


def _nrt(zones: list[tuple[int, int]]) -> dict[str, Any]:
    """zones: (pinned CPUs used, GPUs used) per NUMA zone; 32 CPUs and 2 GPUs each."""
    return {
        "kind": "NodeResourceTopology",
        "apiVersion": "topology.node.k8s.io/v1alpha2",
        "metadata": {"name": "n"},
        "zones": [
            {
                "name": f"node-{i}",
                "type": "Node",
                "resources": [
                    {"name": "cpu", "capacity": "32", "allocatable": "32", "available": str(32 - cpus)},
                    {"name": "nvidia.com/gpu", "capacity": "2", "allocatable": "2", "available": str(2 - gpus)},
                ],
            }
            for i, (cpus, gpus) in enumerate(zones)
        ],
    }


def _findings(pods: list[dict[str, Any]], zones: list[tuple[int, int]]) -> list[tuple[str, ...]]:
    objects = [(o, "test") for o in [_node(), *pods, _nrt(zones)]]
    return [(f.zone, *f.pods) for f in numa_misplacement(build_snapshot(objects))]


def test_aligned_pod_is_not_reported() -> None:
    # one pod, 8 pinned CPUs and 1 GPU, both on node-0
    assert _findings([_pod("a", "8", 1)], [(8, 1), (0, 0)]) == []


def test_single_pod_gpu_off_its_cpus_is_named() -> None:
    # node-1 has its GPU and no pinned CPU; only pod a pins CPUs -> a is misplaced (rule a);
    # node-0 has its CPUs and no GPU (rule b) -> reported too
    assert _findings([_pod("a", "8", 1)], [(8, 0), (0, 1)]) == [("node-0", "ml/a"), ("node-1", "ml/a")]


def test_fractional_guaranteed_pod_can_explain_a_gpu_without_cpus() -> None:
    # b asks 500m (Guaranteed, no pinned CPUs): its GPU may be the one on node-1 -> not proven
    assert _findings([_pod("a", "8", 1), _pod("b", "500m", 1)], [(8, 1), (0, 1)]) == []
    # a holds 2 GPUs, b 1: node-0 has a's CPUs and 1 GPU, node-1 2 GPUs and no pinned CPU;
    # b can explain only one of them -> one of a's GPUs is on node-1: proven, a named
    assert _findings([_pod("a", "8", 2), _pod("b", "500m", 1)], [(8, 1), (0, 2)]) == [("node-1", "ml/a")]


def test_burstable_gpu_pods_are_invisible_to_nrt() -> None:
    # c is Burstable: NFD does not account its GPU, so usage reflects a alone
    assert _findings([_pod("a", "8", 1), _pod("c", "4", 1, guaranteed=False)], [(8, 0), (0, 1)]) == [
        ("node-0", "ml/a"),
        ("node-1", "ml/a"),
    ]


def test_two_candidates_are_listed() -> None:
    assert _findings([_pod("a", "8", 1), _pod("b", "4", 1)], [(12, 1), (0, 1)]) == [("node-1", "ml/a", "ml/b")]
