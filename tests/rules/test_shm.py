"""Section 13.2 rules (KG201-KG203): the YAML case table, and the size the fixes derive from the memory limit."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubegpu.fix import FixOptions, fix_text
from kubegpu.rules import Finding, LintConfig, lint_text
from kubegpu.rules.shm import GI, MI, shm_size_for, shm_size_text
from kubegpu.units import parse_quantity
from tests.rules.kg_cases import case_ids, load_table, run_case

TABLE = load_table("shm.yaml")


@pytest.mark.parametrize("case", TABLE["cases"], ids=case_ids(TABLE))
def test_case(case: dict[str, Any]) -> None:
    run_case(TABLE, case)


@given(st.integers(2 * MI, 4096 * GI))
def test_the_derived_size_is_at_most_half_the_limit_and_written_exactly(limit: int) -> None:
    size = shm_size_for(limit)
    assert MI <= size <= limit // 2
    assert parse_quantity(shm_size_text(limit)).value == size
    # Whole GiB once the pod has at least 2 GiB; never less than half a GiB below the exact half.
    assert limit // 2 - size < (GI if limit >= 2 * GI else MI)


@given(st.sampled_from(["512Mi", "1Gi", "1536Mi", "3Gi", "100Gi", "1000M"]))
def test_the_dshm_fix_never_leaves_an_unsized_or_oversized_volume(memory: str) -> None:
    text = (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    image: x:1.0\n"
        f"    resources: {{limits: {{memory: {memory}, nvidia.com/gpu: 1}}}}\n"
    )

    def lint(name: str, body: str) -> list[Finding]:
        return lint_text(name, body, LintConfig(select=("KG2",))).findings

    outcome = fix_text("p.yaml", text, lint, FixOptions(unsafe=False))
    assert outcome.error is None
    assert [f.name for f in lint("p.yaml", outcome.fixed)] == []
