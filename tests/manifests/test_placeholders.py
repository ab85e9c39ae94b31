"""Pod counts written as template placeholders (`replicas: $NUM_NODES`), found anywhere below a spec."""

from __future__ import annotations

import json
from typing import Any

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from kubegpu.manifests.loader import load_text
from kubegpu.manifests.placeholders import COUNT_FIELDS, is_placeholder, may_hold_placeholders, templated_counts

_KEYS = st.sampled_from([*sorted(COUNT_FIELDS), "metadata", "status", "spec", "template", "workers"])
_VALUES = st.sampled_from(["$N", "${NODES}", "$(N)", "{{ .Values.n }}", "<n>", "4", 4, None, "plain"])
_TREES = st.recursive(
    _VALUES,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(_KEYS, inner, max_size=4)),
    max_leaves=40,
)


def _reference(data: Any, path: tuple[str | int, ...] = (), depth: int = 0) -> list[tuple[str, str]]:
    """The definition, written plainly: every count field below `data` whose value is a placeholder."""
    if depth > 16:
        return []
    out: list[tuple[str, str]] = []
    if isinstance(data, dict):
        for key, value in data.items():
            if key in ("metadata", "status"):
                continue
            if key in COUNT_FIELDS and is_placeholder(value):
                out.append((".".join(str(p) for p in (*path, key)), str(value)))
            else:
                out.extend(_reference(value, (*path, key), depth + 1))
    elif isinstance(data, list):
        for i, item in enumerate(data):
            out.extend(_reference(item, (*path, i), depth + 1))
    return out


@settings(max_examples=300, deadline=None)
@given(_TREES)
def test_templated_counts_match_the_plain_definition(tree: Any) -> None:
    assert templated_counts(tree, ("spec",)) == tuple(_reference(tree, ("spec",)))


def test_counts_under_metadata_and_status_do_not_count() -> None:
    spec = {"replicas": "$N", "metadata": {"replicas": "$M"}, "workers": [{"status": {"size": "$S"}, "size": "${S}"}]}
    assert templated_counts(spec, ("spec",)) == (("spec.replicas", "$N"), ("spec.workers.0.size", "${S}"))


_COUNT_VALUES = st.one_of(
    st.integers(0, 64),
    st.text(alphabet="$<>{}()_ABCPLACEHOLDERxyz09 \\\"'", max_size=12),
    st.sampled_from(["$N", "${N}", "$(N)", "<n>", "{{ .Values.n }}", "PLACEHOLDER_N", "\\x24N", "\\u0024N"]),
)


@given(
    st.dictionaries(st.sampled_from([*sorted(COUNT_FIELDS), "spec", "template", "name"]), _COUNT_VALUES, max_size=4),
    st.sampled_from(["plain", "double-quoted", "json"]),
)
def test_text_without_placeholder_syntax_has_no_templated_count(fields: dict[str, object], style: str) -> None:
    """The loader marks objects read from text without placeholder syntax; they hold no templated count."""
    spec = {"replicatedJobs": [{"template": {"spec": dict(fields)}}], **fields}
    obj = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"}, "spec": spec}
    if style == "json":
        text = json.dumps(obj)
    else:
        text = yaml.safe_dump(obj, default_style='"' if style == "double-quoted" else None)
    docs = load_text("j.yaml", text).documents
    assert len(docs) == 1
    if docs[0].placeholder_free:
        assert templated_counts(docs[0].data.get("spec"), ("spec",)) == ()
    assert docs[0].placeholder_free == (not may_hold_placeholders(text))


def test_an_escape_that_writes_a_placeholder_is_not_placeholder_free() -> None:
    text = 'apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec: {parallelism: "\\x24NODES"}\n'
    doc = load_text("j.yaml", text).documents[0]
    assert doc.data["spec"]["parallelism"] == "$NODES" and not doc.placeholder_free
    assert templated_counts(doc.data["spec"], ("spec",)) == (("spec.parallelism", "$NODES"),)
