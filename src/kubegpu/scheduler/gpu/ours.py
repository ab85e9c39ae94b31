"""Our policy: FGD's fragmentation score, with ties broken by the tightest fit instead of node order.

FGD maps ΔF through int(sigmoid(ΔF/1000)×100), so many placements tie (every CPU-only pod that
strands nothing scores 50 everywhere). We keep that score and rank ties by best fit on (cpu, GPU).
"""

from __future__ import annotations

import numpy as np

from kubegpu.scheduler.gpu.policies import MAX_SPEC_CPU, MAX_SPEC_GPU, FGDScore
from kubegpu.scheduler.gpu.state import GpuCluster, GpuPod, IntArray

SECONDARY_SCALE = 1000  # best-fit resolution inside one FGD score step


class FragBestFitScore(FGDScore):
    """Lexicographic (FGD score, best fit): fragmentation first, then the node left tightest."""

    name = "ours"

    def score(self, cluster: GpuCluster, pod: GpuPod, nodes: IntArray,
              rng: np.random.Generator) -> IntArray:
        primary = super().score(cluster, pod, nodes, rng)
        gpu_left = cluster.gpu_left_total[nodes]
        if pod.is_gpu:
            leftover = (cluster.cpu_left[nodes] - pod.cpu_milli) / MAX_SPEC_CPU
            leftover = leftover + (gpu_left - pod.total_gpu_milli) / MAX_SPEC_GPU
            value = 1.0 - leftover / 2
        else:  # a CPU-only pod strands least where little GPU is left to strand
            value = 1.0 - gpu_left / MAX_SPEC_GPU
        secondary = np.clip(np.trunc(value * SECONDARY_SCALE), 0, SECONDARY_SCALE - 1)
        out: IntArray = primary * SECONDARY_SCALE + secondary.astype(np.int64)
        return out
