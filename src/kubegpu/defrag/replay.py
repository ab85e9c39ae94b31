"""Replay a plan through the models before it is shown: the scheduler model's NodeResourcesFit filter (CPU,
memory, pod slots, whole GPUs and their model, kubegpu.scheduler.gpu) and its taints, selectors and node affinity
(kubegpu.live.fit), then, on every node whose kubelet configuration the snapshot holds, the kubelet's admission
(kubegpu.kubelet: Topology, CPU and Memory Managers) of the pods that stay and those that arrive.

The evicted pods leave first, then the waiting pods are placed, then the evicted ones again; a placement either
model refuses is returned so that the search can exclude it and try again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kubegpu.defrag.ilp import Solution
from kubegpu.defrag.problem import Instance
from kubegpu.errors import KubegpuError
from kubegpu.kubelet.config import KubeletConfig
from kubegpu.kubelet.node_state import NodeState
from kubegpu.kubelet.pod import PodRequest
from kubegpu.live.fit import GPU_PRODUCT_LABEL, admits
from kubegpu.live.hardware import node_hardware
from kubegpu.live.model import PodShape
from kubegpu.live.simstart import simulation_start
from kubegpu.manifests.pod import Pod as PodModel
from kubegpu.scheduler.gpu.filters import first_rejection
from kubegpu.scheduler.gpu.state import MILLI, GpuCluster, GpuPod


@dataclass(frozen=True)
class Refusal:
    """A placement a model refused: a waiting pod (`target`: index in Target.pods) or an evicted candidate."""

    node: int
    why: str
    target: int | None = None
    candidate: int | None = None


@dataclass(frozen=True)
class Replay:
    """What the replay found: the refusals (none: the plan holds), and what it could not check."""

    refusals: tuple[Refusal, ...]
    kubelet_nodes: tuple[str, ...]  # nodes whose kubelet admitted every pod of the plan
    notes: tuple[str, ...]


@dataclass(frozen=True)
class _Arrival:
    name: str
    shape: PodShape
    requests: Mapping[str, int]
    spec: PodModel | None
    node: int
    target: int | None = None
    candidate: int | None = None


def _gpu_pod(arrival: _Arrival) -> GpuPod:
    shape = arrival.shape
    gpus = shape.gpus if shape.gpu_resource else 0
    return GpuPod(
        name=arrival.name,
        cpu_milli=arrival.requests.get("cpu", 0),
        memory_bytes=arrival.requests.get("memory", 0),
        gpu_count=gpus,
        gpu_milli=MILLI if gpus else 0,
        gpu_models=shape.gpu_models(GPU_PRODUCT_LABEL),
    )


def _cluster(instance: Instance, evicted: set[str]) -> tuple[GpuCluster, list[str]]:
    """The scheduler model's cluster with every pod that stays bound (a node whose pods ask for more than it
    offers keeps what fits: no pod is placed there)."""
    start = simulation_start(instance.snapshot)
    cluster = GpuCluster(start.nodes)
    notes: list[str] = []
    next_free: dict[int, int] = {}
    for placement in start.placed:
        if placement.pod.name in evicted:
            continue
        node = placement.node
        first = next_free.get(node, 0)
        gpus = tuple(range(first, first + placement.pod.gpu_count)) if placement.pod.is_gpu else ()
        try:
            cluster.bind(node, placement.pod, gpus)
        except KubegpuError:
            notes.append(f"{cluster.names[node]}: the pods bound there ask for more than it offers")
            continue
        next_free[node] = first + len(gpus)
    return cluster, notes


def _free_gpus(cluster: GpuCluster, node: int, count: int) -> list[int]:
    whole = [g for g in range(int(cluster.gpu_count[node])) if cluster.gpu_left[node, g] == MILLI]
    return whole[:count]


def _schedule(instance: Instance, cluster: GpuCluster, arrivals: Sequence[_Arrival]) -> list[Refusal]:
    """Bind each arrival where the plan puts it, if the scheduler model's filters let it."""
    refusals: list[Refusal] = []
    for arrival in arrivals:
        node = arrival.node
        info = instance.nodes[node]
        pod = _gpu_pod(arrival)
        if not admits(info, arrival.shape):
            why = "its taints, labels or node affinity exclude the pod"
        elif (status := first_rejection(cluster, pod, node)).rejected:
            why = f"{status.plugin}: {status.message}"
        else:
            cluster.bind(node, pod, _free_gpus(cluster, node, pod.gpu_count) if pod.is_gpu else ())
            continue
        refusals.append(Refusal(node, f"{info.name}: {why} ({arrival.name})", arrival.target, arrival.candidate))
    return refusals


def _request(name: str, spec: PodModel) -> PodRequest:
    namespace, _, _ = name.partition("/")
    return PodRequest.from_model(name, spec, namespace=namespace or "default")


def _kubelet(
    instance: Instance, node: int, staying: Sequence[tuple[str, PodModel | None]], arriving: Sequence[_Arrival]
) -> tuple[list[Refusal], str | None]:
    """The node's kubelet admits the pods that stay, then those that arrive; a note when it cannot tell."""
    info = instance.nodes[node]
    raw = instance.snapshot.kubelet_configs.get(info.name)
    if raw is None:
        return [], None
    hardware = node_hardware(instance.snapshot, info)
    if hardware is None:
        return [], f"{info.name}: its capacity is beyond the kubelet model; its kubelet was not asked"
    try:
        state = NodeState(
            hardware.topology, KubeletConfig.from_dict(raw, source=f"kubelet configuration of {info.name}")
        )
        for name, spec in staying:
            if spec is None:
                continue
            answer = state.admit(_request(name, spec))
            if not answer.admitted:
                return [], (
                    f"{info.name}: the kubelet model would refuse {name}, which runs there ({answer.reason}); "
                    "its kubelet was not asked"
                )
        refusals: list[Refusal] = []
        for arrival in arriving:
            if arrival.spec is None:
                continue
            answer = state.admit(_request(arrival.name, arrival.spec))
            if not answer.admitted:
                why = f"{info.name}: the kubelet refuses {arrival.name}: {answer.reason} ({answer.message})"
                refusals.append(Refusal(node, why, arrival.target, arrival.candidate))
    except KubegpuError as err:
        return [], f"{info.name}: its kubelet configuration cannot be modelled ({err}); its kubelet was not asked"
    return refusals, None


def replay(instance: Instance, solution: Solution) -> Replay:
    """Check the plan through the scheduler model, then the kubelet model where a configuration is known."""
    candidates = instance.candidates
    evicted = {candidates[c].pod.key for c in solution.evicted}
    cluster, notes = _cluster(instance, evicted)
    arrivals: list[_Arrival] = []
    for index, node in solution.placements:
        waiting = instance.target.pods[index]
        arrivals.append(_Arrival(waiting.name, waiting.shape, waiting.requests, waiting.spec, node, target=index))
    for c, node in solution.moves:
        pod = candidates[c].pod
        arrivals.append(_Arrival(pod.key, candidates[c].shape, pod.requests, pod.spec, node, candidate=c))
    refusals = _schedule(instance, cluster, arrivals)
    checked: list[str] = []
    if not refusals and instance.snapshot.kubelet_configs:
        by_node: dict[int, list[_Arrival]] = {}
        for arrival in arrivals:
            by_node.setdefault(arrival.node, []).append(arrival)
        for node, arriving in sorted(by_node.items()):
            name = instance.nodes[node].name
            staying = [(p.key, p.spec) for p in instance.snapshot.pods_on(name) if p.key not in evicted]
            found, note = _kubelet(instance, node, staying, arriving)
            refusals += found
            if note:
                notes.append(note)
            elif name in instance.snapshot.kubelet_configs and not found:
                checked.append(name)
    return Replay(tuple(refusals), tuple(checked), tuple(notes))
