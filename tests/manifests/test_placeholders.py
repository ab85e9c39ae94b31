"""Pod counts written as template placeholders (`replicas: $NUM_NODES`), found anywhere below a spec."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kubegpu.manifests.placeholders import COUNT_FIELDS, is_placeholder, templated_counts

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
