"""Cluster state as numpy arrays over all nodes: CPU, memory, pods and per-GPU milli left, GPU models,
other extended resources, and what keeps pods off a node (cordons, taints, labels).

Follows the Open-Gpu-Share filter of hkust-adsl/kubernetes-scheduler-simulator and the NodeUnschedulable,
TaintToleration, NodeAffinity and NodeResourcesFit filters of kubernetes v1.35, so every node is filtered at
once; kubegpu.scheduler.gpu.filters turns each mask into a filter plugin with kube-scheduler's reasons.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from kubegpu.errors import ModelError
from kubegpu.manifests.pod import Pod as PodModel
from kubegpu.scheduler.arrays import BoolArray as BoolArray
from kubegpu.scheduler.arrays import IntArray as IntArray
from kubegpu.scheduler.constraints import (
    NO_SCHEDULE,
    UNSCHEDULABLE_TAINT_KEY,
    NodeAffinity,
    Taint,
    Toleration,
    affinity_matches,
    selector_matches,
    untolerated_taint,
)
from kubegpu.scheduler.gpu.milli import MILLI as MILLI

if TYPE_CHECKING:
    from kubegpu.scheduler.framework import FilterPlugin

MAX_GPUS_PER_NODE = 8
GPU_RESOURCE = "nvidia.com/gpu"  # the accelerator resource of trace rows and of nodes that name none


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
    # what a pod read from a cluster or a manifest says beyond the trace's columns
    gpu_resource: str = GPU_RESOURCE
    node_selector: tuple[tuple[str, str], ...] = ()
    tolerations: tuple[Toleration, ...] = ()
    node_affinity: NodeAffinity = ()
    scalars: Mapping[str, int] = field(default_factory=dict)  # other extended resources, ephemeral-storage
    priority: int = 0
    preempt_never: bool = False  # preemptionPolicy: Never

    @property
    def constrained(self) -> bool:
        """True when a nodeSelector or required node affinity limits where the pod may run."""
        return bool(self.node_selector or self.node_affinity)

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
    gpu_resource: str = GPU_RESOURCE
    taints: tuple[Taint, ...] = ()
    unschedulable: bool = False  # spec.unschedulable: cordoned
    scalars: Mapping[str, int] = field(default_factory=dict)  # allocatable of other extended resources


_UNSCHEDULABLE_TAINT = Taint(UNSCHEDULABLE_TAINT_KEY, "", NO_SCHEDULE)


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
        # what keeps pods off nodes; the masks below skip all work when no node has any
        self.unschedulable: BoolArray = np.array([s.unschedulable for s in nodes], dtype=np.bool_)
        self.any_unschedulable = bool(self.unschedulable.any())
        groups: dict[tuple[Taint, ...], list[int]] = {}
        for i, spec in enumerate(nodes):
            if spec.taints:
                groups.setdefault(tuple(spec.taints), []).append(i)
        self.taint_groups: dict[tuple[Taint, ...], IntArray] = {
            taints: np.array(members, dtype=np.int64) for taints, members in groups.items()
        }
        self.resource_names: list[str] = sorted({s.gpu_resource for s in nodes if s.gpu_count})
        resource_index = {r: i for i, r in enumerate(self.resource_names)}
        self.gpu_resource: IntArray = np.array([resource_index.get(s.gpu_resource, -1) for s in nodes], dtype=np.int64)
        names = sorted({r for s in nodes for r in s.scalars})
        self.scalar_cap: dict[str, IntArray] = {
            r: np.array([s.scalars.get(r, 0) for s in nodes], dtype=np.int64) for r in names
        }
        self.scalar_used: dict[str, IntArray] = {r: np.zeros(n, dtype=np.int64) for r in names}

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

    def resource_mask(self, pod: GpuPod) -> BoolArray:
        """Nodes with the GPU resource the pod asks for (every GPU node for a pod without one)."""
        if not pod.is_gpu or (len(self.resource_names) == 1 and self.resource_names[0] == pod.gpu_resource):
            return np.ones(self.size, dtype=np.bool_)
        if pod.gpu_resource not in self.resource_names:
            return np.zeros(self.size, dtype=np.bool_)
        same: BoolArray = self.gpu_resource == self.resource_names.index(pod.gpu_resource)
        return same

    def scalars_fit(self, pod: GpuPod) -> BoolArray | None:
        """Nodes with room for the pod's other extended resources (None when it asks for none)."""
        mask: BoolArray | None = None
        for name, amount in pod.scalars.items():
            if amount <= 0:
                continue
            if name in self.scalar_cap:
                fits = self.scalar_cap[name] - self.scalar_used[name] >= amount
            else:
                fits = np.zeros(self.size, dtype=np.bool_)
            mask = fits if mask is None else mask & fits
        return mask

    def fits_resources(self, pod: GpuPod) -> BoolArray:
        """NodeResourcesFit: pod slots, cpu, memory, other extended resources, and whole GPUs of the pod's
        resource (GPU shares are counted by the GPU-share filter, as Open-Gpu-Share does)."""
        mask = self.pods_used < self.pods_cap
        if pod.cpu_milli > 0:  # a resource the pod does not request is not checked (an overcommitted node)
            mask &= self.cpu_cap - self.cpu_used >= pod.cpu_milli
        if pod.memory_bytes > 0:
            mask &= self.mem_cap - self.mem_used >= pod.memory_bytes
        scalars = self.scalars_fit(pod) if pod.scalars else None
        if scalars is not None:
            mask &= scalars
        if pod.is_gpu and pod.gpu_milli >= MILLI:
            mask &= self.full_free >= pod.gpu_count
            if len(self.resource_names) > 1 or pod.gpu_resource not in self.resource_names:
                mask &= self.resource_mask(pod)
        return mask

    def fits_gpus(self, pod: GpuPod) -> BoolArray | None:
        """Open-Gpu-Share: a GPU node of an accepted model with `gpu_count` GPUs holding the pod's share each
        (None for a pod without GPUs)."""
        if not pod.is_gpu:
            return None
        mask: BoolArray = self.gpu_count > 0
        mask &= self.model_mask(pod)
        mask &= self.gpu_fit_mask(pod)
        return mask

    def admits_unschedulable(self, pod: GpuPod) -> BoolArray | None:
        """NodeUnschedulable: uncordoned nodes, or every node for a pod tolerating the cordon's taint (None
        when no node is cordoned)."""
        if not self.any_unschedulable:
            return None
        if any(t.tolerates(_UNSCHEDULABLE_TAINT) for t in pod.tolerations):
            return np.ones(self.size, dtype=np.bool_)
        allowed: BoolArray = ~self.unschedulable
        return allowed

    def tolerated(self, pod: GpuPod) -> BoolArray | None:
        """TaintToleration: nodes whose NoSchedule and NoExecute taints the pod tolerates (None when no node
        has a taint)."""
        if not self.taint_groups:
            return None
        mask = np.ones(self.size, dtype=np.bool_)
        for taints, nodes in self.taint_groups.items():
            if untolerated_taint(taints, pod.tolerations) is not None:
                mask[nodes] = False
        return mask

    def matches_affinity(self, pod: GpuPod) -> BoolArray | None:
        """NodeAffinity: nodes whose labels match the pod's nodeSelector and required node affinity (None for
        a pod with neither)."""
        if not pod.constrained:
            return None
        return np.array(
            [
                selector_matches(pod.node_selector, spec.labels)
                and affinity_matches(pod.node_affinity, spec.labels, spec.name)
                for spec in self.nodes
            ],
            dtype=np.bool_,
        )

    def admits(self, pod: GpuPod) -> BoolArray:
        """Nodes the pod may run on whatever they hold: not cordoned, taints tolerated, labels matched."""
        mask = np.ones(self.size, dtype=np.bool_)
        for part in (self.admits_unschedulable(pod), self.tolerated(pod), self.matches_affinity(pod)):
            if part is not None:
                mask &= part
        return mask

    def feasible(self, pod: GpuPod) -> BoolArray:
        """Filter every node at once: placement constraints, cpu, memory, pod slots and other resources, then
        GPU count, model and share."""
        mask = self.fits_resources(pod)
        gpus = self.fits_gpus(pod)
        if gpus is not None:
            mask &= gpus
        if self.any_unschedulable or self.taint_groups or pod.constrained:
            mask &= self.admits(pod)
        return mask

    def default_filters(self) -> tuple[FilterPlugin[GpuCluster, GpuPod], ...]:
        """kube-scheduler's default Filter plugins over this model, and the GPU-share filter after them."""
        from kubegpu.scheduler.gpu.filters import default_filters  # the plugins read this class: imported here

        return default_filters()

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
        for name, amount in pod.scalars.items():
            if name in self.scalar_used:
                self.scalar_used[name][node] += amount
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
        for name, amount in pod.scalars.items():
            if name in self.scalar_used:
                self.scalar_used[name][node] -= amount
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
