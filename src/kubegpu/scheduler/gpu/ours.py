"""Our policy: FGD's fragmentation score, with its many ties ranked by the tightest fit.

FGD maps ΔF through int(sigmoid(ΔF/1000)×100), so placements within ~40 milli-GPU of fragment
change tie, and the artifact breaks ties by node name (a fixed, arbitrary order). We rank the
tied nodes instead: a GPU-sharing pod goes where its GPU is left the least (GPU-level best fit, and
inside the node the tightest of FGD's equally scored GPUs), a multi-GPU pod where it uses up the
free GPUs most exactly, a one-GPU pod where the node's (cpu, GPU) leftover is smallest, a CPU-only
pod where the least idle GPU can be stranded. Remaining ties fall back to the framework's tie-break.
"""

from __future__ import annotations

import numpy as np

from kubegpu.scheduler.gpu.policies import MAX_SPEC_CPU, MAX_SPEC_GPU, FGDScore
from kubegpu.scheduler.gpu.state import MILLI, GpuCluster, GpuPod, IntArray

SECONDARY_SCALE = 10_000_000  # room for the tie-break key below one FGD score step


class FragBestFitScore(FGDScore):
    """Lexicographic (FGD score, tightest fit)."""

    name = "ours"

    def score(self, cluster: GpuCluster, pod: GpuPod, nodes: IntArray,
              rng: np.random.Generator) -> IntArray:
        primary = super().score(cluster, pod, nodes, rng)
        gpu_left = cluster.gpu_left_total[nodes]
        if pod.is_share:
            left = cluster.gpu_left[nodes]
            leftover = np.where(left >= pod.gpu_milli, left - pod.gpu_milli, MILLI).min(axis=1)
            secondary = MILLI - np.minimum(leftover, MILLI)
        elif pod.is_gpu and pod.gpu_count > 1:
            spare = np.maximum(cluster.full_free[nodes] - pod.gpu_count, 0)
            rest = (cluster.cpu_left[nodes] - pod.cpu_milli) / MAX_SPEC_CPU
            rest = rest + (gpu_left - pod.total_gpu_milli) / MAX_SPEC_GPU
            fit = np.clip(np.trunc((1.0 - rest / 2) * MILLI), 0, MILLI - 1).astype(np.int64)
            secondary = (8 - np.minimum(spare, 8)) * 1000 + fit
        elif pod.is_gpu:
            rest = (cluster.cpu_left[nodes] - pod.cpu_milli) / MAX_SPEC_CPU
            rest = rest + (gpu_left - pod.total_gpu_milli) / MAX_SPEC_GPU
            secondary = np.clip(np.trunc((1.0 - rest / 2) * MILLI), 0, MILLI - 1).astype(np.int64)
        else:
            secondary = np.clip(np.trunc((1.0 - gpu_left / MAX_SPEC_GPU) * MILLI), 0, MILLI - 1).astype(np.int64)
        out: IntArray = (primary - primary.min()) * SECONDARY_SCALE + secondary
        return out

    def select_gpus(self, cluster: GpuCluster, node: int, pod: GpuPod,
                    rng: np.random.Generator) -> tuple[int, ...]:
        """FGD's GPU choice, with ties between equally scored GPUs going to the tightest one."""
        if not pod.is_share:
            return super().select_gpus(cluster, node, pod, rng)
        _, chosen = self.lookup(cluster, pod, np.array([node], dtype=np.int64))
        left = cluster.gpu_left[node]
        best = min(chosen[0])
        return (int(np.flatnonzero(left == best)[0]),)
