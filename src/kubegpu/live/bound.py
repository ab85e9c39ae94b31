"""How much GPU any repacking of a snapshot could allocate: the running pods moved to wherever they may run,
the pending GPU pods (and pending Kueue pod sets) placed wherever they fit, on the schedulable nodes.

A packing problem of kubegpu.packing: node classes are the schedulable nodes grouped by what they offer
(CPU, memory and pod slots left after the pods that cannot move, GPUs of their accelerator resource, and
which pod types they admit: nodeSelector, required node affinity, taints); task types are the pods grouped by
requests and constraints. Running pods must stay placed; the bound is the node-pattern LP's dual bound.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from kubegpu.live.fit import admits
from kubegpu.live.model import ClusterSnapshot, NodeInfo, PodInfo, PodShape
from kubegpu.live.parse import pod_shape
from kubegpu.manifests.accelerators import DEFAULT_REGISTRY, AcceleratorRegistry
from kubegpu.packing.classlp import ClassLP
from kubegpu.packing.colgen import ColumnGeneration
from kubegpu.packing.model import MILLI, NodeClass, PackingProblem, TaskType, fits

MIB = 1024 * 1024
MAX_ROUNDS = 60  # column generation rounds; stopped earlier, the bound is still sound, only less tight
PRICING_SECONDS = 2.0  # per pricing problem; a search stopped here answers its own upper bound
BUDGET_SECONDS = 20.0  # for the whole search: a large cluster gets a looser bound, never a wrong one
RELAXED = (
    "pod affinity and anti-affinity, topology spread constraints, host ports and volume limits are not "
    "modelled (leaving them out can only raise the bound)",
    "gangs may be placed in part (all-or-nothing admission is not required)",
    "GPUs are counted whole per node; NUMA and NVLink topology are not modelled",
)


@dataclass(frozen=True)
class RepackBound:
    """GPU allocation now and the most any repacking could reach (`bound`, GPUs) on the schedulable nodes;
    `lp` is what the patterns found reach (how close the bound is known to be)."""

    gpus: int
    allocated: int
    pending: int
    bound: float
    lp: float
    notes: tuple[str, ...] = RELAXED

    @property
    def placeable_pending(self) -> int:
        """At most this many of the pending GPUs could be placed by any repacking (whole GPUs)."""
        return max(0, min(self.pending, int(self.bound + 1e-6) - self.allocated))

    @property
    def most_allocated(self) -> int:
        """The most GPUs any repacking could hold allocated: now plus the placeable pending GPUs."""
        return self.allocated + self.placeable_pending

    def to_dict(self) -> dict[str, object]:
        return {
            "gpus": self.gpus,
            "allocated_gpus": self.allocated,
            "pending_gpus": self.pending,
            "placeable_pending_gpus": self.placeable_pending,
            "bound_allocated_gpus": self.most_allocated,
            "gap_gpus": self.most_allocated - self.allocated,
            "relaxed": list(self.notes),
        }


def pinned(pod: PodInfo) -> bool:
    """A pod that no repacking moves: a DaemonSet's pod, a static pod's mirror, or one whose required node
    affinity names a single node."""
    if pod.daemonset or pod.mirror:
        return True
    return any(
        any(r.field and r.key == "metadata.name" and r.operator == "In" and len(r.values) == 1 for r in term)
        for term in pod.node_affinity
    )


def _resource(node: NodeInfo, registry: AcceleratorRegistry) -> str:
    resources = node.accelerator_resources(registry)
    return resources[0] if resources else ""


def _shape(pod: PodInfo, registry: AcceleratorRegistry) -> PodShape:
    shape = pod_shape(pod, registry)
    if shape is not None:
        return shape
    return PodShape(
        gpu_resource="",
        gpus=0,
        cpu_millis=pod.requests.get("cpu", 0),
        memory_bytes=pod.requests.get("memory", 0),
        node_selector=tuple(sorted(pod.node_selector.items())),
        tolerations=pod.tolerations,
        node_affinity=pod.node_affinity,
    )


def _runs_on(node: NodeInfo, resource: str, shape: PodShape) -> bool:
    return admits(node, shape) and (shape.gpus == 0 or shape.gpu_resource == resource)


@dataclass(frozen=True)
class Fixed:
    """What the packing problem leaves out: GPUs held by pods that do not move, and the pending GPUs."""

    gpus: int
    allocated: int
    pending: int


def _node_room(
    snapshot: ClusterSnapshot, node: NodeInfo, registry: AcceleratorRegistry
) -> tuple[dict[str, int], list[PodShape]]:
    """What a node leaves to the pods that may move (CPU, memory, pod slots, and its GPUs as an offset to its
    allocatable), and those pods; a node running more than it offers keeps its pods and takes nothing."""
    room = {"cpu": node.allocatable.get("cpu", 0), "memory": node.allocatable.get("memory", 0)}
    room["pods"] = node.allocatable.get("pods", 110)
    resource = _resource(node, registry)
    kept: list[PodShape] = []
    for pod in snapshot.pods_on(node.name):
        shape = _shape(pod, registry)
        if pinned(pod) or not _runs_on(node, resource, shape):
            room["cpu"] -= pod.requests.get("cpu", 0)
            room["memory"] -= pod.requests.get("memory", 0)
            room["pods"] -= 1
            room[resource] = room.get(resource, 0) - (shape.gpus if shape.gpu_resource == resource else 0)
        else:
            kept.append(shape)
    gpus = node.allocatable.get(resource, 0) + room.get(resource, 0) if resource else 0
    over = (
        sum(k.cpu_millis for k in kept) > room["cpu"]
        or sum(k.memory_bytes for k in kept) > room["memory"]
        or len(kept) > room["pods"]
        or sum(k.gpus for k in kept) > gpus
    )
    if over:  # the node runs more than it offers: its pods stay as they are, and it takes nothing more
        return {"cpu": 0, "memory": 0, "pods": 0, resource: -node.allocatable.get(resource, 0)}, []
    return room, kept


def _pending_shapes(snapshot: ClusterSnapshot, registry: AcceleratorRegistry) -> list[PodShape]:
    """One shape per pending GPU pod, then one per pod of each pending Kueue workload's pod sets."""
    pending: list[PodShape] = [
        shape
        for pod in snapshot.pods
        if pod.pending and pod.accelerators(registry)
        for shape in [_shape(pod, registry)]
    ]
    for workload in snapshot.kueue_workloads:
        if workload.pending:
            for pod_set in workload.pod_sets:
                if pod_set.shape is not None:
                    pending.extend([pod_set.shape] * max(0, pod_set.count))
    return pending


def _count(shapes: Iterable[PodShape]) -> dict[PodShape, int]:
    """How many times each shape occurs, in the order first seen."""
    counts: dict[PodShape, int] = {}
    for shape in shapes:
        counts[shape] = counts.get(shape, 0) + 1
    return counts


def _task_types(
    shapes: Sequence[PodShape], running: Mapping[PodShape, int], pending: Mapping[PodShape, int]
) -> tuple[TaskType, ...]:
    """One task type per shape: its running pods must stay placed, its pending pods may be placed too."""
    return tuple(
        TaskType(
            s.describe(),
            s.cpu_millis,
            s.memory_bytes // MIB,
            s.gpus,
            MILLI if s.gpus else 0,
            running.get(s, 0) + pending.get(s, 0),
            running.get(s, 0),
        )
        for s in shapes
    )


_ClassKey = tuple[int, int, int, int, tuple[bool, ...]]  # CPU, memory, pod slots, GPUs, shapes admitted


def _group_nodes(
    nodes: Sequence[NodeInfo],
    left: Mapping[str, Mapping[str, int]],
    shapes: Sequence[PodShape],
    registry: AcceleratorRegistry,
) -> dict[_ClassKey, list[NodeInfo]]:
    """The nodes grouped into classes by what they offer the pods that may move: CPU, memory (MiB) and pod
    slots left, GPUs, and which shapes they admit."""
    groups: dict[_ClassKey, list[NodeInfo]] = {}
    for node in nodes:
        resource = _resource(node, registry)
        room = left[node.name]
        gpus = max(0, node.allocatable.get(resource, 0) + room.get(resource, 0)) if resource else 0
        key = (
            max(0, room["cpu"]),
            max(0, -(-room["memory"] // MIB)),
            max(0, room["pods"]),
            gpus,
            tuple(_runs_on(node, resource, s) for s in shapes),
        )
        groups.setdefault(key, []).append(node)
    return groups


def _classes(
    groups: Mapping[_ClassKey, list[NodeInfo]], movable: Mapping[str, list[PodShape]], shapes: Sequence[PodShape]
) -> tuple[list[NodeClass], list[tuple[bool, ...]], dict[int, list[tuple[int, ...]]]]:
    """The node classes, the shapes each admits, and each class's current patterns (one per node: how many
    pods of each shape it runs that may move)."""
    index = {s: i for i, s in enumerate(shapes)}
    classes: list[NodeClass] = []
    eligible: list[tuple[bool, ...]] = []
    patterns: dict[int, list[tuple[int, ...]]] = {}
    for c, ((cpu, mem, pods, gpus, admitted), members) in enumerate(groups.items()):
        classes.append(NodeClass(members[0].name, len(members), cpu, mem, pods, gpus))
        eligible.append(admitted)
        for node in members:
            counts = [0] * len(shapes)
            for shape in movable[node.name]:
                counts[index[shape]] += 1
            patterns.setdefault(c, []).append(tuple(counts))
    return classes, eligible, patterns


def repack_problem(
    snapshot: ClusterSnapshot, registry: AcceleratorRegistry = DEFAULT_REGISTRY
) -> tuple[PackingProblem, dict[int, list[tuple[int, ...]]], Fixed]:
    """The packing problem of a snapshot's schedulable nodes, each class's current patterns (one per node:
    the movable pods it runs), and the GPUs the problem leaves out (held by pods that do not move)."""
    nodes = [n for n in snapshot.nodes if n.schedulable]
    left: dict[str, dict[str, int]] = {}
    movable: dict[str, list[PodShape]] = {}
    for node in nodes:
        left[node.name], movable[node.name] = _node_room(snapshot, node, registry)
    pending = _pending_shapes(snapshot, registry)
    running_count = _count(shape for kept in movable.values() for shape in kept)
    pending_count = _count(pending)
    shapes = list(dict.fromkeys([*running_count, *pending_count]))
    types = _task_types(shapes, running_count, pending_count)
    groups = _group_nodes(nodes, left, shapes, registry)
    classes, eligible, patterns = _classes(groups, movable, shapes)
    held = sum(max(0, -left[n.name].get(_resource(n, registry), 0)) for n in nodes if _resource(n, registry))
    fixed = Fixed(held, held, sum(s.gpus for s in pending))
    return PackingProblem(tuple(classes), types, tuple(eligible)), patterns, fixed


def repack_bound(snapshot: ClusterSnapshot, registry: AcceleratorRegistry = DEFAULT_REGISTRY) -> RepackBound:
    """The most GPUs any repacking of the snapshot's pods on its schedulable nodes could hold allocated."""
    problem, current, fixed = repack_problem(snapshot, registry)
    total = fixed.gpus + sum(c.count * c.gpus for c in problem.classes)
    allocated = fixed.allocated + sum(t.required * t.gpu_count for t in problem.types)
    if not problem.types or not any(c.gpus for c in problem.classes):
        return RepackBound(total, allocated, fixed.pending, float(allocated), float(allocated))
    lower = np.array([t.required for t in problem.types], dtype=np.int64)
    upper = np.array([t.available for t in problem.types], dtype=np.int64)
    loose = ClassLP(problem).solve(lower, upper)
    search = ColumnGeneration(problem, time_limit=PRICING_SECONDS)
    for c, patterns in current.items():
        for counts in patterns:
            if any(counts) and fits(problem.classes[c], problem.types, counts):
                search.add_pattern(c, counts)
    search.add_point(loose.prices)
    tight = search.solve(lower, upper, tolerance=0.5 * MILLI, max_rounds=MAX_ROUNDS, budget=BUDGET_SECONDS)
    value = min(loose.value, tight.value) / MILLI
    return RepackBound(total, allocated, fixed.pending, fixed.allocated + value, fixed.allocated + tight.primal / MILLI)
