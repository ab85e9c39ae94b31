"""Which arrivals every greedy scheduler places: a pod is certified when no way of placing the pods that arrived
before it leaves it without a node, so a scheduler that binds each pod that fits somewhere when it arrives
(kube-scheduler and every policy `simulate` compares) places it, and, with no departures, keeps it.

Why a certified pod is placed. Pod i fits an empty node n ("n is eligible") and arrives when the cluster holds
some of the pods 0..i-1, each on one node, within the node's capacity. The filters of the model
(`GpuCluster.feasible`, kubernetes v1.35 NodeResourcesFit and the Open-Gpu-Share filter) reject i on an eligible
node n only by what n's pods use, in one of these ways (its *blocking modes*; cordons, taints, selectors and the
GPU model or resource do not depend on n's pods, so they decide eligibility alone):

* cpu (only when i requests CPU): n's pods request more than cpu_n − cpu_i, i.e. at least cpu_n − cpu_i + 1;
* memory (only when i requests memory): likewise in bytes;
* pod slots: n holds max_pods_n pods;
* GPU: i asks for g GPUs of s milli each (s = 1000: whole GPUs, which must be untouched) and fewer than g of
  n's G_n GPUs have s milli free, so at least G_n − g + 1 GPUs have used ≥ R = 1001 − s milli. On each such
  GPU the pods on it have Σ min(x, R) ≥ min(used, R) = R (min(a + b, R) ≤ min(a, R) + min(b, R)), so over
  n's pods, one with x milli on each of k GPUs counting k·min(x, R), the sum is ≥ R·(G_n − g + 1).

So if i fits nowhere, every eligible node meets one mode's inequality "Σ of its pods' contributions ≥ cost".
Count, per node class (identical capacity) and mode, the nodes z[k,μ] blocked that way and, per pod shape
(identical requests) and mode, the pods y[t,μ] on nodes blocked that way: Σ_μ z[k,μ] = N_k (every eligible node
blocked), Σ_μ y[t,μ] ≤ n_t (the shape's arrivals before i; pods placed nowhere count nowhere) and, summing the
per-node inequalities of a mode, Σ_t v[t,μ]·y[t,μ] ≥ Σ_k cost[k,μ]·z[k,μ]. This linear program forgets which
node each pod is on, that a node's pods must fit it and that counts are integers: each only frees the
adversary, so whenever the cluster can block i, the program has a solution with Σ z = N (the eligible nodes).
(Per-node capacity rows, class by class and mode by mode, were tried on the openb traces: no pod more was
certified and the search took five times as long, so they are left out.) Its Lagrangian dual gives, for every
b ≥ 0 (one price per mode),

    max Σ z ≤ f(b) = Σ_k N_k·max(0, max_μ (1 − cost[k,μ]·b_μ)) + Σ_t n_t·max(0, max_μ v[t,μ]·b_μ),

so a b with f(b) < N is a certificate that i is placed. HiGHS proposes b (the dual LP below); f(b) is then
evaluated here in exact integer arithmetic, so the verdict does not rest on the solver's tolerances. f grows
with the arrivals (n_t never shrinks), so one certificate certifies every earlier arrival of the same kind
too, and per pod kind a binary search over its arrivals finds how many are certified.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

import highspy
import numpy as np
import numpy.typing as npt

from kubegpu.packing.highs import new_solver, set_col_costs
from kubegpu.scheduler.arrays import BoolArray, IntArray
from kubegpu.scheduler.gpu.state import MILLI, GpuCluster, GpuPod, NodeSpec

FloatArray = npt.NDArray[np.float64]
PRICE_BITS = 40  # the solver's prices are rounded down to multiples of 2**-40 and f is evaluated exactly
MODES = ("cpu", "memory", "pods", "gpu")
Usage = tuple[int, int, int, int]  # what a pod takes from its node: cpu milli, memory bytes, GPUs, milli per GPU


@dataclass(frozen=True, eq=False)
class Certification:
    """`placed[i]`: every greedy scheduler places arrival i (and keeps it); `lp_solves` LPs were solved."""

    placed: BoolArray
    lp_solves: int
    seconds: float

    @property
    def count(self) -> int:
        """Arrivals certified."""
        return int(self.placed.sum())


def usage(pod: GpuPod) -> Usage:
    """What a pod takes from the node it is bound to (GPUs only when it asks for some)."""
    return (pod.cpu_milli, pod.memory_bytes, pod.gpu_count if pod.is_gpu else 0, pod.gpu_milli if pod.is_gpu else 0)


def mode_costs(target: GpuPod, node: NodeSpec) -> tuple[int | None, ...]:
    """Per blocking mode (MODES order), what the contributions of a node's pods must reach to keep `target` off
    it (None: that mode cannot, e.g. CPU for a pod that requests none). For a node `target` fits when empty."""
    share = MILLI + 1 - target.gpu_milli
    return (
        node.cpu_milli - target.cpu_milli + 1 if target.cpu_milli > 0 else None,
        node.memory_bytes - target.memory_bytes + 1 if target.memory_bytes > 0 else None,
        node.max_pods,
        (node.gpu_count - target.gpu_count + 1) * share,
    )


def mode_contributions(target: GpuPod, pod: Usage) -> tuple[int, int, int, int]:
    """What one pod on a node adds towards each blocking mode's cost (MODES order) for `target`."""
    cpu, memory, gpus, milli = pod
    return (cpu, memory, 1, gpus * min(milli, MILLI + 1 - target.gpu_milli))


def _target_key(pod: GpuPod) -> tuple[object, ...]:
    """Pods the filters cannot tell apart: requests, GPU share, models, resource and placement constraints."""
    return (
        usage(pod),
        tuple(sorted(pod.gpu_models)),
        pod.gpu_resource,
        pod.node_selector,
        pod.tolerations,
        pod.node_affinity,
    )


class _Adversary:
    """The dual LP for one kind of target pod, built once; between binary-search steps only the objective
    coefficients of the pod shapes (their arrivals so far) change.

    min Σ_k N_k·a_k + Σ_t n_t·c_t  s.t.  a_k + cost[k,μ]·b_μ ≥ 1,  c_t − v[t,μ]·b_μ ≥ 0,  a, b, c ≥ 0,
    whose optimum is min_b f(b); each mode's row is scaled by its largest cost.
    """

    def __init__(
        self, costs: Sequence[Sequence[int]], counts: IntArray, contributions: Sequence[Sequence[int]]
    ) -> None:
        self.exact_costs = costs
        self.exact_values = contributions
        self.scales = [max(column) for column in zip(*costs, strict=True)]
        scale = np.array(self.scales, dtype=np.float64)
        self.costs = np.array(costs, dtype=np.float64) / scale  # classes × modes
        self.values = np.array(contributions, dtype=np.float64) / scale  # shapes × modes
        self.nodes = counts
        self.total = int(counts.sum())
        n_classes, n_modes = self.costs.shape
        n_shapes = len(contributions)
        n_cols = n_modes + n_classes + n_shapes  # b, then a, then c
        self.shape_cols = np.arange(n_modes + n_classes, n_cols, dtype=np.int32)
        self.n_modes = n_modes
        inf = highspy.kHighsInf
        solver = new_solver()
        solver.addVars(n_cols, np.zeros(n_cols), np.full(n_cols, inf))
        set_col_costs(solver, np.arange(n_modes, n_modes + n_classes, dtype=np.int32), counts.astype(np.float64))
        # every row has two entries: a_k + cost·b_μ ≥ 1 per class and mode, c_t − v·b_μ ≥ 0 per shape and mode
        k, m = np.divmod(np.arange(n_classes * n_modes), n_modes)
        t, u = np.nonzero(self.values > 0)
        own = np.concatenate((n_modes + k, self.shape_cols[t]))
        price = np.concatenate((m, u))
        coef = np.concatenate((self.costs[k, m], -self.values[t, u]))
        lower = np.concatenate((np.ones(len(k)), np.zeros(len(t))))
        n_rows = len(lower)
        index = np.stack((own, price), axis=1).ravel().astype(np.int32)
        value = np.stack((np.ones(n_rows), coef), axis=1).ravel()
        starts = np.arange(0, 2 * n_rows, 2, dtype=np.int32)
        solver.addRows(n_rows, lower, np.full(n_rows, inf), len(index), starts, index, value)
        self.solver = solver

    def prices(self, arrived: IntArray) -> FloatArray | None:
        """The solver's mode prices b for these arrivals per shape (None when it did not finish)."""
        set_col_costs(self.solver, self.shape_cols, arrived.astype(np.float64))
        self.solver.run()
        if self.solver.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            return None
        b = np.asarray(self.solver.getSolution().col_value[: self.n_modes], dtype=np.float64)
        return np.maximum(b, 0.0)

    def certificate(self, b: FloatArray) -> tuple[int, npt.NDArray[np.object_], int]:
        """f(b) in exact integers, for b rounded down to multiples of 2**-PRICE_BITS (any b ≥ 0 is a certificate):
        over one denominator D, D·Σ_k N_k·max(0, max_μ (1 − cost[k,μ]·b_μ)), then D·max(0, max_μ v[t,μ]·b_μ)
        per shape (what each arrival of the shape adds), and D."""
        prices = [int(x * 2**PRICE_BITS) for x in b]  # b_μ·S_μ: the rows were scaled by S_μ
        denominator = 2**PRICE_BITS * math.prod(self.scales)
        factor = [p * (denominator // (2**PRICE_BITS * s)) for p, s in zip(prices, self.scales, strict=True)]
        nodes = sum(
            int(n) * max(0, *(denominator - c * f for c, f in zip(row, factor, strict=True)))
            for n, row in zip(self.nodes.tolist(), self.exact_costs, strict=True)
        )
        per_shape = np.array(
            [max(0, *(v * f for v, f in zip(row, factor, strict=True))) for row in self.exact_values], dtype=object
        )
        return nodes, per_shape, denominator


def certify(nodes: Sequence[NodeSpec], arrivals: Sequence[GpuPod]) -> Certification:
    """Which GPU pods of `arrivals` (in arrival order) every greedy scheduler places on `nodes`.

    Pods with other extended resources are never certified (their blocking mode is not modelled); CPU-only
    pods are not asked about (they allocate no GPU) but count, as every arrival does, towards blocking.
    """
    start = time.perf_counter()
    placed = np.zeros(len(arrivals), dtype=np.bool_)
    empty = GpuCluster(nodes)
    # node classes: what the blocking modes read of a node (eligibility is decided per target, node by node)
    class_index: dict[tuple[int, int, int, int], int] = {}
    class_of = np.array(
        [
            class_index.setdefault((n.cpu_milli, n.memory_bytes, n.max_pods, n.gpu_count), len(class_index))
            for n in nodes
        ],
        dtype=np.int64,
    )
    classes = [NodeSpec("", cpu, memory, gpus, max_pods=pods) for cpu, memory, pods, gpus in class_index]
    shape_index: dict[Usage, int] = {}
    shape_of = np.array([shape_index.setdefault(usage(p), len(shape_index)) for p in arrivals], dtype=np.int64)
    shapes = list(shape_index)
    groups: dict[tuple[object, ...], list[int]] = {}
    for i, pod in enumerate(arrivals):
        if pod.is_gpu and not any(amount > 0 for amount in pod.scalars.values()):
            groups.setdefault(_target_key(pod), []).append(i)
    solves = 0
    for members in groups.values():
        target = arrivals[members[0]]
        eligible = np.bincount(class_of[empty.feasible(target)], minlength=len(classes))
        if not eligible.any():
            continue
        adversary = _adversary(target, classes, eligible, shapes)
        known, steps = _search(adversary, np.array(members, dtype=np.int64), shape_of)
        solves += steps
        placed[members[:known]] = True
    return Certification(placed, solves, time.perf_counter() - start)


def _adversary(target: GpuPod, classes: Sequence[NodeSpec], eligible: IntArray, shapes: Sequence[Usage]) -> _Adversary:
    """The LP for `target` over the nodes it fits when empty (`eligible[k]` of class k) and the arrivals' shapes."""
    present = [k for k in range(len(classes)) if eligible[k] > 0]
    costs = [mode_costs(target, classes[k]) for k in present]
    modes = [m for m in range(len(MODES)) if all(c[m] is not None for c in costs)]
    cost = [[int(c[m] or 0) for m in modes] for c in costs]
    value = [[mode_contributions(target, s)[m] for m in modes] for s in shapes]
    return _Adversary(cost, eligible[present], value)


def _search(adversary: _Adversary, members: IntArray, shape_of: IntArray) -> tuple[int, int]:
    """How many of the target's arrivals (`members`, arrival indices in order) a certificate covers, and the
    LPs solved. Each certificate b certifies a prefix of them; the search narrows down the longest."""
    n_shapes = len(adversary.values)
    known, unknown = 0, len(members)  # members[:known] certified; members[unknown:] found blockable
    probe = len(members) - 1  # the last arrival first: most kinds are certified throughout
    solves = 0
    while known < unknown:
        arrived = np.bincount(shape_of[: members[probe]], minlength=n_shapes)
        b = adversary.prices(arrived)
        solves += 1
        if b is not None:
            nodes, per_shape, denominator = adversary.certificate(b)
            before = np.concatenate(([0], np.cumsum(per_shape[shape_of])))
            # the members this certificate covers: a prefix, as f never decreases along the arrivals
            known = max(known, int(np.count_nonzero(before[members] < adversary.total * denominator - nodes)))
        if known <= probe:
            unknown = probe
        probe = (known + unknown) // 2
    return known, solves
