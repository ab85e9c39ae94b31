"""Our policy: never strand GPUs behind exhausted CPU first, then FGD's score, then the tightest fit.

FGD (Weng et al., ATC '23) counts a node's idle GPU as fragment only when a typical pod no longer
fits, and maps ΔF through int(sigmoid(ΔF/1000)×100), so it hardly sees a pod eating the CPU that
the node's idle GPUs will need. We rank candidates lexicographically by (1) how much idle GPU the
placement strands behind the node's remaining CPU, in 100 milli-GPU steps, where a GPU milli needs
the typical GPU pods' mean CPU per GPU milli; (2) FGD's score; (3) the tightest fit: GPU-level best
fit for a sharing pod, exact use of free GPUs for a multi-GPU pod, node-level (cpu, GPU) best fit
for a one-GPU pod, least idle GPU for a CPU-only pod. Remaining ties use the framework's tie-break.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from kubegpu.scheduler.draws import Draws
from kubegpu.scheduler.gpu.fragmentation import FloatArray, TypicalPod
from kubegpu.scheduler.gpu.policies import MAX_SPEC_CPU, MAX_SPEC_GPU, FGDScore
from kubegpu.scheduler.gpu.state import MILLI, GpuCluster, GpuPod, IntArray

STRAND_STEP = 100  # milli-GPU of newly stranded GPU per rank step (plateau 50-250 on openb)
STRAND_STEPS = 1000  # stranding keys are clipped to this many steps
FGD_SCALE = 10_000  # the tightness key is below 10,000
STRAND_SCALE = 1_000 * FGD_SCALE  # FGD scores span at most 100 steps of FGD_SCALE


def cpu_per_gpu_milli(typical: Sequence[TypicalPod]) -> float:
    """Mean milli-CPU per milli-GPU of the typical GPU pods (0 when the workload has none).

    This is the CPU a node must keep per idle GPU milli for the workload's GPU pods to use it.
    """
    cpu = sum(t.probability * t.cpu_milli for t in typical if t.gpu_milli > 0)
    gpu = sum(t.probability * t.gpu_milli * t.gpu_count for t in typical if t.gpu_milli > 0)
    return cpu / gpu if gpu > 0 else 0.0


def stranded_gpu(cpu_left: IntArray, gpu_left: IntArray, ratio: float) -> FloatArray:
    """Idle GPU milli per node that its CPU left cannot serve at `ratio` milli-CPU per GPU milli."""
    if ratio <= 0:
        return np.zeros(len(gpu_left), dtype=np.float64)
    result: FloatArray = np.maximum(0.0, gpu_left - np.maximum(cpu_left, 0) / ratio)
    return result


def tightness(cluster: GpuCluster, pod: GpuPod, nodes: IntArray) -> IntArray:
    """0..9,999, higher for a tighter fit of `pod` on each candidate node (the last ranking key)."""
    gpu_left = cluster.gpu_left_total[nodes]
    if pod.is_share:
        left = cluster.gpu_left[nodes]
        leftover = np.where(left >= pod.gpu_milli, left - pod.gpu_milli, MILLI).min(axis=1)
        share: IntArray = (MILLI - np.minimum(leftover, MILLI)).astype(np.int64)
        return share
    if not pod.is_gpu:
        idle: IntArray = np.clip(np.trunc((1.0 - gpu_left / MAX_SPEC_GPU) * MILLI), 0, MILLI - 1).astype(np.int64)
        return idle
    rest = (cluster.cpu_left[nodes] - pod.cpu_milli) / MAX_SPEC_CPU
    rest = rest + (gpu_left - pod.total_gpu_milli) / MAX_SPEC_GPU
    fit: IntArray = np.clip(np.trunc((1.0 - rest / 2) * MILLI), 0, MILLI - 1).astype(np.int64)
    if pod.gpu_count > 1:
        spare = np.maximum(cluster.full_free[nodes] - pod.gpu_count, 0)
        exact: IntArray = (8 - np.minimum(spare, 8)) * 1000 + fit
        return exact
    return fit


class FragBestFitScore(FGDScore):
    """Lexicographic (least newly stranded GPU, FGD score, tightest fit)."""

    name = "ours"

    def __init__(self, typical: Sequence[TypicalPod]) -> None:
        super().__init__(typical)
        self.cpu_ratio = cpu_per_gpu_milli(self.typical)

    def strand_steps(self, cluster: GpuCluster, pod: GpuPod, nodes: IntArray) -> IntArray:
        """Idle GPU newly stranded behind CPU by placing `pod` on each node, in STRAND_STEP units."""
        cpu_left = cluster.cpu_left[nodes]
        gpu_left = cluster.gpu_left_total[nodes]
        before = stranded_gpu(cpu_left, gpu_left, self.cpu_ratio)
        after = stranded_gpu(cpu_left - pod.cpu_milli, gpu_left - pod.total_gpu_milli, self.cpu_ratio)
        steps: IntArray = np.clip(np.floor((after - before) / STRAND_STEP), 0, STRAND_STEPS).astype(np.int64)
        return steps

    def score(self, cluster: GpuCluster, pod: GpuPod, nodes: IntArray, rng: Draws) -> IntArray:
        primary = super().score(cluster, pod, nodes, rng)
        strand = STRAND_STEPS - self.strand_steps(cluster, pod, nodes)
        out: IntArray = strand * STRAND_SCALE + (primary - primary.min()) * FGD_SCALE + tightness(cluster, pod, nodes)
        return out

    def select_gpus(self, cluster: GpuCluster, node: int, pod: GpuPod, rng: Draws) -> tuple[int, ...]:
        """FGD's GPU choice, with ties between equally scored GPUs going to the tightest one."""
        if not pod.is_share:
            return super().select_gpus(cluster, node, pod, rng)
        left = cluster.gpu_left[node]
        best = min(self.chosen(cluster, node, pod))
        return (int(np.flatnonzero(left == best)[0]),)
