"""The workload adapters: one per kind (and API group), the distributed kinds lint's gang rules run for, and each
kind decided in its adapter's module (not re-tested by name across the code)."""

from __future__ import annotations

import re
from pathlib import Path

from kubegpu.manifests import load_text
from kubegpu.workloads import ADAPTERS, kind_of, shaped_kinds, simulated_kinds
from kubegpu.workloads import core as core_kinds

SRC = Path(__file__).resolve().parents[2] / "src" / "kubegpu"


def test_no_two_adapters_read_one_kind_of_one_group() -> None:
    seen: dict[tuple[str, str | None], int] = {}
    for index, adapter in enumerate(ADAPTERS):
        for kind in adapter.kinds:
            for group in sorted(adapter.groups) if adapter.groups is not None else [None]:
                assert (kind, group) not in seen, (kind, group)
                seen[(kind, group)] = index
    # two adapters share a kind name only by API group (a batch Job and a Volcano Job)
    for kind, _group in seen:
        owners = {i for (k, _g), i in seen.items() if k == kind}
        assert len(owners) == 1 or all(ADAPTERS[i].groups is not None for i in owners), kind


def test_a_job_is_read_by_its_api_group() -> None:
    batch = load_text("j.yaml", "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\n").documents[0]
    volcano = load_text("v.yaml", "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: v}\n").documents[
        0
    ]
    other = load_text("o.yaml", "apiVersion: example.com/v1\nkind: Job\nmetadata: {name: o}\n").documents[0]
    assert kind_of(batch) is core_kinds.JOB
    assert kind_of(volcano) is not None and kind_of(volcano) is not core_kinds.JOB
    assert kind_of(other) is None  # read generically


def test_the_distributed_kinds() -> None:
    """The kinds lint works a gang shape out for (the gang and topology rules report on these only)."""
    assert shaped_kinds() == {
        *("PyTorchJob", "TFJob", "MPIJob", "XGBoostJob", "PaddleJob", "MXJob", "JAXJob"),
        *("Job", "CronJob", "JobSet", "TrainJob", "RayJob", "LeaderWorkerSet", "AppWrapper", "RayCluster"),
        *("RayService", "StatefulSet", "NIMService", "HyperPodPyTorchJob"),
        *("InferenceService", "LLMInferenceService", "DynamoGraphDeployment"),
    }
    assert simulated_kinds() == ("Job", "PyTorchJob", "JobSet", "TrainJob")


def test_a_workload_kind_is_named_in_at_most_three_source_files() -> None:
    """A kind's adapter decides what depends on the kind; at most two other modules (generators that emit it, a
    rule's own table of what an autoscaler scales) name it in code. Kubernetes' own kinds, which generators emit
    and the cluster readers list, are not counted."""
    texts = {path: path.read_text() for path in SRC.rglob("*.py")}
    builtin = {kind for adapter in vars(core_kinds).values() if hasattr(adapter, "kinds") for kind in adapter.kinds}
    for adapter in ADAPTERS:
        for kind in adapter.kinds - builtin:
            quoted = re.compile(rf"[\"']{re.escape(kind)}[\"']")
            files = sorted(str(p.relative_to(SRC)) for p, text in texts.items() if quoted.search(text))
            assert len(files) <= 3, (kind, files)
            assert any(f.startswith("workloads/") for f in files), (kind, files)
