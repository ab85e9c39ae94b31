"""The cluster as a plan leaves it: evicted pods on their new nodes (or waiting again), the waiting pods running
where the plan puts them; what `defrag --plot` draws after the plan."""

from __future__ import annotations

from dataclasses import replace

from kubegpu.defrag.plan import Plan
from kubegpu.live.model import ClusterSnapshot, PodInfo


def applied(snapshot: ClusterSnapshot, plan: Plan) -> ClusterSnapshot:
    """`snapshot` with the plan carried out (the snapshot itself when no plan was found)."""
    if not plan.found:
        return snapshot
    moved = {e.pod: e.to for e in plan.evictions}
    placed = dict(plan.placements)
    pods: list[PodInfo] = []
    for pod in snapshot.pods:
        if pod.key in placed:
            continue  # a waiting pod of the target: added below where the plan puts it
        if pod.key in moved:
            to = moved[pod.key]
            pod = replace(pod, node_name=to, phase="Running" if to else "Pending")
        pods.append(pod)
    for target in plan.target.pods:
        namespace, slash, name = target.name.partition("/")
        if not slash:
            namespace, name = "default", target.name
        pods.append(
            PodInfo(
                namespace=namespace,
                name=name,
                phase="Running",
                node_name=placed.get(target.name),
                requests=dict(target.requests),
            )
        )
    return replace(snapshot, pods=tuple(pods))


def arriving_gpus(plan: Plan) -> dict[str, int]:
    """GPUs the waiting pods take on each node under the plan."""
    gpus = {t.name: t.gpus for t in plan.target.pods}
    out: dict[str, int] = {}
    for pod, node in plan.placements:
        out[node] = out.get(node, 0) + gpus.get(pod, 0)
    return out
