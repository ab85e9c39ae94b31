"""Generated objects pass `kubegpu lint`; patches fix what they target and add no new finding."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kubegpu.generate import (
    computedomain,
    fixes,
    kai,
    kubelet,
    kueue,
    modelcache,
    prepull,
    scheduler,
    volcano,
    workload,
)
from kubegpu.generate.output import Generated, YamlDoc, render_documents
from kubegpu.lint import NodeTarget, lint_text
from kubegpu.topology.presets import load_preset

DATA = Path(__file__).parent / "data"


def _codes(objs: list[Any], name: str, node: str | None = None) -> set[str]:
    text = render_documents([YamlDoc(o) for o in objs])
    target = NodeTarget(None if node is None else load_preset(node))
    return {f.code for f in lint_text(name, text, target=target).findings}


def _job() -> workload.Workload:
    return workload.one_workload(str(DATA / "train-job.yaml"))


def _inference() -> workload.Workload:
    return workload.one_workload(str(DATA / "inference.yaml"))


def _pinned() -> workload.Workload:
    return workload.one_workload(str(DATA / "serve-pinned.yaml"))


STANDALONE: dict[str, Callable[[], Generated]] = {
    "scheduler": lambda: scheduler.generate(scheduler.SchedulerOptions()),
    "scheduler-configmap": lambda: scheduler.generate(scheduler.SchedulerOptions(configmap=True)),
    "kueue": lambda: kueue.generate(kueue.KueueOptions(8, 4, "200", "1800Gi", topology="gke")),
    "volcano": lambda: volcano.generate(volcano.VolcanoOptions(gpus=32)),
    "kai": lambda: kai.generate(kai.KaiOptions(gpus=16)),
    "prepull": lambda: prepull.generate(
        workload.load_workloads([str(DATA / "train-job.yaml"), str(DATA / "mixed.yaml")]),
        prepull.PrepullOptions(),
    ),
    "model-cache-local": lambda: modelcache.generate(
        modelcache.ModelCacheOptions(model="m", source="hf://org/m", size="20Gi")
    ),
    "model-cache-shared": lambda: modelcache.generate(
        modelcache.ModelCacheOptions(model="m", source="s3://bucket-1/m", size="20Gi", mode="shared")
    ),
    "kubelet-dgx-h100": lambda: kubelet.generate(load_preset("dgx-h100"), kubelet.KubeletOptions())[0],
    "kubelet-gb200": lambda: kubelet.generate(load_preset("gb200-nvl72-tray"), kubelet.KubeletOptions())[0],
}


@pytest.mark.parametrize("name", sorted(STANDALONE))
def test_generated_objects_have_no_finding(name: str) -> None:
    result = STANDALONE[name]()
    node = {"kubelet-dgx-h100": "dgx-h100", "kubelet-gb200": "gb200-nvl72-tray"}.get(name)
    assert _codes(result.objects(), f"{name}.yaml", node) == set()


# (what patches the workload, the workload, the finding codes the patch must remove)
PATCHES: dict[str, tuple[Callable[[workload.Workload], Generated], Callable[[], workload.Workload], set[str]]] = {
    "dshm": (
        lambda w: fixes.generate(w, ["dshm"], fixes.FixOptions()).generated,
        _job,
        {"KG201"},
    ),
    "qos": (lambda w: fixes.generate(w, ["qos"], fixes.FixOptions()).generated, _job, {"KG101"}),
    "pull-policy": (
        lambda w: fixes.generate(w, ["pull-policy"], fixes.FixOptions()).generated,
        _pinned,
        {"KG301"},
    ),
    "volcano": (lambda w: volcano.generate(volcano.VolcanoOptions(), w), _job, {"KG501"}),
    "kai": (lambda w: kai.generate(kai.KaiOptions(gpus=32), w), _job, {"KG501"}),
    "computedomain": (
        lambda w: computedomain.generate(w, computedomain.ComputeDomainOptions()),
        _job,
        {"KG601"},
    ),
    "model-cache": (
        lambda w: modelcache.generate(modelcache.ModelCacheOptions(model="m", source="hf://org/m", size="20Gi"), w),
        _inference,
        set(),
    ),
}


@pytest.mark.parametrize("name", sorted(PATCHES))
def test_patches_fix_their_finding_and_add_none(name: str) -> None:
    make, load, fixed = PATCHES[name]
    original = load()
    before = _codes([dict(original.obj)], "before.yaml")
    result = make(original)
    after = _codes([*result.patched], "after.yaml")
    assert fixed <= before, f"the sample should show {fixed - before} before the patch"
    assert not (after & fixed), f"still found {after & fixed}"
    assert after <= before, f"the patch introduced {after - before}"
    assert _codes(result.objects(), "generated.yaml") == set()


def test_all_fixes_leave_only_what_needs_a_decision() -> None:
    result = fixes.generate(_inference(), list(fixes.FIXES), fixes.FixOptions()).generated
    # :latest needs a real tag the user must choose (then IfNotPresent); everything else is fixed
    assert _codes([*result.patched], "after.yaml") <= {"KG301", "KG302"}
    pinned = fixes.generate(_pinned(), list(fixes.FIXES), fixes.FixOptions()).generated
    assert _codes([*pinned.patched], "after.yaml") == set()
