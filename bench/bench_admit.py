"""Admissions per second of the kubelet model: mixed GPU pods on a DGX H100, restricted, pod scope.

Baseline is the target rate (5,000 admissions/s); ours is measured in one run; ratio = ours/target.
The node is reset (a copy of the empty state) whenever a pod is rejected, i.e. when it is full.
"""

from __future__ import annotations

import random
import time

from kubegpu.kubelet import KubeletConfig, NodeState, PodRequest
from kubegpu.topology.presets import load_node

TARGET_PER_SECOND = 5_000
ADMISSIONS = 20_000

CONFIG = {
    "cpuManagerPolicy": "static",
    "memoryManagerPolicy": "Static",
    "topologyManagerPolicy": "restricted",
    "topologyManagerScope": "pod",
    "reservedSystemCPUs": "0-1,112-113",
    "kubeReserved": {"memory": "2Gi"},
    "systemReserved": {"memory": "2Gi"},
    "reservedMemory": [
        {"numaNode": 0, "limits": {"memory": "2098Mi"}},
        {"numaNode": 1, "limits": {"memory": "2098Mi"}},
    ],
}


def _pods(n: int) -> list[PodRequest]:
    rng = random.Random(7)
    pods = []
    for i in range(n):
        gpus = rng.choice([1, 1, 2, 2, 4, 4, 8])
        cpus = gpus * rng.choice([2, 4, 8, 12])
        limits = {"cpu": str(cpus), "memory": f"{16 * gpus}Gi", "nvidia.com/gpu": gpus}
        spec = {"containers": [{"name": "main", "resources": {"limits": limits}}]}
        pods.append(PodRequest.from_pod_spec(f"pod-{i}", spec))
    return pods


def main() -> None:
    empty = NodeState(load_node("dgx-h100"), KubeletConfig.from_dict(CONFIG, source="bench"))
    pods = _pods(ADMISSIONS)
    state = empty.copy()
    admitted = resets = 0
    start = time.perf_counter()
    cpu_start = time.process_time()
    for pod in pods:
        result = state.admit(pod)
        if result.admitted:
            admitted += 1
        else:
            resets += 1
            state = empty.copy()
    elapsed = time.perf_counter() - start
    cpu = time.process_time() - cpu_start
    rate = ADMISSIONS / elapsed
    print(f"admit: {ADMISSIONS} mixed 1-8 GPU pods on dgx-h100 (restricted, pod scope)")
    print(f"  baseline (target)     : {TARGET_PER_SECOND:9,.0f} admissions/s")
    print(
        f"  kubegpu kubelet model : {rate:9,.0f} admissions/s  ({admitted} admitted, "
        f"{resets} rejections -> node reset, {elapsed:.2f} s)"
    )
    print(f"  ratio                 : {rate / TARGET_PER_SECOND:9.2f}x")
    print(
        f"  per CPU-second        : {ADMISSIONS / cpu:9,.0f} admissions/s of process CPU time "
        "(less sensitive to other load on the machine)"
    )


if __name__ == "__main__":
    main()
