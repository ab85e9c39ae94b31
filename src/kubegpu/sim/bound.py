"""Upper bounds on the FGD metric: at each arrival column, the most GPU a placement of the pods that have
arrived could allocate, for the very arrivals `run_policy` replays with the same seed.

Two bounds, both from kubegpu.packing's class LP. The first holds for any placement: it knows every arrival
and may leave any pod out, so no online policy reaches it in general. The second holds for greedy
schedulers, which bind every pod that fits some node when it arrives and never move it (kube-scheduler and
every policy `simulate` compares): the pods that every such scheduler places (kubegpu.sim.certified) must be
in the placement, as lower bounds on the LP's task counts; and once such a scheduler refuses a pod of the
commonest GPU share, it refuses every larger pod after it (`_refusal_bounds`). A policy's allocation never
falls as pods arrive (the FGD method has no departures), so the bound of a column is taken at its last event,
capped by the GPU arrived.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from kubegpu.packing.classlp import ClassLP
from kubegpu.packing.model import NodeClass, PackingProblem, TaskType
from kubegpu.scheduler.gpu.state import GpuCluster, GpuPod, NodeSpec
from kubegpu.sim.certified import certify
from kubegpu.sim.discrete import arrival_columns
from kubegpu.sim.experiment import seeded_stream, tune_workload

MIB = 1024 * 1024
IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
PLACED_EPS = 1e-6  # an LP solution places a type's lower bound when its count is this close to it
TypeKey = tuple[int, int, int, int, tuple[str, ...]]


@dataclass(frozen=True)
class TraceProblem:
    """The packing problem of a cluster and a trace: one class per node shape, one type per GPU pod shape.

    `type_of` maps a pod's shape to its task type; CPU-only pods allocate no GPU and are left out (leaving
    them out only frees room, so the bound stays an upper bound).
    """

    problem: PackingProblem
    type_of: Mapping[TypeKey, int]
    capacity_milli: int


def pod_key(pod: GpuPod) -> TypeKey:
    """What makes two pods interchangeable for packing: requests, GPU share and allowed models."""
    return (pod.cpu_milli, pod.memory_bytes // MIB, pod.gpu_count, pod.gpu_milli, tuple(sorted(pod.gpu_models)))


def trace_problem(nodes: Sequence[NodeSpec], trace: Sequence[GpuPod]) -> TraceProblem:
    """Node classes (CPU, memory rounded up to MiB, pod slots, GPUs, model) and the trace's GPU pod types."""
    shapes: dict[tuple[int, int, int, int, str], int] = {}
    for node in nodes:
        key = (node.cpu_milli, -(-node.memory_bytes // MIB), node.max_pods, node.gpu_count, node.gpu_model)
        shapes[key] = shapes.get(key, 0) + 1
    classes = tuple(
        NodeClass(f"{model or 'cpu'} {gpus}×GPU {cpu / 1000:g} CPU {mem // 1024} GiB", count, cpu, mem, pods, gpus)
        for (cpu, mem, pods, gpus, model), count in shapes.items()
    )
    type_of: dict[TypeKey, int] = {}
    for pod in trace:
        if pod.is_gpu:
            type_of.setdefault(pod_key(pod), len(type_of))
    types = tuple(
        TaskType(f"{count}×{milli}m GPU {cpu / 1000:g} CPU {mem} MiB", cpu, mem, count, milli, 0)
        for cpu, mem, count, milli, _ in type_of
    )
    eligible = tuple(
        tuple(gpus > 0 and (not models or model in models) for *_, models in type_of)
        for (_, _, _, gpus, model) in shapes
    )
    capacity = GpuCluster(nodes).total_gpu_milli
    return TraceProblem(PackingProblem(classes, types, eligible), type_of, capacity)


def column_events(arrived: Sequence[int], capacity: int, top: int) -> dict[int, int]:
    """Column k -> the last event whose allocation the FGD metric averages into column k.

    The metric (discrete.discretize) averages the events whose arrived GPU rounds to k % of capacity,
    or, when none does, those within one point; a bound at the last of them holds for all of them.
    """
    pct = arrival_columns(arrived, capacity // 1000)
    out: dict[int, int] = {}
    for k in range(top + 1):
        hits = np.flatnonzero(pct == k)
        if hits.size == 0:
            hits = np.flatnonzero((pct >= k - 1) & (pct <= k + 1))
            if hits.size == 0:
                continue
        out[k] = int(hits.max())
    return out


@dataclass(frozen=True)
class BoundCurve:
    """One seed's bounds per arrival column (GPU allocation %): `discrete` for any placement, `greedy` for
    greedy schedulers (which place every pod that fits when it arrives); `certified` pods are placed by all."""

    workload: str
    seed: int
    arrival: float
    capacity_milli: int
    discrete: dict[int, float] = field(default_factory=dict)
    lp_solves: int = 0
    seconds: float = 0.0
    greedy: dict[int, float] = field(default_factory=dict)
    certified: int = 0

    @property
    def at_arrival(self) -> float:
        """The bound for any placement at the target arrival column (percent)."""
        return self.discrete.get(round(self.arrival * 100), max(self.discrete.values(), default=0.0))

    @property
    def greedy_at_arrival(self) -> float:
        """The bound for greedy schedulers at the target arrival column (percent)."""
        return self.greedy.get(round(self.arrival * 100), max(self.greedy.values(), default=0.0))


def bound_curve(
    nodes: Sequence[NodeSpec],
    trace: Sequence[GpuPod],
    seed: int,
    arrival: float = 1.3,
    workload: str = "custom",
    prepared: tuple[TraceProblem, ClassLP] | None = None,
) -> BoundCurve:
    """Both bounds at every column for the arrivals `run_policy(…, seed, arrival)` replays.

    Columns are solved from the top down (each LP warm-starts from the one before); once every GPU pod
    arrived by a column fits, every earlier column's arrivals fit too, and the bound there is the GPU arrived.
    """
    start = time.perf_counter()
    tp, lp = prepared if prepared is not None else _prepare(nodes, trace)
    capacity = tp.capacity_milli
    pods = tune_workload(trace, capacity, arrival, seeded_stream(seed))
    kinds = np.array([tp.type_of.get(pod_key(p), -1) if p.is_gpu else -1 for p in pods], dtype=np.int64)
    arrived = np.cumsum([p.total_gpu_milli for p in pods], dtype=np.int64)
    events = column_events(arrived.tolist(), capacity, round(arrival * 100))
    n_types = len(tp.problem.types)
    counts = _counts_by_event(kinds, events, n_types)
    offline, solves = _offline_bounds(lp, events, arrived, counts)
    certification = certify(nodes, pods)
    lower = _counts_by_event(np.where(certification.placed, kinds, -1), events, n_types)
    greedy, more = _greedy_bounds(lp, counts, lower, offline)
    refusal, most = _refusal_bounds(lp, pods, kinds, events, counts, lower, greedy, arrived)
    greedy = {k: min(v, refusal.get(k, v)) for k, v in greedy.items()}
    more += most
    return BoundCurve(
        workload,
        seed,
        arrival,
        capacity,
        {k: round(100.0 * v / capacity, 2) for k, (v, _) in sorted(offline.items())},
        solves + more + certification.lp_solves,
        time.perf_counter() - start,
        {k: round(100.0 * v / capacity, 2) for k, v in sorted(greedy.items())},
        certification.count,
    )


def _counts_by_event(kinds: IntArray, events: Mapping[int, int], n_types: int) -> dict[int, IntArray]:
    """Per column, the pods of each task type (kinds ≥ 0) among the arrivals up to its last event."""
    return {
        k: np.bincount(kinds[: last + 1][kinds[: last + 1] >= 0], minlength=n_types).astype(np.int64)
        for k, last in events.items()
    }


def _offline_bounds(
    lp: ClassLP, events: Mapping[int, int], arrived: IntArray, counts: Mapping[int, IntArray]
) -> tuple[dict[int, tuple[float, FloatArray]], int]:
    """Per column: the class LP for any subset of the arrivals, capped by the GPU arrived (milli), with the tasks
    per type its solution places; and the LPs solved."""
    out: dict[int, tuple[float, FloatArray]] = {}
    solves = 0
    saturated = False  # every pod arrived by this column (so by every earlier one) fits
    zero = np.zeros(len(lp.problem.types), dtype=np.int64)
    for k in sorted(events, reverse=True):
        full = float(arrived[events[k]])
        if saturated:
            out[k] = (full, counts[k].astype(np.float64))
            continue
        solved = lp.solve(zero, counts[k])
        solves += 1
        saturated = solved.value >= full
        out[k] = (min(full, solved.value), solved.placed)
    return out, solves


def _greedy_bounds(
    lp: ClassLP,
    counts: Mapping[int, IntArray],
    lower: Mapping[int, IntArray],
    offline: Mapping[int, tuple[float, FloatArray]],
) -> tuple[dict[int, float], int]:
    """Per column: the class LP with the certified pods as lower bounds, capped by the offline bound; and the
    LPs solved. Where the offline LP's solution already places the certified pods, it solves this LP too (its
    optimum is the offline one), and where the offline bound is the GPU arrived, so is this one."""
    out: dict[int, float] = {}
    solves = 0
    for k in sorted(offline, reverse=True):
        value, placed = offline[k]
        if np.any(placed < lower[k] - PLACED_EPS):
            value = min(value, lp.solve(lower[k], counts[k]).value)
            solves += 1
        out[k] = value
    return out, solves


def dominated_types(pods: Sequence[GpuPod], kinds: IntArray, shared: int) -> list[int]:
    """The task types whose every pod any node that refuses every pod of type `shared` (a GPU share) refuses too:
    each asks for at least the most CPU and memory a `shared` pod asks for, for a GPU share at least as large or
    whole GPUs, may run only where a `shared` pod may, and has nothing else that decides where it runs.

    Why: a node refuses a `shared` pod only when its CPU or memory left is below the pod's, its pod slots are
    full, or no GPU has the share free (`certified` lists these); each of these refuses such a pod as well."""
    by_type: dict[int, list[GpuPod]] = {}
    for pod, kind in zip(pods, kinds.tolist(), strict=True):
        if kind >= 0:
            by_type.setdefault(kind, []).append(pod)
    first = by_type.get(shared, [])
    if not first or not all(_plain(p) for p in first):
        return []
    a = first[0]
    cpu = max(p.cpu_milli for p in first)
    memory = max(p.memory_bytes for p in first)
    out = []
    for kind, group in by_type.items():
        b = group[0]
        if not all(_plain(p) and p.gpu_resource == a.gpu_resource for p in group):
            continue
        if min(p.cpu_milli for p in group) < cpu or min(p.memory_bytes for p in group) < memory:
            continue
        if b.gpu_milli < a.gpu_milli or (a.gpu_models and not set(b.gpu_models or ("",)) <= set(a.gpu_models)):
            continue
        out.append(kind)
    return sorted(out)


def _plain(pod: GpuPod) -> bool:
    """Where the pod may run depends on nothing but its requests and GPU models (no selector, affinity,
    toleration or other extended resource), and it asks for one GPU share or whole GPUs."""
    return not (pod.node_selector or pod.node_affinity or pod.tolerations or pod.scalars) and pod.is_gpu


REFUSAL_INTERVALS = 10  # where the first refused pod of the shared type may fall: this many ranges of its arrivals
REFUSAL_STEP = 20  # columns: the refusal bound is solved at the target column and every this many below it


def _refusal_bounds(
    lp: ClassLP,
    pods: Sequence[GpuPod],
    kinds: IntArray,
    events: Mapping[int, int],
    counts: Mapping[int, IntArray],
    lower: Mapping[int, IntArray],
    greedy: Mapping[int, float],
    arrived: IntArray,
) -> tuple[dict[int, float], int]:
    """Per column, a sharper bound for greedy schedulers from the first pod of the most common GPU share that
    one refuses; and the LPs solved.

    Once a greedy scheduler refuses a pod of that type (type A), every node refuses it, and every node keeps
    refusing it and every pod of the types it dominates (`dominated_types`): nothing leaves. So either it places
    every pod of type A that arrives, or the first it refuses is some A arrival j, before which all A pods are
    placed and after which no dominating pod is. Splitting A's arrivals into ranges, the LP for a range places
    at least the A pods before the range and at most the dominating pods that arrived up to its last A pod; the
    greatest of these LPs and the one placing every A pod bounds every greedy scheduler. Solved at a few
    columns; a column's allocation is at most any later column's, so each column takes the least bound at or
    after it.
    """
    if not events:
        return {}, 0
    top = max(events)
    totals = counts[top]
    shares = [t for t, task in enumerate(lp.problem.types) if task.shares_gpu and totals[t] > 0]
    if not shares:
        return {}, 0
    shared = max(shares, key=lambda t: (int(totals[t]), -t))
    dominated = dominated_types(pods, kinds, shared)
    if not dominated:
        return {}, 0
    where = np.flatnonzero(kinds == shared)
    solved: dict[int, float] = {}
    solves = 0
    for k in range(top, -1, -REFUSAL_STEP):
        if k not in events or greedy.get(k, 0.0) >= float(arrived[events[k]]):
            break  # every pod arrived by this column fits: so do those of every earlier column
        last = events[k]
        ours = where[where <= last]
        best = 0.0
        cuts = np.linspace(0, len(ours), REFUSAL_INTERVALS + 1).astype(np.int64)
        for begin, end in itertools.pairwise(cuts.tolist()):
            if begin == end:
                continue
            up = counts[k].copy()
            upto = kinds[: int(ours[end - 1]) + 1]
            before = np.bincount(upto[upto >= 0], minlength=len(up))
            up[dominated] = np.minimum(up[dominated], before[dominated])
            low = lower[k].copy()
            low[shared] = max(int(low[shared]), begin)
            best = max(best, lp.solve(np.minimum(low, up), up).value)
            solves += 1
        every = lower[k].copy()
        every[shared] = counts[k][shared]
        best = max(best, lp.solve(every, counts[k]).value)
        solves += 1
        solved[k] = best
    out: dict[int, float] = {}
    bound = float("inf")
    for k in sorted(events, reverse=True):
        bound = min(bound, solved.get(k, float("inf")))
        if bound < float("inf"):
            out[k] = bound
    return out, solves


def _prepare(nodes: Sequence[NodeSpec], trace: Sequence[GpuPod]) -> tuple[TraceProblem, ClassLP]:
    tp = trace_problem(nodes, trace)
    return tp, ClassLP(tp.problem)


def bound_curves(
    nodes: Sequence[NodeSpec],
    traces: Mapping[str, Sequence[GpuPod]],
    seeds: Sequence[int],
    arrival: float = 1.3,
    on_done: Callable[[BoundCurve], None] | None = None,
) -> list[BoundCurve]:
    """Every (workload, seed) curve; one LP per workload, warm-started from seed to seed."""
    out: list[BoundCurve] = []
    for workload, trace in traces.items():
        prepared = _prepare(nodes, trace)
        for seed in seeds:
            out.append(bound_curve(nodes, trace, seed, arrival, workload, prepared))
            if on_done is not None:
                on_done(out[-1])
    return out


@dataclass(frozen=True)
class BoundSummary:
    """Mean and spread over seeds of one workload's bounds at the target column, and their curves (means):
    `mean`, `std`, `curve` for any placement, `greedy_*` for greedy schedulers."""

    workload: str
    seeds: tuple[int, ...]
    arrival: float
    mean: float
    std: float
    curve: dict[int, float]
    seconds: float
    greedy_mean: float = 0.0
    greedy_std: float = 0.0
    greedy_curve: dict[int, float] = field(default_factory=dict)


def summarize_bounds(curves: Sequence[BoundCurve]) -> dict[str, BoundSummary]:
    """Per workload: the mean bounds at the target column and the mean curves over the seeds."""
    groups: dict[str, list[BoundCurve]] = {}
    for c in curves:
        groups.setdefault(c.workload, []).append(c)
    out: dict[str, BoundSummary] = {}
    for workload, runs in groups.items():
        values = np.array([r.at_arrival for r in runs])
        greedy = np.array([r.greedy_at_arrival for r in runs])
        out[workload] = BoundSummary(
            workload,
            tuple(r.seed for r in runs),
            runs[0].arrival,
            float(values.mean()),
            float(values.std()),
            _mean_curve([r.discrete for r in runs]),
            sum(r.seconds for r in runs),
            float(greedy.mean()),
            float(greedy.std()),
            _mean_curve([r.greedy for r in runs]),
        )
    return out


def _mean_curve(curves: Sequence[Mapping[int, float]]) -> dict[int, float]:
    """The mean over curves at the columns they all have."""
    columns = sorted(set.intersection(*(set(c) for c in curves)))
    return {k: float(np.mean([c[k] for c in curves])) for k in columns}
