"""Plans are replayed through the kubelet model where the snapshot holds a node's kubelet configuration: a node
whose kubelet would refuse the waiting pod (TopologyAffinityError) is searched around."""

from __future__ import annotations

from typing import Any

from kubegpu.defrag.plan import make_plan
from kubegpu.defrag.targets import target_for
from tests.defrag.objects import guide, pod, snapshot

SINGLE_NUMA = {
    "apiVersion": "kubelet.config.k8s.io/v1beta1",
    "kind": "KubeletConfiguration",
    "topologyManagerPolicy": "single-numa-node",
}
DEFAULTS = {"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration"}


def two_numa_nodes(name: str) -> dict[str, Any]:
    """NFD's NodeResourceTopology of a node with its 8 GPUs split over two NUMA nodes."""

    def zone(i: int) -> dict[str, Any]:
        return {
            "name": f"node-{i}",
            "type": "Node",
            "costs": [{"name": f"node-{j}", "value": 10 if i == j else 21} for j in range(2)],
            "resources": [
                {"name": "cpu", "capacity": "48", "allocatable": "48", "available": "48"},
                {"name": "memory", "capacity": "512Gi", "allocatable": "512Gi", "available": "512Gi"},
                {"name": "nvidia.com/gpu", "capacity": "4", "allocatable": "4", "available": "4"},
            ],
        }

    return {
        "apiVersion": "topology.node.k8s.io/v1alpha2",
        "kind": "NodeResourceTopology",
        "metadata": {"name": name},
        "zones": [zone(0), zone(1)],
    }


def test_a_node_whose_kubelet_refuses_the_pod_is_avoided() -> None:
    objects = guide()
    kept = [f"infer-{i}-{j}" for i in range(3, 7) for j in range(3)]
    objects = [
        pod(o["metadata"]["name"], 2, o["spec"]["nodeName"], priority=1000)
        if o["kind"] == "Pod" and o["metadata"]["name"] in kept
        else o
        for o in objects
    ]
    objects += [two_numa_nodes(f"gpu-{i}") for i in range(3)]
    configs = {f"gpu-{i}": SINGLE_NUMA for i in range(3)} | {"gpu-7": DEFAULTS}
    snap = snapshot(objects, kubelet_configs=configs)
    plan = make_plan(snap, target_for(snap, "ml/train-0"))
    assert plan.found and plan.placements == (("ml/train-0", "gpu-7"),)
    assert len(plan.evictions) == 3
    assert "gpu-7" in plan.kubelet_nodes
    refused = [n for n in plan.notes if "the kubelet refuses ml/train-0: TopologyAffinityError" in n]
    assert refused  # the first plan put it on a node of two NUMA nodes, whose kubelet refused it


def test_when_every_kubelet_refuses_there_is_no_plan_and_the_notes_say_why() -> None:
    objects = guide(4)
    objects += [two_numa_nodes(f"gpu-{i}") for i in range(4)]
    snap = snapshot(objects, kubelet_configs={f"gpu-{i}": SINGLE_NUMA for i in range(4)})
    plan = make_plan(snap, target_for(snap, "ml/train-0"))
    assert not plan.found and plan.possible and plan.evictions == ()
    assert any("refused by the replay" in n for n in plan.notes)
    assert sum("TopologyAffinityError" in n for n in plan.notes) >= 2
