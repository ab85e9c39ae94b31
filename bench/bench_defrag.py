"""defrag benchmark: plan time on a generated 1,000-node snapshot (8 GPUs per node, 32 nodes per rack), filled
at random with 1-, 2- and 4-GPU pods of Deployments (a quarter under PodDisruptionBudgets), pod groups of
training jobs above the waiting pods' priority, CPU-only pods and a DaemonSet pod per node, leaving about a
sixth of the GPUs free and scattered. For a waiting 8-GPU pod and gangs of 4 and 16 such pods: the evictions,
the lower bound, the gap, and the seconds against the 10-second goal.

KUBEGPU_BENCH_NODES=200 runs a smaller cluster.
"""

from __future__ import annotations

import os
import random
import sys
import time
from typing import Any

from kubegpu.defrag.plan import make_plan
from kubegpu.defrag.targets import GangRequest, gang_target, target_for
from kubegpu.live.model import ClusterSnapshot
from kubegpu.live.snapshot import build_snapshot

GOAL_SECONDS = 10.0
TIME_LIMIT = 8.0
SEED = 7
GPUS = 8
VOLCANO = "scheduling.k8s.io/group-name"


def _pod(name: str, node: str | None, gpus: int, cpu: int, app: str, owner: str, **extra: Any) -> dict[str, Any]:
    requests = {"cpu": str(cpu), "memory": f"{cpu * 8}Gi"}
    if gpus:
        requests["nvidia.com/gpu"] = str(gpus)
    spec: dict[str, Any] = {
        "containers": [
            {
                "name": "main",
                "image": "registry.example/app:1",
                "resources": {"requests": requests, "limits": dict(requests)},
            }
        ]
    }
    if node:
        spec["nodeName"] = node
    if "priority" in extra:
        spec["priority"] = extra["priority"]
    metadata: dict[str, Any] = {
        "name": name,
        "namespace": "prod",
        "uid": f"uid-{name}",
        "labels": {"app": app},
        "ownerReferences": [{"apiVersion": "apps/v1", "kind": owner, "name": app, "uid": app, "controller": True}],
    }
    if "group" in extra:
        metadata["annotations"] = {VOLCANO: extra["group"]}
    status: dict[str, Any] = {"phase": "Running" if node else "Pending"}
    if node:
        status["conditions"] = [{"type": "Ready", "status": "True"}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec, "status": status}


def cluster(count: int) -> ClusterSnapshot:
    rng = random.Random(SEED)
    objects: list[dict[str, Any]] = []
    free = {}
    for i in range(count):
        name = f"node-{i:04d}"
        resources = {"cpu": "128", "memory": "2048Gi", "pods": "110", "nvidia.com/gpu": str(GPUS)}
        objects.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {
                    "name": name,
                    "labels": {
                        "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
                        "cloud.provider.com/topology-rack": f"rack-{i // 32:02d}",
                    },
                },
                "status": {
                    "allocatable": resources,
                    "capacity": resources,
                    "conditions": [{"type": "Ready", "status": "True"}],
                },
            }
        )
        objects.append(_pod(f"dcgm-exporter-{i}", name, 0, 1, "dcgm-exporter", "DaemonSet"))
        free[name] = [GPUS, 127]
    names = list(free)
    deployments = [f"svc-{k}" for k in range(count // 4)]
    serial = 0
    # training jobs: pod groups of 2-4 whole-node pods, above the waiting pods' priority
    for job in range(count // 20):
        size = rng.randint(2, 4)
        nodes = [n for n in rng.sample(names, size) if free[n][0] == GPUS]
        for n in nodes:
            objects.append(
                _pod(f"train-{job}-{n}", n, GPUS, 32, f"train-{job}", "Job", group=f"train-{job}", priority=1000)
            )
            free[n][0] -= GPUS
            free[n][1] -= 32
    for n in names:  # each node keeps 0 to 3 GPUs free: about a sixth of them, scattered
        keep = rng.choice((0, 1, 1, 2, 2, 3))
        while free[n][0] > keep:
            gpus = rng.choice([g for g in (1, 1, 2, 2, 4) if g <= free[n][0] - keep] or [1])
            serial += 1
            app = rng.choice(deployments)
            objects.append(_pod(f"{app}-{serial}", n, gpus, 4 * gpus, app, "ReplicaSet"))
            free[n][0] -= gpus
            free[n][1] -= 4 * gpus
            if rng.random() < 0.05:
                serial += 1
                objects.append(_pod(f"cpu-{serial}", n, 0, 2, "web", "ReplicaSet"))
    for k, app in enumerate(deployments):
        if k % 4 == 0:
            objects.append(
                {
                    "apiVersion": "policy/v1",
                    "kind": "PodDisruptionBudget",
                    "metadata": {"name": app, "namespace": "prod", "generation": 1},
                    "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app": app}}},
                }
            )
    objects.append(_pod("waiting-0", None, GPUS, 32, "waiting", "Job"))
    listed = ("PodDisruptionBudget", "PriorityClass", "PersistentVolumeClaim", "PersistentVolume")
    return build_snapshot(((o, "<bench>") for o in objects), listed=listed)


def main() -> int:
    count = int(os.environ.get("KUBEGPU_BENCH_NODES", "1000"))
    start = time.perf_counter()
    snap = cluster(count)
    print(
        f"{count} nodes, {len(snap.pods)} pods, {len(snap.disruption_budgets)} budgets "
        f"(generated in {time.perf_counter() - start:.1f} s); goal {GOAL_SECONDS:.0f} s per plan"
    )
    print(f"{'waiting':<22} {'evictions':>9} {'bound':>6} {'gap':>4} {'method':<16} {'seconds':>8}")
    worst = 0.0
    for label, make in (
        ("pod prod/waiting-0", lambda: target_for(snap, "prod/waiting-0")),
        ("gang 4x8", lambda: gang_target(snap, GangRequest(4, 8))),
        ("gang 16x8", lambda: gang_target(snap, GangRequest(16, 8))),
    ):
        began = time.perf_counter()
        plan = make_plan(snap, make(), TIME_LIMIT)
        seconds = time.perf_counter() - began
        worst = max(worst, seconds)
        evictions = len(plan.evictions) if plan.found else "none"
        gap = plan.gap if plan.gap is not None else "-"
        print(
            f"{label:<22} {evictions!s:>9} {plan.lower_bound!s:>6} {gap!s:>4} {plan.method:<16} {seconds:>8.2f}",
            flush=True,
        )
    print(
        f"slowest plan {worst:.2f} s: {'met' if worst <= GOAL_SECONDS else 'missed'} "
        f"(ratio {GOAL_SECONDS / worst:.2f}x)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
