"""FGD's fragmentation measure: typical pods, a node's expected unusable GPU milli, and the cluster sum.

Follows hkust-adsl/kubernetes-scheduler-simulator pkg/utils/frag.go (GetTypicalPods, NodeGpuShareFragAmount,
GetNodePodFrag, FragAmountSumExceptQ3), vectorised over many node states with the artifact's floating-point
operations in its order, so that a score truncated to an integer agrees with the Go program's to the bit.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from kubegpu.scheduler.gpu.state import MILLI, GpuCluster, GpuPod, IntArray

FloatArray = npt.NDArray[np.float64]
POPULARITY_THRESHOLD = 95  # podPopularityThreshold used by every FGD experiment
INCREASE_STEP = 1  # podIncreaseStep
# FragRatioDataMap's quadrant indices; FragAmountSumExceptQ3 adds all but Q3 in this order
Q1, Q2, Q3, Q4, XL, XR, NO_ACCESS = range(7)
FRAG_QUADRANTS = (Q1, Q2, Q4, XL, XR, NO_ACCESS)


@dataclass(frozen=True)
class TypicalPod:
    """One task shape of the target workload and its probability (0..1)."""

    cpu_milli: int
    gpu_milli: int
    gpu_count: int
    gpu_models: tuple[str, ...]
    probability: float


def typical_pods(
    pods: Iterable[GpuPod],
    threshold: int = POPULARITY_THRESHOLD,
    step: int = INCREASE_STEP,
    include_cpu_pods: bool = True,
    gpu_weight: float = 0.0,
) -> tuple[TypicalPod, ...]:
    """The most popular shapes covering `threshold`% of tasks (counted by number), renormalised to 1.

    Order follows the artifact: descending count, then descending (cpu, milli, count, model).
    `gpu_weight` is the artifact's gpuResWeight: a whole-GPU pod counts 1 + gpu_count × weight.
    """
    counts: dict[tuple[int, int, int, str], float] = {}
    total = 0.0
    for pod in pods:
        if not include_cpu_pods and pod.gpu_count == 0:
            continue
        weight = 1.0 + pod.gpu_count * gpu_weight if gpu_weight > 0 and pod.gpu_milli == MILLI else 1.0
        counts[pod.shape] = counts.get(pod.shape, 0.0) + weight
        total += weight
    if total == 0:
        return ()
    ordered = sorted(counts.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
    expected = threshold * total / 100.0
    taken = 0
    cum = 0.0
    limit = 0
    while cum < expected and taken < len(ordered):
        limit += max(step, 1)
        while taken < limit and taken < len(ordered):
            cum += ordered[taken][1]
            taken += 1
    # each share is count / total, and when the list was cut it is divided again by cum / total (the
    # artifact's two divisions: count / cum can differ from it in the last bit)
    shares = [n / total for _, n in ordered[:taken]]
    if taken < len(ordered):
        shares = [share / (cum / total) for share in shares]
    return tuple(
        TypicalPod(cpu, milli, count, tuple(m for m in models.split("|") if m), share)
        for ((cpu, milli, count, models), _), share in zip(ordered[:taken], shares, strict=True)
    )


class FragModel:
    """Expected fragment (GPU milli) of node states against a typical-pod distribution.

    Built once per workload; `frag` takes many states at once as numpy arrays.
    """

    def __init__(self, typical: Sequence[TypicalPod], model_names: Sequence[str]) -> None:
        self.typical = tuple(typical)
        self.cpu = np.array([t.cpu_milli for t in typical], dtype=np.int64)
        self.milli = np.array([t.gpu_milli for t in typical], dtype=np.int64)
        self.count = np.array([t.gpu_count for t in typical], dtype=np.int64)
        self.prob = np.array([t.probability for t in typical], dtype=np.float64)
        self.cpu_only = self.milli == 0
        # access[model_index, t]: a node of that model may host t (no constraint, or model listed)
        access = np.ones((len(model_names), len(typical)), dtype=np.bool_)
        for j, t in enumerate(typical):
            if t.gpu_models:
                for i, name in enumerate(model_names):
                    access[i, j] = bool(name) and name in t.gpu_models
        self.access = access
        self.thresholds, self.threshold_index = np.unique(self.milli, return_inverse=True)
        self._quadrants = np.array(FRAG_QUADRANTS, dtype=np.int64)

    def frag(self, models: IntArray, cpu_left: IntArray, gpu_left: IntArray) -> FloatArray:
        """F_n(M) for each row: Σ_t p_t × (GPUs too small for t if t fits, else all idle GPU).

        As NodeGpuShareFragAmount adds it up: each typical pod in order adds p_t × amount to its
        quadrant (a fitting pod's too-small GPUs to Q2), and the sum skips Q3 over quadrants in
        index order (Q1, Q2, Q4, XL, XR, no-access); sequential sums, no reassociation.
        """
        rows = gpu_left.shape[0]
        if rows == 0 or len(self.typical) == 0:
            return np.zeros(rows, dtype=np.float64)
        total = gpu_left.sum(axis=1)
        below = gpu_left[:, :, None] < self.thresholds[None, None, :]
        small = (gpu_left[:, :, None] * below).sum(axis=1)
        count_ge = gpu_left.shape[1] - below.sum(axis=1)
        idx = self.threshold_index
        cpu_ok = cpu_left[:, None] >= self.cpu[None, :]
        hosts = count_ge[:, idx] >= self.count[None, :]
        gpu_quadrant = np.where(hosts, np.where(cpu_ok, Q3, Q4), np.where(cpu_ok, Q2, Q1))
        quadrant = np.where(
            self.cpu_only[None, :], np.where(cpu_ok, XL, XR), np.where(self.access[models], gpu_quadrant, NO_ACCESS)
        )
        satisfied = quadrant == Q3
        amount = np.where(satisfied, small[:, idx], total[:, None]).astype(np.float64)
        part = self.prob[None, :] * amount
        quadrant = np.where(satisfied, Q2, quadrant)  # a satisfied pod's too-small GPUs count as lacking GPU
        # rows × quadrant × typical pod; cumsum adds in order (np.sum would add pairwise)
        by_quadrant = np.where(quadrant[:, None, :] == self._quadrants[None, :, None], part[:, None, :], 0.0)
        sums = np.cumsum(by_quadrant, axis=2)[:, :, -1]
        result: FloatArray = np.cumsum(sums, axis=1)[:, -1]
        return result


def gpu_frag_milli(gpu_left: Sequence[int], pod_gpu_milli: int) -> int:
    """GPU milli on GPUs whose remainder is below the pod's per-GPU request."""
    return sum(v for v in gpu_left if v < pod_gpu_milli)


def node_frag_milli(typical: Sequence[TypicalPod], gpu_model: str, cpu_left: int, gpu_left: Sequence[int]) -> float:
    """F_n(M) of a single node given as plain values (used by tests and reports)."""
    names = sorted({gpu_model} | {m for t in typical for m in t.gpu_models} | {""})
    model = FragModel(typical, names)
    left = np.array([list(gpu_left) or [0]], dtype=np.int64)
    return float(
        model.frag(np.array([names.index(gpu_model)], dtype=np.int64), np.array([cpu_left], dtype=np.int64), left)[0]
    )


def whole_gpus_free(gpu_left: IntArray) -> IntArray:
    """Count of fully free GPUs per row."""
    result: IntArray = (gpu_left == MILLI).sum(axis=1)
    return result


class StateCache:
    """Interned node states (model, cpu left, sorted GPU left) and their F_n(M).

    Node i's state id lives in `node_state[i]`; call `update(cluster, i)` after it changes.
    """

    def __init__(self, cluster: GpuCluster, frag: FragModel) -> None:
        self.frag = frag
        self.ids: dict[tuple[int, ...], int] = {}
        self.rows: list[tuple[int, ...]] = []
        self.frag_of: list[float] = []
        keys = [self.key(cluster, node) for node in range(cluster.size)]
        self.node_state = np.array(self.intern_many(keys), dtype=np.int64)

    @staticmethod
    def key(cluster: GpuCluster, node: int) -> tuple[int, ...]:
        left = sorted(int(v) for v in cluster.gpu_left[node, : int(cluster.gpu_count[node])])
        return (int(cluster.gpu_model[node]), int(cluster.cpu_cap[node] - cluster.cpu_used[node]), *left)

    def intern(self, key: tuple[int, ...]) -> int:
        """The state id of `key`, computing its F_n(M) the first time."""
        found = self.ids.get(key)
        return found if found is not None else self.intern_many([key])[0]

    def intern_many(self, keys: Sequence[tuple[int, ...]]) -> list[int]:
        """State ids of `keys`; the new ones' F_n(M) in one vectorised call (rows are independent)."""
        ids = self.ids
        new = [k for k in dict.fromkeys(keys) if k not in ids]
        if new:
            for key, value in zip(new, self.frag_rows(new).tolist(), strict=True):
                ids[key] = len(self.rows)
                self.rows.append(key)
                self.frag_of.append(value)
        return [ids[k] for k in keys]

    def frag_rows(self, keys: Sequence[tuple[int, ...]]) -> FloatArray:
        width = max(1, max(len(k) - 2 for k in keys))
        left = np.zeros((len(keys), width), dtype=np.int64)
        for i, k in enumerate(keys):
            left[i, : len(k) - 2] = k[2:]
        models = np.array([k[0] for k in keys], dtype=np.int64)
        cpu = np.array([k[1] for k in keys], dtype=np.int64)
        return self.frag.frag(models, cpu, left)

    def update(self, cluster: GpuCluster, node: int) -> None:
        """Re-intern one node after a bind or unbind."""
        self.node_state[node] = self.intern(self.key(cluster, node))

    def node_frag(self) -> FloatArray:
        """Current F_n(M) of every node (GPU milli)."""
        frags: FloatArray = np.array(self.frag_of, dtype=np.float64)[self.node_state]
        return frags
