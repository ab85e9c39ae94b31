"""Pod completions per second on a kubelet-modelled node: NodeState.release against the replay it replaced.

Baseline: what the simulator did before a node could release a pod: rebuild the node from a copy of the
empty state and re-admit every remaining pod. Ours: NodeState.release. Both handle the same churn (a
DGX H100 kept full of mixed 1-4 GPU pods; the oldest pod completes, the next one arrives) in one run.
"""

from __future__ import annotations

import random
import time
from collections import deque

from bench_admit import CONFIG  # the same node configuration as the admission benchmark (bench/ is on sys.path)
from kubegpu.kubelet import KubeletConfig, NodeState, PodRequest
from kubegpu.topology.presets import load_node

COMPLETIONS = 400


def _pods(n: int) -> list[PodRequest]:
    rng = random.Random(11)
    pods = []
    for i in range(n):
        gpus = rng.choice([1, 1, 2, 4])
        limits = {"cpu": str(gpus * rng.choice([2, 4, 8])), "memory": f"{16 * gpus}Gi", "nvidia.com/gpu": gpus}
        spec = {"containers": [{"name": "m", "resources": {"limits": limits}}]}
        pods.append(PodRequest.from_pod_spec(f"pod-{i}", spec))
    return pods


def _churn(empty: NodeState, pods: list[PodRequest], release: bool) -> tuple[float, int]:
    state = empty.copy()
    running: deque[tuple[str, PodRequest]] = deque()
    done = 0
    arrivals = iter(pods)
    start = time.perf_counter()
    while done < COMPLETIONS:
        pod = next(arrivals)
        while True:
            result = state.admit(pod)
            if result.admitted:
                running.append((result.pod_key, pod))
                break
            key, _ = running.popleft()  # the oldest pod completes
            done += 1
            if release:
                state.release(key)
            else:
                state = empty.copy()
                for _, other in running:
                    state.admit(other)
    return time.perf_counter() - start, done


def main() -> None:
    empty = NodeState(load_node("dgx-h100"), KubeletConfig.from_dict(CONFIG, source="bench"))
    pods = _pods(20 * COMPLETIONS)
    replay, _ = _churn(empty, pods, release=False)
    ours, done = _churn(empty, pods, release=True)
    print(f"release: {done} completions on a full dgx-h100 (restricted, pod scope), mixed 1-4 GPU pods")
    print(f"  baseline (replay the remaining pods) : {done / replay:9,.0f} completions/s ({replay:.2f} s)")
    print(f"  kubegpu NodeState.release            : {done / ours:9,.0f} completions/s ({ours:.2f} s)")
    print(f"  ratio                                : {replay / ours:9.2f}x")


if __name__ == "__main__":
    main()
