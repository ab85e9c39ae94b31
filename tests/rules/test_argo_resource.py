"""Objects an Argo resource template creates from its manifest text: the case table, and how they are counted."""

from __future__ import annotations

from typing import Any

import pytest

from kubegpu.lint import LintConfig, lint_text
from kubegpu.manifests import load_text
from kubegpu.manifests.embedded import embedded
from tests.rules.kg_cases import case_ids, load_table, run_case

TABLE = load_table("argo_resource.yaml")


@pytest.mark.parametrize("case", TABLE["cases"], ids=case_ids(TABLE))
def test_case(case: dict[str, Any]) -> None:
    run_case(TABLE, case)


_WORKFLOW = """\
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  name: wf
spec:
  templates:
  - name: make
    resource:
      action: create
      manifest: |
{body}"""


def _workflow(body: str) -> str:
    return _WORKFLOW.replace("{body}", "".join(f"        {line}\n" for line in body.splitlines()))


def test_created_objects_count_as_objects_of_the_input() -> None:
    text = _workflow(
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n  template:\n    spec:\n"
        "      containers: [{name: c, image: 'x:1.0', resources: {limits: {nvidia.com/gpu: 1}}}]"
    )
    result = lint_text("wf.yaml", text, LintConfig(select=("KG101",)))
    assert result.documents == 2  # the workflow and the Job it creates
    assert result.gpu_templates == 1
    assert ("wf.yaml", "Job", "j") in result.checked


def test_a_manifest_that_is_not_yaml_is_counted_as_not_checked() -> None:
    text = _workflow("apiVersion: batch/v1\nkind: Job\nspec: {template: [unclosed")
    result = lint_text("wf.yaml", text, LintConfig())
    assert [s.kind for s in result.skipped] == ["object"]
    assert "step 'make'" in result.skipped[0].reason and "not checked" in result.skipped[0].reason
    assert not result.unreadable  # the workflow file itself is readable


def test_a_created_custom_kind_is_read_generically_and_says_both() -> None:
    text = _workflow(
        "apiVersion: example.com/v1\nkind: Trainer\nmetadata: {name: t}\nspec:\n  podSpec:\n"
        "    containers: [{name: c, image: 'x:1.0', resources: {limits: {nvidia.com/gpu: 1}}}]"
    )
    result = lint_text("wf.yaml", text, LintConfig(select=("KG101",)))
    assert result.generic == 1
    (finding,) = result.findings
    assert "found by a generic search" in finding.message and "step 'make'" in finding.message


def test_objects_are_read_once_per_workflow_and_only_from_workflows() -> None:
    doc = load_text("wf.yaml", _workflow("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: []}"))
    wf = doc.documents[0]
    assert embedded(wf) is embedded(wf)
    assert [d.kind for d in embedded(wf).documents] == ["Pod"]
    job = load_text("j.yaml", "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec: {manifest: 'kind: Pod'}")
    assert embedded(job.documents[0]).documents == ()


def test_a_manifest_from_another_steps_artifact_is_counted_as_not_checked() -> None:
    text = _WORKFLOW.replace(
        "      manifest: |\n{body}",
        "      manifestFrom:\n        artifact: {name: manifest, from: '{{steps.render.outputs.artifacts.job}}'}\n",
    )
    result = lint_text("wf.yaml", text, LintConfig())
    assert [s.kind for s in result.skipped] == ["object"]
    assert "artifact not in the input" in result.skipped[0].reason
