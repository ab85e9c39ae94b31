"""The packing bounds of the FGD metric hold: on random small clusters and traces the bound for any placement
is at least the exact optimum of the arrived pods and at least what every policy allocates on the same
arrivals, at every column; on the shipped openb trace both bounds are above every published and measured
allocation (tests/sim/test_certified.py holds the greedy bound to every greedy scheduler)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from kubegpu.cli.main import app
from kubegpu.scheduler.gpu.registry import ALL_POLICIES
from kubegpu.scheduler.gpu.state import GpuPod, NodeSpec
from kubegpu.sim.bound import bound_curve, column_events, pod_key, summarize_bounds, trace_problem
from kubegpu.sim.discrete import discretize
from kubegpu.sim.experiment import run_policy, seeded_stream, tune_workload
from kubegpu.sim.published import read_published
from kubegpu.sim.traces.openb import BUNDLED_DIR, node_list, published_file, read_nodes, read_pods, variant_files
from tests.packing.brute import optimum
from tests.paths import REPO_ROOT

MODELS = ("A", "B")
runner = CliRunner()


@st.composite
def clusters(draw: st.DrawFn) -> list[NodeSpec]:
    size = draw(st.integers(1, 2))
    return [
        NodeSpec(
            f"n{i}",
            draw(st.sampled_from([4000, 8000, 16000])),
            draw(st.sampled_from([16, 32])) * 2**30,
            draw(st.sampled_from([1, 2])),
            draw(st.sampled_from(MODELS)),
            max_pods=draw(st.sampled_from([3, 110])),
        )
        for i in range(size)
    ]


@st.composite
def traces(draw: st.DrawFn) -> list[GpuPod]:
    pods = []
    for i in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["share", "whole", "cpu"]))
        if i == 0 and kind == "cpu":  # the arrivals grow until GPU requests reach 130 %: one GPU pod at least
            kind = "whole"
        count, milli = {"share": (1, draw(st.sampled_from([400, 500, 700]))), "whole": (1, 1000), "cpu": (0, 0)}[kind]
        if kind == "whole" and draw(st.booleans()):
            count = 2
        pods.append(
            GpuPod(
                f"p{i}",
                draw(st.sampled_from([1000, 3000, 6000])),
                draw(st.sampled_from([1, 8])) * 2**30,
                count,
                milli,
                draw(st.sampled_from([(), ("A",), ("B",)])) if count else (),
            )
        )
    return pods


@settings(max_examples=25)
@given(clusters(), traces(), st.integers(0, 10_000))
def test_bound_is_above_every_policy_and_the_exact_optimum(
    nodes: list[NodeSpec], trace: list[GpuPod], seed: int
) -> None:
    curve = bound_curve(nodes, trace, seed)
    for policy in ALL_POLICIES:
        result = run_policy(nodes, trace, policy, seed)
        assert set(result.discrete) == set(curve.discrete)
        for k, value in result.discrete.items():
            assert value <= curve.discrete[k], (policy, k, value, curve.discrete[k])
    # at its last column, the bound is at least the best any placement of the pods arrived by then reaches
    if not curve.discrete:
        return
    tp = trace_problem(nodes, trace)
    arrived = tune_workload(trace, tp.capacity_milli, 1.3, seeded_stream(seed))
    top = max(curve.discrete)
    last = column_events(np.cumsum([p.total_gpu_milli for p in arrived]).tolist(), tp.capacity_milli, 130)[top]
    counts = [0] * len(tp.problem.types)
    for pod in arrived[: last + 1]:
        if pod.is_gpu:
            counts[tp.type_of[pod_key(pod)]] += 1
    best = optimum(tp.problem, counts)
    assert curve.discrete[top] >= round(100 * best / tp.capacity_milli, 2)


@settings(max_examples=100)
@given(st.lists(st.integers(0, 400), min_size=1, max_size=60), st.integers(0, 2**32 - 1))
def test_a_column_never_averages_an_event_after_its_last(steps: list[int], seed: int) -> None:
    capacity = 5000
    arrived = np.cumsum(steps).tolist()
    alloc = np.minimum(np.cumsum(np.random.default_rng(seed).integers(0, 2, len(steps)) * steps), capacity)
    metric = discretize(arrived, alloc.tolist(), capacity // 1000, 130)
    events = column_events(arrived, capacity, 130)
    assert set(metric) == set(events)
    for k, value in metric.items():
        assert value <= round(int(alloc[events[k]]) / (capacity // 1000) / 10, 2)


@pytest.fixture(scope="module")
def default_curve() -> tuple[list[NodeSpec], list[GpuPod], object]:
    nodes = read_nodes(node_list(BUNDLED_DIR))
    pods = read_pods(variant_files(BUNDLED_DIR)["default"])
    return nodes, pods, bound_curve(nodes, pods, 42, workload="default")


def test_openb_bound_is_above_every_published_allocation(default_curve: tuple) -> None:  # type: ignore[type-arg]
    _, _, curve = default_curve
    summary = summarize_bounds([curve])["default"]
    assert 99.0 < summary.mean <= 100.0
    source = published_file(BUNDLED_DIR)
    assert source is not None
    published = read_published(source)
    for column in (60, 90, 95, 100, 105, 110, 120, 130):
        for policy in ("random", "dotprod", "clustering", "packing", "bestfit", "fgd"):
            mean = published.mean("default", policy, column)
            assert mean is not None and mean <= curve.discrete[column], (policy, column, mean)


def test_openb_bounds_are_above_measured_runs_at_every_column(default_curve: tuple) -> None:  # type: ignore[type-arg]
    nodes, pods, curve = default_curve
    assert set(curve.greedy) == set(curve.discrete)
    assert all(curve.greedy[k] <= curve.discrete[k] for k in curve.discrete)
    for policy in ("fgd", "ours"):
        result = run_policy(nodes, pods, policy, 42, workload="default")
        assert set(result.discrete) == set(curve.discrete)
        assert all(value <= curve.greedy[k] for k, value in result.discrete.items()), policy
        # the offline bound is well above what FGD allocates once the cluster is full; the greedy one is
        # nearer, as it keeps the 810 milli-GPU pods that every greedy scheduler places early on
        assert curve.discrete[130] - result.discrete[130] > 2.0
        assert 0.5 < curve.greedy[130] - result.discrete[130] < curve.discrete[130] - result.discrete[130] - 1.0
    assert curve.certified > 3000


def test_fgd_repro_prints_the_bound_beside_every_policy(tmp_path: Path) -> None:
    plot = tmp_path / "alloc.png"
    report = tmp_path / "report.md"
    args = ["simulate", "fgd-repro", "--policy", "bestfit", "--seeds", "42", "--workers", "1", "--bound"]
    result = runner.invoke(app, [*args, "-o", "json", "--plot", str(plot), "--report", str(report)])
    assert result.exit_code == 0, result.output
    (row,) = json.loads(result.output)
    assert 99.0 < row["bound_mean"] <= 100.0
    assert row["gap_to_bound"] == pytest.approx(row["bound_mean"] - row["gpu_alloc_ratio_mean"], abs=0.002)
    assert row["gpu_alloc_ratio_mean"] < row["greedy_bound_mean"] < row["bound_mean"] - 1.0
    assert row["gap_to_greedy_bound"] == pytest.approx(
        row["greedy_bound_mean"] - row["gpu_alloc_ratio_mean"], abs=0.002
    )
    assert plot.stat().st_size > 1000
    assert "| bound | gap to bound | greedy bound | gap to greedy bound |" in report.read_text()
    csv_out = runner.invoke(app, [*args, "-o", "csv"])
    header, line = csv_out.output.strip().splitlines()[:2]
    assert header.endswith(",bound_mean,gap_to_bound,greedy_bound_mean,gap_to_greedy_bound")
    assert line.startswith("default,bestfit,42")
    # at 60 % arrival every pod that arrived fits: both bounds are the GPU arrived, side by side in the table
    text = runner.invoke(app, [*args, "--arrival", "0.6"])
    assert text.exit_code == 0 and "greedy" in text.output, text.output
    cells = next(line for line in text.output.splitlines() if "bestfit" in line).split("│")
    assert cells[-5].strip() == cells[-3].strip() and 59.0 < float(cells[-5]) <= 60.0, cells


def test_snapshot_what_if_prints_the_repacking_bound() -> None:
    cluster = REPO_ROOT / "tests" / "fixtures" / "cluster"
    args = ["simulate", "--snapshot", str(cluster / "nodes.json"), "--snapshot", str(cluster / "pods.json")]
    args += ["--snapshot", str(cluster / "kueue-workloads.json"), "--policy", "fgd", "--bound"]
    result = runner.invoke(app, [*args, "-o", "json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)[0]["bound_placeable_pending_gpus"] == 4
    text = runner.invoke(app, args)
    assert "could place at most 4 of the 16 pending GPUs" in text.output


def test_bound_in_events_mode_is_refused_in_one_line() -> None:
    spec = REPO_ROOT / "tests" / "sim" / "data" / "cluster-small.yaml"
    result = runner.invoke(app, ["simulate", "--nodes", str(spec), "--synthetic", "5", "--bound"])
    assert result.exit_code == 2 and "--bound needs static mode" in result.output
