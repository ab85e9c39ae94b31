"""The GPU map's columns: every GPU of a node counted once as used, free, stranded or taken by the waiting pods,
nodes grouped by block and rack."""

from __future__ import annotations

from kubegpu.defrag.after import applied, arriving_gpus
from kubegpu.defrag.plan import make_plan
from kubegpu.defrag.targets import target_for
from kubegpu.live.audit import AuditOptions, audit
from kubegpu.live.gpumap import ARRIVING, FREE, STRANDED, USED, columns
from kubegpu.live.snapshot import load_snapshot
from tests.live.conftest import CLUSTER
from tests.paths import REPO_ROOT


def test_columns_count_every_gpu_once() -> None:
    report = audit(load_snapshot([CLUSTER]))
    cols = columns(report)
    by_name = {n.name: n for n in report.nodes}
    assert len(cols) == len([n for n in report.nodes if n.allocatable > 0])
    for col in cols:
        node = by_name[col.name]
        assert len(col.cells) == node.allocatable
        assert col.cells.count(STRANDED) == node.stranded
        assert col.cells.count(USED) == node.used
        assert col.cells.count(FREE) == node.free - node.stranded
    groups = [c.group for c in cols]
    assert groups == sorted(groups) and "b2 / r3" in groups


def test_after_the_plan_the_waiting_pod_holds_its_node() -> None:
    snap = load_snapshot([REPO_ROOT / "tests" / "fixtures" / "defrag"])
    plan = make_plan(snap, target_for(snap, "ml/train-0"))
    (node,) = {n for _, n in plan.placements}
    after = {c.name: c for c in columns(audit(applied(snap, plan), AuditOptions()), arriving_gpus(plan))}
    assert after[node].cells.count(ARRIVING) == 8 and after[node].cells.count(FREE) == 0
    for e in plan.evictions:
        assert e.to is not None and after[e.to].cells.count(FREE) == 0  # each 2-GPU pod filled a 2-GPU gap
