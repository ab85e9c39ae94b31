"""Event-mode runs as typed objects: the plan's matrix, the workload's jobs and the report layer's output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kubegpu.errors import InputError
from kubegpu.report.simulation import Format, events_report, events_text
from kubegpu.scheduler.gang import GangMode
from kubegpu.sim.cluster_spec import load_cluster_spec
from kubegpu.sim.events import Cluster, EventsPlan, SyntheticJobs, Workload, gang_modes, run_events

SPEC = Path(__file__).parent / "data" / "cluster-small.yaml"


def test_a_workload_needs_jobs() -> None:
    with pytest.raises(InputError, match="give --pods or --synthetic N"):
        Workload()


def test_gang_modes() -> None:
    assert gang_modes("both") == (GangMode.ALL_OR_NOTHING, GangMode.POD_BY_POD)
    assert gang_modes("pod-by-pod") == (GangMode.POD_BY_POD,)
    with pytest.raises(InputError, match="--gang"):
        gang_modes("some")


def test_runs_follow_the_plan_and_render() -> None:
    spec = load_cluster_spec(SPEC)
    plan = EventsPlan(
        Cluster(tuple(spec.nodes), tuple(spec.profiles), spec.levels),
        Workload(synthetic=SyntheticJobs(12, 60.0, (1, 2), (1, 2), 1.0)),
        ("k8s-default", "most-allocated"),
        (1, 2),
        gang_modes("both"),
    )
    done: list[int] = []
    runs = run_events(plan, on_done=lambda: done.append(1))
    assert len(runs) == len(done) == 8
    assert [r.label for r in runs[:2]] == ["k8s-default/all-or-nothing/1", "k8s-default/pod-by-pod/1"]
    assert all(r.summary["jobs"] == 12 and len(r.times) == len(r.allocation_pct) for r in runs)
    rows = json.loads(str(events_text(runs, Format.json)))
    assert [(r["policy"], r["gang"], r["seed"]) for r in rows] == [
        (c.policy, c.gang.value, c.seed) for c in plan.configs()
    ]
    assert str(events_text(runs, Format.markdown)).startswith("| policy | gang | seed |")
    assert events_report(runs).startswith("# kubegpu simulate (events)")
