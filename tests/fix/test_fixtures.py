"""Before/after fixture folders (sqlfluff-style): fixing `before/<file>` must give `after/<file>` byte for byte.

Set KUBEGPU_REGEN_FIX_FIXTURES=1 to rewrite the `after/` files, then review the diff before committing.
"""

from __future__ import annotations

import os

import pytest

from kubegpu.fix import fix_text
from kubegpu.fix.files import decode, encode
from tests.fix.helpers import Case, fixture_cases, linter

CASES = fixture_cases()


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_fixture(case: Case) -> None:
    text, bom = decode(case.before.read_bytes())
    outcome = fix_text(case.before.name, text, linter(case.config), case.options)
    assert outcome.error is None
    produced = encode(outcome.fixed, bom)
    if os.environ.get("KUBEGPU_REGEN_FIX_FIXTURES"):
        case.after.parent.mkdir(exist_ok=True)
        case.after.write_bytes(produced)
    assert case.after.is_file(), f"missing {case.after}"
    assert produced == case.after.read_bytes()


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_fixture_is_idempotent(case: Case) -> None:
    text, _bom = decode(case.after.read_bytes())
    again = fix_text(case.after.name, text, linter(case.config), case.options)
    assert again.fixed == text
    assert not again.applied
