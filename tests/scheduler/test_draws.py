"""The random choices of the FGD study's random policy, draw by draw, as the artifact's Go code makes them."""

from __future__ import annotations

import numpy as np

from kubegpu.scheduler.draws import NumpyDraws
from kubegpu.scheduler.framework import Framework, Weighted
from kubegpu.scheduler.gpu.policies import RandomScore
from kubegpu.scheduler.gpu.state import GpuCluster, GpuPod, NodeSpec


class Scripted:
    """Draws that return given values and record each bound asked for."""

    def __init__(self, values: list[int]) -> None:
        self.values = list(values)
        self.asked: list[int] = []

    def intn(self, n: int) -> int:
        self.asked.append(n)
        return self.values.pop(0)


def _cluster() -> GpuCluster:
    return GpuCluster([NodeSpec(f"n{i}", 64000, 2**38, 4, "V100") for i in range(3)])


def test_random_gpu_is_a_reservoir_over_the_fitting_gpus_in_index_order() -> None:
    # allocateGpuIdBasedOnRandomFit: rand.Intn(1), Intn(2), Intn(3) for the three GPUs that fit;
    # a draw of 0 takes the GPU, so the last 0 wins
    cluster = _cluster()
    cluster.gpu_left[0] = [1000, 300, 1000, 800]
    draws = Scripted([0, 1, 0])
    gpus = RandomScore().select_gpus(cluster, 0, GpuPod("p", 1000, 0, 1, 500), draws)
    assert gpus == (3,)
    assert draws.asked == [1, 2, 3]


def test_whole_gpus_are_the_first_free_ones_without_a_draw() -> None:
    cluster = _cluster()
    draws = Scripted([])
    assert RandomScore().select_gpus(cluster, 1, GpuPod("p", 1000, 0, 2, 1000), draws) == (0, 1)
    assert draws.asked == []


def test_random_score_draws_once_over_the_feasible_nodes_in_order() -> None:
    # random_score.go PreScore: rand.Intn(len(feasible)), the drawn node scores 100, the others 0
    cluster = _cluster()
    draws = Scripted([2])
    framework = Framework([Weighted(RandomScore(), 1000)], tie_break="lowest-name", draws=draws)
    assert framework.schedule(cluster, GpuPod("p", 1000, 0, 1, 1000)) == 2
    assert draws.asked == [3]


def test_a_single_feasible_node_is_taken_without_scoring() -> None:
    # generic_scheduler.go Schedule returns the only feasible node before PreScore: no draw
    cluster = _cluster()
    cluster.cpu_used[:2] = 64000
    draws = Scripted([])
    framework = Framework([Weighted(RandomScore(), 1000)], draws=draws)
    assert framework.schedule(cluster, GpuPod("p", 1000)) == 2
    assert draws.asked == []


def test_numpy_draws_keep_the_generators_stream() -> None:
    expected = np.random.default_rng(7).integers(10, size=None)
    assert NumpyDraws(7).intn(10) == int(expected)
