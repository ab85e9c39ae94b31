"""After a rejection: the nearest CPU count, or the topology manager scope, under which the kubelet model admits
the same pod on the same node; or why no setting does (its devices span more NUMA nodes than alignment allows).

Every candidate is run through kubegpu.kubelet.NodeState (kubernetes v1.35 admission), never guessed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from kubegpu.kubelet.config import KubeletConfig, KubeletStartupError
from kubegpu.kubelet.node_state import NodeState
from kubegpu.kubelet.pod import CPU, KIND_APP, ContainerRequest, PodRequest
from kubegpu.manifests.pod import GUARANTEED, exclusive_cpus_of_millis
from kubegpu.topology.model import NodeTopology

_MAX_STEPS = 16  # CPU counts tried each way from the requested one


def _admits(topology: NodeTopology, config: KubeletConfig, existing: Sequence[PodRequest], pod: PodRequest) -> bool:
    try:
        state = NodeState(topology, config)
    except KubeletStartupError:
        return False
    for other in existing:
        state.admit(other)
    return state.admit(pod).admitted


def _with_cpus(pod: PodRequest, index: int, cpus: int) -> PodRequest:
    container = pod.containers[index]
    millis = cpus * 1000
    changed = ContainerRequest(
        container.name,
        container.kind,
        {**container.requests, CPU: millis},
        {**container.limits, CPU: millis} if CPU in container.limits else container.limits,
    )
    containers = tuple(changed if i == index else c for i, c in enumerate(pod.containers))
    return replace(pod, containers=containers)


def remedy(topology: NodeTopology, config: KubeletConfig, existing: Sequence[PodRequest], pod: PodRequest) -> str:
    """One line: what change gets `pod` admitted on this node, computed by the admission model."""
    total = topology.num_cpus
    for index, container in enumerate(pod.containers):
        now = exclusive_cpus_of_millis(GUARANTEED, container.request(CPU))  # the CPUs it pins as a Guaranteed pod's
        if container.kind != KIND_APP or not now:
            continue
        for step in range(1, _MAX_STEPS + 1):
            for cpus in (now + step, now - step):
                if 1 <= cpus <= total and _admits(topology, config, existing, _with_cpus(pod, index, cpus)):
                    return (
                        f"remedy: the same pod is admitted with {cpus} CPUs in container '{container.name}' "
                        f"(instead of {now})"
                    )
    other = "pod" if config.topology_manager_scope == "container" else "container"
    if _admits(topology, replace(config, topology_manager_scope=other), existing, pod):
        return f"remedy: the same pod is admitted with topologyManagerScope: {other}"
    gpus = sum(c.request(res) for c in pod.containers for res in c.requests if res.endswith("/gpu"))
    per_numa: dict[int | None, int] = {}
    for gpu in topology.gpus:
        per_numa[gpu.numa_node] = per_numa.get(gpu.numa_node, 0) + 1
    most = max(per_numa.values(), default=0)
    if gpus > most > 0:
        spanned = -(-gpus // most)
        return (
            f"remedy: no setting admits it here: {gpus} GPUs span {spanned} NUMA nodes (at most {most} per "
            f"NUMA node), which {config.topology_manager_policy} topology alignment rejects"
        )
    if not existing:
        return "remedy: no CPU count within 16 of the request and neither topology manager scope admits it"
    return (
        "remedy: no CPU count within 16 of the request and neither topology manager scope admits it next to "
        "the pods already on the node"
    )
