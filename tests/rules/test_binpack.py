"""Section 13.7 rules (scheduler-spreads-gpus, binpack-profile-unused): the YAML case table and profile reading."""

from __future__ import annotations

from typing import Any

import pytest

from kubegpu.manifests import load_text
from kubegpu.rules.binpack import LEAST, MOST, profile_scoring
from tests.rules.kg_cases import case_ids, load_table, run_case

TABLE = load_table("binpack.yaml")


@pytest.mark.parametrize("case", TABLE["cases"], ids=case_ids(TABLE))
def test_case(case: dict[str, Any]) -> None:
    run_case(TABLE, case)


def test_profiles_default_like_kube_scheduler() -> None:
    text = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: a
- schedulerName: b
  plugins:
    score:
      disabled: [{name: NodeResourcesFit}]
- schedulerName: c
  pluginConfig:
  - name: NodeResourcesFit
    args: {scoringStrategy: {type: MostAllocated}}
"""
    profiles = profile_scoring(load_text("s.yaml", text).documents[0])
    assert [(p.name, p.strategy, p.resources, p.packs) for p in profiles] == [
        ("a", LEAST, (("cpu", 1), ("memory", 1)), False),
        ("b", "", (("cpu", 1), ("memory", 1)), False),
        ("c", MOST, (("cpu", 1), ("memory", 1)), True),
    ]
