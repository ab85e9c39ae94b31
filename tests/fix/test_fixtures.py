"""Before/after fixture folders (sqlfluff-style): fixing `before/<file>` must give `after/<file>` byte for byte.

Set KUBEGPU_REGEN_FIX_FIXTURES=1 to rewrite the `after/` files, then review the diff before committing.
"""

from __future__ import annotations

import os
from dataclasses import replace

import pytest

from kubegpu.fix import fix_text
from kubegpu.fix.files import decode, encode
from kubegpu.manifests import load_text
from tests.fix.helpers import Case, comment_lines, fixture_cases, inline_comments, linter

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


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_round_trip_path_agrees(case: Case) -> None:
    """With text edits off, every edit goes through ruamel: same objects, same comments, still idempotent."""
    text, _bom = decode(case.before.read_bytes())
    options = replace(case.options, text_edits=False)
    outcome = fix_text(case.before.name, text, linter(case.config), options)
    expected, _ = decode(case.after.read_bytes())
    assert outcome.error is None
    before = load_text(case.after.name, expected)
    after = load_text(case.after.name, outcome.fixed)
    assert [d.data for d in before.documents] == [d.data for d in after.documents]
    assert comment_lines(outcome.fixed) == comment_lines(expected)
    assert inline_comments(outcome.fixed) == inline_comments(expected)
    assert fix_text(case.before.name, outcome.fixed, linter(case.config), options).fixed == outcome.fixed
