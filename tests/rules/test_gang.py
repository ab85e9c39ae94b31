"""Section 13.5 rules (gang-missing, gang-partial): the YAML case table and the job-shape counting."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubegpu.lint import LintConfig, lint_text
from kubegpu.manifests import ContainerRef, load_text
from kubegpu.manifests.resources import DEFAULT_ACCELERATOR_RESOURCES
from kubegpu.ruleapi import RuleContext
from kubegpu.rules.gang import gang_verdict, job_shape
from kubegpu.workloads.core import _DISTRIBUTED_LAUNCH, _LAUNCH_WORDS, distributed_launch
from tests.rules.kg_cases import case_ids, load_table, run_case

TABLE = load_table("gang.yaml")


@pytest.mark.parametrize("case", TABLE["cases"], ids=case_ids(TABLE))
def test_case(case: dict[str, Any]) -> None:
    run_case(TABLE, case)


def _job(parallelism: int, completions: int | None, scheduler: str | None) -> str:
    lines = ["apiVersion: batch/v1", "kind: Job", "metadata: {name: j}", "spec:", f"  parallelism: {parallelism}"]
    if completions is not None:
        lines.append(f"  completions: {completions}")
    lines += ["  template:", "    spec:"]
    if scheduler:
        lines.append(f"      schedulerName: {scheduler}")
    lines.append("      containers: [{name: c, image: 'x:1.0', resources: {limits: {nvidia.com/gpu: 1}}}]")
    return "\n".join(lines) + "\n"


@given(
    st.integers(0, 64),
    st.one_of(st.none(), st.integers(0, 64)),
    st.sampled_from([None, "default-scheduler", "volcano", "kai-scheduler"]),
)
def test_a_batch_job_needs_a_gang_exactly_when_it_runs_several_pods_at_once(
    parallelism: int, completions: int | None, scheduler: str | None
) -> None:
    text = _job(parallelism, completions, scheduler)
    doc = load_text("j.yaml", text).documents[0]
    ctx = RuleContext(options={}, all_documents=(doc,), accelerator_resources=DEFAULT_ACCELERATOR_RESOURCES)
    shape = job_shape(doc, ctx)
    at_once = min(parallelism, completions) if completions is not None else parallelism
    assert shape is not None and shape.unit_pods == at_once
    # None of these schedulers gangs a plain batch Job (KAI and Volcano give its pods one-member PodGroups).
    assert gang_verdict(shape, ctx).mechanism is None
    fired = [f.name for f in lint_text("j.yaml", text, LintConfig(select=("gang-missing",))).findings]
    assert fired == (["gang-missing"] if at_once > 1 else [])


def test_each_launcher_alternative_contains_a_prefilter_word() -> None:
    """distributed_launch skips the regex when no prefilter word is in the text: every alternative needs one."""
    for alternative in _DISTRIBUTED_LAUNCH.pattern.split("|"):
        literal = re.sub(r"\\b", "", alternative).replace("[-_]", "-").replace("\\.", ".")
        assert any(word in literal for word in _LAUNCH_WORDS), alternative


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["torchrun", "--nnodes=4", "train.py"], "torchrun"),
        (["python", "-m", "torch.distributed.run", "--nproc_per_node", "8"], "torch.distributed"),
        (["sh", "-c", "ray start --address=$HEAD && sleep inf"], "ray start"),
        (["--num_nodes", "2"], "--num_nodes"),
        (["--dist-init-addr", "h:1"], "--dist-init-addr"),
        (["--pipeline_parallel_size", "2"], "--pipeline_parallel_size"),
        (["mpirun", "-np", "8"], "mpirun"),
        (["--model", "m", "--port", "8000"], None),
        (["--nodes", "2", "raystart"], None),  # a prefilter word alone is not a launcher
    ],
)
def test_distributed_launch(args: list[str], expected: str | None) -> None:
    assert distributed_launch(ContainerRef(("spec",), {"args": args}, "container")) == expected
    env = ContainerRef(("spec",), {"env": [{"name": "MASTER_ADDR", "value": "h"}]}, "container")
    assert distributed_launch(env) == "MASTER_ADDR"
