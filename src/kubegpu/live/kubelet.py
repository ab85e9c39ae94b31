"""Each node's kubelet, modelled from what a snapshot holds of it: its configuration (the kubelet's /configz) and
its NUMA zones (the NodeResourceTopology NFD's topology-updater publishes), so `audit --why` can say that every
node with room would refuse a pod at admission (TopologyAffinityError, SMTAlignmentError).

A NodeResourceTopology gives each NUMA zone's CPUs, memory and devices, not which CPUs are hyperthread siblings:
two threads per core are assumed where NFD labels the node with hardware multithreading, one otherwise, and each
zone is taken for a socket. The pods already on the node are admitted first, in the order the snapshot lists them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubegpu.errors import KubegpuError
from kubegpu.kubelet import KubeletConfig, NodeState, PodRequest
from kubegpu.live.hardware import MAX_CPUS, MAX_GPUS, MAX_NUMA_ID, nrt_topology
from kubegpu.live.model import ClusterSnapshot
from kubegpu.live.simstart import pod_set_pod_name
from kubegpu.scheduler.gpu.state import GpuCluster, GpuPod
from kubegpu.scheduler.gpu.why import KubeletCheck


def _request(name: str, namespace: str, spec: object) -> PodRequest | None:
    if not isinstance(spec, Mapping) or not spec:
        return None
    try:
        return PodRequest.from_pod_spec(name, spec, namespace=namespace)
    except KubegpuError:
        return None


def pending_requests(snapshot: ClusterSnapshot) -> dict[str, PodRequest]:
    """What the kubelet would be asked to admit for each pending pod and each pod of a pending Kueue workload, by the
    name the scheduler model gives that pod (kubegpu.live.simstart)."""
    requests = {
        p.key: r for p in snapshot.pods if p.pending for r in [_request(p.name, p.namespace, p.raw.get("spec"))] if r
    }
    for workload in snapshot.kueue_workloads:
        if not workload.pending:
            continue
        for pod_set in workload.pod_sets:
            request = _request(f"{workload.name}-{pod_set.name}", workload.namespace, pod_set.template_spec)
            if request is not None:
                requests.update({pod_set_pod_name(workload, pod_set, i): request for i in range(pod_set.count)})
    return requests


def node_states(snapshot: ClusterSnapshot, notes: list[str]) -> dict[str, NodeState]:
    """A kubelet model for each node with both a configz answer and a NodeResourceTopology, its pods admitted."""
    states: dict[str, NodeState] = {}
    for node in snapshot.nodes:
        raw: Mapping[str, Any] | None = snapshot.kubelet_configs.get(node.name)
        nrt = snapshot.nrt(node.name)
        if raw is None or nrt is None:
            continue
        topology = nrt_topology(node, nrt)
        if topology is None:
            notes.append(
                f"node {node.name}: its NodeResourceTopology gives no NUMA zones the kubelet model can build "
                f"(zones named node-N, N up to {MAX_NUMA_ID}, with CPUs; at most {MAX_CPUS} CPUs and {MAX_GPUS} GPUs)"
            )
            continue
        try:
            state = NodeState(topology, KubeletConfig.from_dict(raw, source=f"configz of {node.name}"))
        except KubegpuError as err:
            notes.append(f"node {node.name}: the kubelet model cannot start with its configuration: {err}")
            continue
        for pod in snapshot.pods_on(node.name):
            request = _request(pod.name, pod.namespace, pod.raw.get("spec"))
            if request is not None:
                state.admit(request)
        states[node.name] = state
    return states


def kubelet_check(snapshot: ClusterSnapshot, cluster: GpuCluster, notes: list[str]) -> KubeletCheck | None:
    """The kubelet verdict on a pending pod at a node, for `explain` (None when no node can be modelled)."""
    states = node_states(snapshot, notes)
    if not states:
        if snapshot.kubelet_configs or snapshot.node_topologies:
            notes.append(
                "kubelet admission not checked: it needs a node's configz and its NodeResourceTopology together"
            )
        return None
    requests = pending_requests(snapshot)

    def check(node: int, pod: GpuPod) -> tuple[str, str] | None:
        state = states.get(cluster.names[node])
        request = requests.get(pod.name)
        if state is None or request is None:
            return None
        admission = state.copy().admit(request)
        return None if admission.admitted else (admission.reason, admission.message)

    return check
