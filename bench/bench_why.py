"""`audit --why` benchmark: a 1,000-node GPU cluster (8 GPUs per node, most of them busy, 4 racks of 250 nodes, a tenth
of the nodes tainted) with 500 pending pods of 1 to 8 GPUs (half of them with a rack nodeSelector) and 20 pending
Kueue gangs of 4 x 8 GPUs, explained end to end from API objects, timed against a 10-second goal.
"""

from __future__ import annotations

import random
import sys
import time
from typing import Any

from kubegpu.live.snapshot import build_snapshot
from kubegpu.live.why import explain_snapshot

NODES = 1_000
PENDING = 500
GANGS = 20
GOAL_SECONDS = 10.0
RACK = "cloud.provider.com/topology-rack"


def _node(i: int, rng: random.Random) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if rng.random() < 0.1:
        spec["taints"] = [{"key": "dedicated", "value": "infer", "effect": "NoSchedule"}]
    amounts = {"cpu": "128", "memory": "1Ti", "nvidia.com/gpu": "8", "pods": "110"}
    labels = {"kubernetes.io/hostname": f"n{i}", RACK: f"r{i % 4}", "nvidia.com/gpu.product": "NVIDIA-H100"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": f"n{i}", "labels": labels},
        "spec": spec,
        "status": {"capacity": amounts, "allocatable": amounts, "conditions": [{"type": "Ready", "status": "True"}]},
    }


def _pod(name: str, gpus: int, node: str | None, selector: dict[str, str] | None = None) -> dict[str, Any]:
    requests = {"cpu": str(2 * gpus), "memory": f"{16 * gpus}Gi", "nvidia.com/gpu": str(gpus)}
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "i", "resources": {"requests": requests}}]}
    if node:
        spec["nodeName"] = node
    if selector:
        spec["nodeSelector"] = selector
    phase = "Running" if node else "Pending"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "w"},
        "spec": spec,
        "status": {"phase": phase},
    }


def _workload(i: int) -> dict[str, Any]:
    requests = {"cpu": "16", "memory": "128Gi", "nvidia.com/gpu": "8"}
    template = {"spec": {"containers": [{"name": "c", "image": "i", "resources": {"requests": requests}}]}}
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {"name": f"gang-{i}", "namespace": "w"},
        "spec": {
            "queueName": "q",
            "podSets": [{"name": "main", "count": 4, "template": template, "topologyRequest": {"required": RACK}}],
        },
        "status": {},
    }


def main() -> int:
    rng = random.Random(7)
    objects: list[Any] = [(_node(i, rng), "bench") for i in range(NODES)]
    for i in range(NODES):
        used = rng.choice((4, 6, 6, 7, 7, 8, 8, 8, 8))
        if used:
            objects.append((_pod(f"run-{i}", used, f"n{i}"), "bench"))
    for i in range(PENDING):
        selector = {RACK: f"r{i % 4}"} if i % 2 else None
        objects.append((_pod(f"wait-{i}", rng.choice((1, 2, 4, 8)), None, selector), "bench"))
    objects += [(_workload(i), "bench") for i in range(GANGS)]
    topology = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Topology",
        "metadata": {"name": "t"},
        "spec": {"levels": [{"nodeLabel": RACK}, {"nodeLabel": "kubernetes.io/hostname"}]},
    }
    objects.append((topology, "bench"))
    snapshot = build_snapshot(objects, source="bench")
    start, cpu = time.perf_counter(), time.process_time()
    report = explain_snapshot(snapshot)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    kinds: dict[str, int] = {}
    for e in report.explanations:
        for cause in e.causes:
            kinds[cause.kind] = kinds.get(cause.kind, 0) + 1
    print(
        f"audit --why: {len(report.explanations)} waiting pods and gangs on {NODES} nodes in {seconds:.2f} s "
        f"(cpu {cpu:.2f} s); goal {GOAL_SECONDS:.0f} s, ratio {GOAL_SECONDS / seconds:.1f}x"
    )
    print(f"causes: {dict(sorted(kinds.items()))}")
    return 0 if seconds < GOAL_SECONDS else 1


if __name__ == "__main__":
    sys.exit(main())
