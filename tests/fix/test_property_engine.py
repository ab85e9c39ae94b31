"""Property test of the engine alone (a fake linter, any edit): random manifests in random layouts with comments,
one random add/append/replace -> the fixed text reads back as the original plus exactly that edit, keeps every
comment, and a second run changes nothing; on both paths (text edits and the round-trip fallback)."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubegpu.fix import FindingLike, FixOptions, fix_text
from kubegpu.manifests import FieldPath, get_path, load_text
from tests.fix.helpers import FakeEdit, FakeFinding, FakeFix, comment_lines

KEYS = st.sampled_from(["a", "b", "name", "on", "x-y", "k8s.io/z", "8", "key with space"])
SCALARS = st.one_of(
    st.integers(-5, 10**6),
    st.booleans(),
    st.sampled_from(
        [
            "yes",
            "8",
            "7500m",
            "a: b",
            "#x",
            "-x",
            "",
            "é",
            "x, y",
            "{z}",
            "null",
            "1e3",
            "0755",
            "plain text",
            "it's",
            'say "hi"',
        ]
    ),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, min_size=1, max_size=3), st.dictionaries(KEYS, inner, min_size=1, max_size=3)
    ),
    max_leaves=8,
)


def _paths(value: Any, path: FieldPath) -> list[tuple[FieldPath, Any]]:
    out = [(path, value)]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, (*path, i))
    return out


@st.composite
def cases(draw: Any) -> tuple[str, FakeEdit, Any]:
    data = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "m"},
        "data": draw(st.dictionaries(KEYS, VALUES, min_size=1, max_size=4)),
    }
    text = yaml.safe_dump(
        data,
        sort_keys=False,
        width=10_000,
        allow_unicode=draw(st.booleans()),
        indent=draw(st.sampled_from([2, 4])),
        default_flow_style=draw(st.sampled_from([False, None])),
    )
    lines = text.splitlines()
    for _ in range(draw(st.integers(0, 4))):
        at = draw(st.integers(0, len(lines)))
        lines.insert(at, "# note " + str(at))
    text = "\n".join(lines) + "\n"
    target_path, target = draw(st.sampled_from(_paths(data["data"], ("data",))))
    new_value = draw(VALUES)
    if isinstance(target, dict):
        key = draw(KEYS.filter(lambda k: k not in target))
        edit = FakeEdit("add", (*target_path, key), new_value)
    elif isinstance(target, list):
        edit = FakeEdit("add", (*target_path, "-"), new_value)
    else:
        edit = FakeEdit("replace", target_path, draw(SCALARS))
    expected = copy.deepcopy(data)
    parent = get_path(expected, edit.path[:-1])
    if edit.path[-1] == "-":
        parent.append(edit.value)
    else:
        parent[edit.path[-1]] = edit.value
    return text, edit, expected


def _linter(edit: FakeEdit) -> Any:
    def lint(name: str, text: str) -> Sequence[FindingLike]:
        out = []
        for doc in load_text(name, text).documents:
            seen = doc.data.get("x-applied") if isinstance(doc.data, dict) else None
            if seen is None:
                fix = FakeFix("edit", "safe", (edit, FakeEdit("add", ("x-applied",), 1)))
                out.append(FakeFinding("T1", "t", "warning", "m", doc.location(()), fix, doc))
        return out

    return lint


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=cases(), text_edits=st.booleans())
def test_any_edit_reads_back_exactly(case: tuple[str, FakeEdit, Any], text_edits: bool) -> None:
    text, edit, expected = case
    lint = _linter(edit)
    options = FixOptions(text_edits=text_edits)
    outcome = fix_text("m.yaml", text, lint, options)
    assert outcome.error is None
    assert not comment_lines(text) - comment_lines(outcome.fixed)
    if not outcome.applied:  # only when ruamel would drop a comment: the file is then left as it was
        assert outcome.fixed == text
        assert "comment" in outcome.remaining[0].reason
        return
    fixed = yaml.safe_load(outcome.fixed)
    assert fixed.pop("x-applied") == 1
    assert fixed == expected
    assert fix_text("m.yaml", outcome.fixed, lint, options).fixed == outcome.fixed
