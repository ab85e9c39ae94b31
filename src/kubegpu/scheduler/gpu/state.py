"""Cluster state as numpy arrays over all nodes: CPU, memory, pods and per-GPU milli left, GPU models.

Follows the Open-Gpu-Share filter of hkust-adsl/kubernetes-scheduler-simulator and the
NodeResourcesFit filter of kubernetes v1.35 (cpu, memory, pods), so every node is filtered at once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from kubegpu.errors import ModelError
from kubegpu.manifests.pod import Pod as PodModel

MILLI = 1000
MAX_GPUS_PER_NODE = 8
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


@dataclass(frozen=True)
class GpuPod:
    """One pod as the GPU simulator sees it: requests, GPU share and allowed GPU models.

    `gpu_milli` is per GPU (1000 = a whole GPU); `gpu_models` empty means any model; `spec` is the pod model
    of a pod read from a manifest (None for trace rows), which kubelet admission reads.
    """

    name: str
    cpu_milli: int
    memory_bytes: int = 0
    gpu_count: int = 0
    gpu_milli: int = 0
    gpu_models: tuple[str, ...] = ()
    group: str = ""
    duration: float | None = None
    arrival: float = 0.0
    labels: Mapping[str, str] = field(default_factory=dict)
    spec: PodModel | None = field(default=None, compare=False, repr=False)  # the real pod, when known

    @property
    def total_gpu_milli(self) -> int:
        """The pod's whole GPU request in milli-GPU."""
        return self.gpu_count * self.gpu_milli

    @property
    def is_gpu(self) -> bool:
        """True when the pod asks for any GPU."""
        return self.gpu_milli > 0 and self.gpu_count > 0

    @property
    def is_share(self) -> bool:
        """True for a GPU-sharing pod (one GPU, less than a whole one)."""
        return self.gpu_count == 1 and self.gpu_milli < MILLI

    @property
    def shape(self) -> tuple[int, int, int, str]:
        """The (cpu, per-GPU milli, GPU count, model constraint) key used by typical pods."""
        return (self.cpu_milli, self.gpu_milli, self.gpu_count, "|".join(self.gpu_models))

    @property
    def affinity(self) -> str:
        """The GPU Clustering class: no-gpu, share-gpu or N-gpu."""
        if not self.is_gpu:
            return "no-gpu"
        if self.is_share:
            return "share-gpu"
        return f"{self.gpu_count}-gpu"


@dataclass(frozen=True)
class NodeSpec:
    """One node's capacity: CPU, memory, pod slots, GPUs and GPU model, plus labels (block/rack)."""

    name: str
    cpu_milli: int
    memory_bytes: int
    gpu_count: int = 0
    gpu_model: str = ""
    max_pods: int = 110
    labels: Mapping[str, str] = field(default_factory=dict)


class GpuCluster:
    """Mutable simulator state of a whole cluster, one numpy row per node.

    Only `bind`/`unbind` change it, so invariants (nothing over-allocated) hold by construction.
    """

    def __init__(self, nodes: Sequence[NodeSpec]) -> None:
        if not nodes:
            raise ModelError("a cluster needs at least one node")
        self.nodes = tuple(nodes)
        n = len(nodes)
        self.names = [spec.name for spec in nodes]
        self.cpu_cap: IntArray = np.array([s.cpu_milli for s in nodes], dtype=np.int64)
        self.mem_cap: IntArray = np.array([s.memory_bytes for s in nodes], dtype=np.int64)
        self.pods_cap: IntArray = np.array([s.max_pods for s in nodes], dtype=np.int64)
        self.gpu_count: IntArray = np.array([s.gpu_count for s in nodes], dtype=np.int64)
        width = max(1, int(self.gpu_count.max()))
        if width > MAX_GPUS_PER_NODE * 4:
            raise ModelError(f"a node with {width} GPUs is beyond the model")
        self.gpu_cap: IntArray = np.zeros((n, width), dtype=np.int64)
        for i, spec in enumerate(nodes):
            self.gpu_cap[i, : spec.gpu_count] = MILLI
        models = sorted({s.gpu_model for s in nodes if s.gpu_model})
        self.model_names: list[str] = ["", *models]
        index = {m: i for i, m in enumerate(self.model_names)}
        self.gpu_model: IntArray = np.array([index[s.gpu_model] for s in nodes], dtype=np.int64)
        self.cpu_used: IntArray = np.zeros(n, dtype=np.int64)
        self.mem_used: IntArray = np.zeros(n, dtype=np.int64)
        self.pods_used: IntArray = np.zeros(n, dtype=np.int64)
        self.gpu_left: IntArray = self.gpu_cap.copy()
        # per-node summaries kept in step with gpu_left by bind/unbind (filters read them)
        self.full_free: IntArray = (self.gpu_left == MILLI).sum(axis=1).astype(np.int64)
        self.max_left: IntArray = self.gpu_left.max(axis=1).astype(np.int64)
        self.left_sum: IntArray = self.gpu_left.sum(axis=1).astype(np.int64)
        self.cap_sum: IntArray = self.gpu_cap.sum(axis=1).astype(np.int64)
        self.affinity_counts: dict[str, IntArray] = {}
        self.total_gpu_milli = int(self.gpu_cap.sum())

    @property
    def size(self) -> int:
        """Number of nodes."""
        return len(self.names)

    @property
    def cpu_left(self) -> IntArray:
        """Milli-CPU not yet requested, per node."""
        return self.cpu_cap - self.cpu_used

    @property
    def gpu_left_total(self) -> IntArray:
        """Milli-GPU left per node."""
        return self.left_sum

    @property
    def allocated_gpu_milli(self) -> int:
        """Milli-GPU allocated over the whole cluster."""
        return self.total_gpu_milli - int(self.gpu_left.sum())

    def model_mask(self, pod: GpuPod) -> BoolArray:
        """Nodes whose GPU model the pod accepts (CPU nodes never match a constrained pod)."""
        if not pod.gpu_models:
            return np.ones(self.size, dtype=np.bool_)
        wanted = [self.model_names.index(m) for m in pod.gpu_models if m in self.model_names[1:]]
        return np.isin(self.gpu_model, np.array(wanted, dtype=np.int64))

    def gpu_fit_mask(self, pod: GpuPod) -> BoolArray:
        """Nodes with at least `gpu_count` GPUs holding `gpu_milli` or more each."""
        if pod.gpu_count == 1:
            one: BoolArray = self.max_left >= pod.gpu_milli
            return one
        if pod.gpu_milli == MILLI:
            whole: BoolArray = self.full_free >= pod.gpu_count
            return whole
        mask: BoolArray = (self.gpu_left >= pod.gpu_milli).sum(axis=1) >= pod.gpu_count
        return mask

    def feasible(self, pod: GpuPod) -> BoolArray:
        """Filter every node at once: cpu, memory and pod slots, then GPU count, model and share."""
        mask = self.cpu_cap - self.cpu_used >= pod.cpu_milli
        mask &= self.mem_cap - self.mem_used >= pod.memory_bytes
        mask &= self.pods_used < self.pods_cap
        if pod.is_gpu:
            mask &= self.gpu_count > 0
            mask &= self.model_mask(pod)
            mask &= self.gpu_fit_mask(pod)
        return mask

    def bind(self, node: int, pod: GpuPod, gpus: Sequence[int]) -> None:
        """Place a pod on a node and the given GPU indices; ModelError if it would over-allocate."""
        if pod.is_gpu and len(gpus) != pod.gpu_count:
            raise ModelError(f"pod {pod.name} needs {pod.gpu_count} GPUs, got {len(gpus)}")
        if self.cpu_used[node] + pod.cpu_milli > self.cpu_cap[node]:
            raise ModelError(f"pod {pod.name} over-allocates CPU on {self.names[node]}")
        if self.mem_used[node] + pod.memory_bytes > self.mem_cap[node]:
            raise ModelError(f"pod {pod.name} over-allocates memory on {self.names[node]}")
        for g in gpus:
            if self.gpu_left[node, g] < pod.gpu_milli or g >= self.gpu_count[node]:
                raise ModelError(f"pod {pod.name} over-allocates GPU {g} on {self.names[node]}")
        if len(set(gpus)) != len(gpus):
            raise ModelError(f"pod {pod.name} was given the same GPU twice")
        self.cpu_used[node] += pod.cpu_milli
        self.mem_used[node] += pod.memory_bytes
        self.pods_used[node] += 1
        for g in gpus:
            self.gpu_left[node, g] -= pod.gpu_milli
        if pod.is_gpu:
            counts = self.affinity_counts.setdefault(pod.affinity, np.zeros(self.size, dtype=np.int64))
            counts[node] += 1
            self._summarize(node)

    def unbind(self, node: int, pod: GpuPod, gpus: Sequence[int]) -> None:
        """Release what `bind` took (pod completion or a gang rolled back)."""
        self.cpu_used[node] -= pod.cpu_milli
        self.mem_used[node] -= pod.memory_bytes
        self.pods_used[node] -= 1
        for g in gpus:
            self.gpu_left[node, g] += pod.gpu_milli
        if pod.is_gpu:
            self.affinity_counts[pod.affinity][node] -= 1
            self._summarize(node)

    def _summarize(self, node: int) -> None:
        row = self.gpu_left[node]
        self.full_free[node] = int((row == MILLI).sum())
        self.max_left[node] = int(row.max())
        self.left_sum[node] = int(row.sum())

    def affinity_classes_on(self) -> IntArray:
        """Number of distinct GPU affinity classes present on each node."""
        out = np.zeros(self.size, dtype=np.int64)
        for counts in self.affinity_counts.values():
            out += counts > 0
        return out

    def check_invariants(self) -> None:
        """Raise ModelError if any node is over-allocated (used for property tests)."""
        if (self.cpu_used > self.cpu_cap).any() or (self.mem_used > self.mem_cap).any():
            raise ModelError("a node is over-allocated on CPU or memory")
        if (self.gpu_left < 0).any() or (self.gpu_left > self.gpu_cap).any():
            raise ModelError("a GPU is over-allocated")
        if (self.pods_used > self.pods_cap).any():
            raise ModelError("a node holds more pods than it allows")
