"""Every rule survives every shape of YAML value: each path of each case-table input (manifests and kubelet
configurations) replaced by a hostile value (string, number, huge number, list, map, null), all rules on.

The suite runs a seeded choice of one value per path; `make fuzz` runs them all (--sweep)."""

from __future__ import annotations

import pytest

from tests.reliability.fuzz import sweep
from tests.reliability.hostile import CASES_DIR

TABLES = sorted(p.name for p in CASES_DIR.glob("*.yaml"))


@pytest.mark.parametrize("table", TABLES)
def test_every_rule_survives_hostile_values_at_every_path(table: str) -> None:
    report = sweep(values_per_path=1, seed=len(table), tables=(table,))
    assert report.crashes == [], "\n".join(report.crashes[:20])
