"""The defrag instance of a snapshot: the schedulable nodes' room, the pods that may be evicted (grouped into
units that move together, and into kinds that may run on the same nodes), the waiting pods, and why every
other pod stays where it runs.

Room is counted as kube-scheduler's NodeResourcesFit counts it (allocatable minus the requests of the pods
bound to the node, one pod slot each); where a pod may run, as its nodeSelector, required node affinity,
tolerations (NoSchedule, NoExecute) and its volumes' node affinity allow.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from kubegpu.defrag.budgets import Allowance, allowance, verdict
from kubegpu.defrag.drain import drain_blocker
from kubegpu.defrag.gangs import group_name, pod_group
from kubegpu.defrag.priority import pod_priority
from kubegpu.defrag.targets import Target
from kubegpu.live.fit import admits
from kubegpu.live.model import (
    ClusterSnapshot,
    DisruptionBudget,
    NodeAffinity,
    NodeInfo,
    PodInfo,
    PodShape,
    SelectorRequirement,
)
from kubegpu.live.parse import shape_of
from kubegpu.manifests.accelerators import DEFAULT_REGISTRY, AcceleratorRegistry

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
PODS = "pods"
DEFAULT_MAX_PODS = 110  # the kubelet's maxPods default, for a node whose allocatable does not say


@dataclass(frozen=True)
class Kind:
    """Pods that are interchangeable for placement: the same requests, the same nodes they may run on, and
    whether they may be left unplaced (`lossable`: priority below the waiting pods')."""

    requests: IntArray
    eligible: BoolArray
    lossable: bool
    gpus: int


@dataclass(frozen=True)
class Candidate:
    """A pod that may be evicted: its node, kind and unit (its pod group, or itself), the budget its eviction
    draws on (empty: none), and its priority."""

    pod: PodInfo
    node: int
    kind: int
    unit: int
    budget: str
    priority: int
    shape: PodShape


@dataclass(frozen=True)
class Unit:
    """Candidates evicted together or not at all (a pod group's pods, or one pod); `group` names the group."""

    members: tuple[int, ...]
    group: str | None


@dataclass(frozen=True)
class TargetKind:
    """Waiting pods with the same requests and the same nodes they may run on."""

    requests: IntArray
    eligible: BoolArray
    pods: tuple[int, ...]  # indices into Target.pods


@dataclass(frozen=True)
class Kept:
    """A pod that stays where it runs: the kind of reason (what the summary counts) and the detail."""

    pod: str
    node: str
    kind: str
    detail: str = ""

    @property
    def reason(self) -> str:
        return f"{self.kind} ({self.detail})" if self.detail else self.kind


HIGHER_PRIORITY = "priority above the waiting pods'"
POD_RULES = "placement depends on other pods (not modelled)"
VOLUMES_UNKNOWN = "where its volumes can be mounted is unknown"
BUDGET = "refused by the eviction API (PodDisruptionBudget)"
GROUP = "its pod group has a pod that cannot move"


@dataclass(frozen=True)
class Instance:
    """Everything the solver and the replay read; arrays are indexed [node, resource]."""

    snapshot: ClusterSnapshot
    target: Target
    nodes: tuple[NodeInfo, ...]
    resources: tuple[str, ...]
    alloc: IntArray
    used: IntArray
    receivable: BoolArray  # nodes that may take pods (not already over their allocatable)
    candidates: tuple[Candidate, ...]
    kinds: tuple[Kind, ...]
    units: tuple[Unit, ...]
    target_kinds: tuple[TargetKind, ...]
    allowances: dict[str, Allowance]
    kept: tuple[Kept, ...]
    notes: tuple[str, ...] = field(default=())

    @property
    def free(self) -> IntArray:
        out: IntArray = self.alloc - self.used
        return out

    def node_index(self) -> dict[str, int]:
        return {n.name: i for i, n in enumerate(self.nodes)}


def _and(a: NodeAffinity, b: NodeAffinity) -> NodeAffinity:
    """Both node affinities at once: every pair of terms joined (an empty affinity allows every node)."""
    if not a:
        return b
    if not b:
        return a
    return tuple(ta + tb for ta in a for tb in b)


def _volume_affinity(pod: PodInfo, snapshot: ClusterSnapshot) -> tuple[NodeAffinity, str | None]:
    """The node affinity the pod's PersistentVolumes add, or why where they can be mounted is unknown."""
    claims = [v.claim for v in pod.volumes if v.source == "persistentVolumeClaim" and v.claim]
    affinity: NodeAffinity = ()
    for claim_name in claims:
        claim = next((c for c in snapshot.volume_claims if c.namespace == pod.namespace and c.name == claim_name), None)
        if claim is None:
            what = "" if "PersistentVolumeClaim" in snapshot.kinds else " (add `kubectl get pvc,pv -A -o json`)"
            return (), f"its PersistentVolumeClaim {claim_name} is not in the snapshot{what}"
        volume = next((v for v in snapshot.persistent_volumes if v.name == claim.volume_name), None)
        if volume is None:
            return (), f"the PersistentVolume of its claim {claim_name} is not in the snapshot"
        terms = volume.node_affinity
        if volume.local and not terms and pod.node_name:  # a hostPath volume: its data is on this node
            terms = ((SelectorRequirement("metadata.name", "In", (pod.node_name,), field=True),),)
        affinity = _and(affinity, terms)
    return affinity, None


def _shape(pod: PodInfo, extra: NodeAffinity, registry: AcceleratorRegistry) -> PodShape:
    """The pod's constraints (accelerator or not) with its volumes' node affinity."""
    affinity = _and(pod.node_affinity, extra)
    shape = shape_of(pod.requests, pod.node_selector, pod.tolerations, affinity, registry)
    if shape is not None:
        return shape
    return PodShape("", 0, 0, 0, tuple(sorted(pod.node_selector.items())), pod.tolerations, affinity)


class _Eligibility:
    """Which nodes admit a pod's constraints, computed once per distinct set of constraints."""

    def __init__(self, nodes: Sequence[NodeInfo]) -> None:
        self.nodes = nodes
        self.cache: dict[tuple[object, ...], BoolArray] = {}

    def of(self, shape: PodShape) -> BoolArray:
        key = (shape.node_selector, shape.tolerations, shape.node_affinity)
        mask = self.cache.get(key)
        if mask is None:
            mask = np.array([admits(n, shape) for n in self.nodes], dtype=np.bool_)
            self.cache[key] = mask
        return mask


def _vector(requests: Mapping[str, int], resources: Sequence[str]) -> IntArray:
    return np.array([requests.get(r, 0) for r in resources], dtype=np.int64)


@dataclass(frozen=True)
class _Movable:
    """A pod that may move: its volumes' node affinity and its priority."""

    affinity: NodeAffinity
    priority: int


def _stays(
    pod: PodInfo, covering: Sequence[DisruptionBudget], priority: int, snapshot: ClusterSnapshot
) -> tuple[str, str] | _Movable:
    """(kind, detail) of why the pod stays; else its volumes' node affinity and its priority."""
    blocker = drain_blocker(pod, bool(covering))
    if blocker is not None:
        kind, _, detail = blocker.partition(" (")
        return kind, detail.rstrip(")")
    own = pod_priority(pod, snapshot.priority_classes)
    if own > priority:
        return HIGHER_PRIORITY, f"{own} > {priority}"
    if pod.pod_rules:
        return POD_RULES, ", ".join(pod.pod_rules)
    extra, unknown = _volume_affinity(pod, snapshot)
    if unknown is not None:
        return VOLUMES_UNKNOWN, unknown
    return _Movable(extra, own)


@dataclass(frozen=True)
class _Evictable:
    """A pod the eviction API would let go: its node's index, its shape, the budget it draws on, its priority."""

    pod: PodInfo
    node: int
    shape: PodShape
    budget: str
    priority: int


def _sort_pods(
    snapshot: ClusterSnapshot,
    nodes: Sequence[NodeInfo],
    index: Mapping[str, int],
    target: Target,
    allowances: dict[str, Allowance],
    registry: AcceleratorRegistry,
) -> tuple[list[Kept], list[_Evictable]]:
    """Every pod on the schedulable nodes, node by node: the ones that stay (and why) and the evictable ones.
    A pod stays for what keeps it on its node (`_stays`) or because its PodDisruptionBudgets refuse."""
    budgets = snapshot.disruption_budgets
    kept: list[Kept] = []
    movable: list[_Evictable] = []
    for node in nodes:
        for pod in snapshot.pods_on(node.name):
            covering = [b for b in budgets if b.covers(pod)]
            stay = _stays(pod, covering, target.priority, snapshot)
            if not isinstance(stay, _Movable):
                kept.append(Kept(pod.key, node.name, *stay))
                continue
            answer = verdict(pod, covering, allowances)
            if answer.refused:
                kept.append(Kept(pod.key, node.name, BUDGET, answer.refused))
                continue
            shape = _shape(pod, stay.affinity, registry)
            movable.append(_Evictable(pod, index[node.name], shape, answer.budget, stay.priority))
    return kept, movable


def _stuck_groups(
    snapshot: ClusterSnapshot, movable: Sequence[_Evictable], kept: Sequence[Kept], index: Mapping[str, int]
) -> dict[str, str]:
    """The pod groups with an evictable pod that cannot move whole, and why: one of their running pods stays,
    or runs on a node that is not schedulable (pod groups move whole or not at all)."""
    groups = {key for key in (pod_group(m.pod) for m in movable) if key is not None}
    stuck: dict[str, str] = {}
    kept_keys = {entry.pod: entry for entry in kept}
    for pod in snapshot.pods:
        key = pod_group(pod)
        if key not in groups or key in stuck or pod.terminal or not pod.node_name:
            continue
        if pod.key in kept_keys:
            stuck[key] = f"{group_name(key)}: {pod.key} {kept_keys[pod.key].reason}"
        elif pod.node_name not in index:
            stuck[key] = f"{group_name(key)}: {pod.key} runs on {pod.node_name}, which is not schedulable"
    return stuck


def _resources(movable: Sequence[_Evictable], target: Target) -> list[str]:
    """The resources the instance counts, sorted: those an evictable or waiting pod requests, and pod slots."""
    return sorted(
        {r for m in movable for r, v in m.pod.requests.items() if v > 0}
        | {r for p in target.pods for r, v in p.requests.items() if v > 0}
        | {PODS}
    )


@dataclass(frozen=True)
class _Candidates:
    """The candidates with their kinds and units, and the evictable pods their pod group keeps in place."""

    candidates: tuple[Candidate, ...]
    kinds: tuple[Kind, ...]
    units: tuple[Unit, ...]
    kept: tuple[Kept, ...]


def _candidates(
    movable: Sequence[_Evictable],
    stuck: Mapping[str, str],
    nodes: Sequence[NodeInfo],
    resources: Sequence[str],
    eligibility: _Eligibility,
    target_priority: int,
) -> _Candidates:
    """The evictable pods whose group may move, as candidates: each with its kind (pods interchangeable for
    placement share one) and its unit (its pod group's, or its own)."""
    kept: list[Kept] = []
    kinds: list[Kind] = []
    kind_index: dict[tuple[object, ...], int] = {}
    candidates: list[Candidate] = []
    units: list[Unit] = []
    unit_of_group: dict[str, int] = {}
    for m in movable:
        key = pod_group(m.pod)
        if key is not None and key in stuck:
            kept.append(Kept(m.pod.key, nodes[m.node].name, GROUP, stuck[key]))
            continue
        requests = {**m.pod.requests, PODS: 1}
        lossable = m.priority < target_priority
        shape = m.shape
        kkey: tuple[object, ...] = (tuple(requests.get(r, 0) for r in resources), shape.node_selector)
        kkey += (shape.tolerations, shape.node_affinity, lossable)
        k = kind_index.get(kkey)
        if k is None:
            k = len(kinds)
            kind_index[kkey] = k
            gpus = shape.gpus if shape.gpu_resource else 0
            kinds.append(Kind(_vector(requests, resources), eligibility.of(shape), lossable, gpus))
        if key is None:
            unit = len(units)
            units.append(Unit((len(candidates),), None))
        else:
            unit = unit_of_group.setdefault(key, len(units))
            if unit == len(units):
                units.append(Unit((), key))
            units[unit] = Unit((*units[unit].members, len(candidates)), key)
        candidates.append(Candidate(m.pod, m.node, k, unit, m.budget, m.priority, shape))
    return _Candidates(tuple(candidates), tuple(kinds), tuple(units), tuple(kept))


def _target_kinds(target: Target, resources: Sequence[str], eligibility: _Eligibility) -> list[TargetKind]:
    """The waiting pods grouped into kinds: the same requests and the same nodes they may run on."""
    target_kinds: list[TargetKind] = []
    tkind_index: dict[tuple[object, ...], int] = {}
    for i, tpod in enumerate(target.pods):
        requests = {**tpod.requests, PODS: 1}
        shape = tpod.shape
        tkey: tuple[object, ...] = (tuple(requests.get(r, 0) for r in resources), shape.node_selector)
        tkey += (shape.tolerations, shape.node_affinity)
        t = tkind_index.get(tkey)
        if t is None:
            t = len(target_kinds)
            tkind_index[tkey] = t
            target_kinds.append(TargetKind(_vector(requests, resources), eligibility.of(shape), ()))
        target_kinds[t] = TargetKind(target_kinds[t].requests, target_kinds[t].eligible, (*target_kinds[t].pods, i))
    return target_kinds


def _room(snapshot: ClusterSnapshot, nodes: Sequence[NodeInfo], resources: Sequence[str]) -> tuple[IntArray, IntArray]:
    """Each node's allocatable and the requests of the pods bound to it, [node, resource], one pod slot each
    (a node whose allocatable does not say offers the kubelet's default maxPods)."""
    alloc = np.zeros((len(nodes), len(resources)), dtype=np.int64)
    used = np.zeros((len(nodes), len(resources)), dtype=np.int64)
    pods_column = resources.index(PODS)
    for i, node in enumerate(nodes):
        alloc[i] = [node.allocatable.get(r, 0) for r in resources]
        if PODS not in node.allocatable:
            alloc[i, pods_column] = DEFAULT_MAX_PODS
        on_node = snapshot.pods_on(node.name)
        for pod in on_node:
            used[i] += [pod.requests.get(r, 0) for r in resources]
        used[i, pods_column] = len(on_node)
    return alloc, used


def _notes(snapshot: ClusterSnapshot, nodes: tuple[NodeInfo, ...], receivable: BoolArray) -> list[str]:
    """What the reader should know about the instance: nodes already over their allocatable take no pod, and
    a snapshot without PodDisruptionBudgets may be missing some."""
    notes: list[str] = []
    over = [nodes[i].name for i in np.flatnonzero(~receivable)]
    if over:
        shown = ", ".join(over[:5]) + (f" and {len(over) - 5} more" if len(over) > 5 else "")
        notes.append(f"nodes whose pods ask for more than they offer take no pod: {shown}")
    if snapshot.disruption_budgets == () and "PodDisruptionBudget" not in snapshot.kinds:
        notes.append(
            "the snapshot holds no PodDisruptionBudgets: if the cluster has some, add "
            "`kubectl get pdb -A -o json` (the plan would not respect them)"
        )
    return notes


def build_instance(
    snapshot: ClusterSnapshot, target: Target, registry: AcceleratorRegistry = DEFAULT_REGISTRY
) -> Instance:
    """The instance: schedulable nodes, candidates, units, kinds and the waiting pods' kinds."""
    nodes = tuple(n for n in snapshot.nodes if n.schedulable)
    index = {n.name: i for i, n in enumerate(nodes)}
    allowances = {b.key: allowance(b, snapshot) for b in snapshot.disruption_budgets}
    kept, movable = _sort_pods(snapshot, nodes, index, target, allowances, registry)
    stuck = _stuck_groups(snapshot, movable, kept, index)
    resources = _resources(movable, target)
    eligibility = _Eligibility(nodes)
    placed = _candidates(movable, stuck, nodes, resources, eligibility, target.priority)
    alloc, used = _room(snapshot, nodes, resources)
    receivable: BoolArray = np.all(used <= alloc, axis=1)
    return Instance(
        snapshot=snapshot,
        target=target,
        nodes=nodes,
        resources=tuple(resources),
        alloc=alloc,
        used=used,
        receivable=receivable,
        candidates=placed.candidates,
        kinds=placed.kinds,
        units=placed.units,
        target_kinds=tuple(_target_kinds(target, resources, eligibility)),
        allowances=allowances,
        kept=(*kept, *placed.kept),
        notes=tuple(_notes(snapshot, nodes, receivable)),
    )


def kept_counts(instance: Instance) -> list[tuple[str, int]]:
    """How many pods stay for each kind of reason, most first."""
    counts: dict[str, int] = {}
    for entry in instance.kept:
        counts[entry.kind] = counts.get(entry.kind, 0) + 1
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))
