"""Reading: multi-document streams, JSON, Lists, positions, and every kind of bad input."""

from __future__ import annotations

import json
import tracemalloc
from unittest import mock

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from kubegpu.manifests import load_text, loader

STREAM = """\
---
# a comment-only document follows
---
apiVersion: v1
kind: Pod
metadata: {name: flow, labels: {a: b}}
spec: {containers: [{name: c, image: i}]}
---
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: yes-values
data:
  enabled: yes
  when: 2024-01-01
...
"""


def test_stream_with_empty_documents_and_yaml11_scalars() -> None:
    result = load_text("s.yaml", STREAM)
    assert not result.problems
    assert [d.ref.name for d in result.documents] == ["flow", "yes-values"]
    data = result.documents[1].data["data"]
    assert data["enabled"] is True  # YAML 1.1, as kubectl reads it
    assert data["when"] == "2024-01-01"  # timestamps stay strings (sigs.k8s.io/yaml)
    assert result.documents[0].location(("spec", "containers", 0, "image")).line == 7
    assert result.documents[1].location(("data", "enabled")).line == 15


def test_json_and_kubectl_list() -> None:
    text = (
        '{"apiVersion": "v1", "kind": "List", "items": [\n'
        '  {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"}},\n'
        '  {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "b"}}\n]}'
    )
    result = load_text("pods.json", text)
    assert [d.ref.name for d in result.documents] == ["a", "b"]
    assert result.documents[1].prefix == ("items", 1)
    assert result.documents[1].location(("metadata", "name")).line == 3


def test_json_with_tabs_falls_back_to_strict_json() -> None:
    result = load_text("t.json", '{\n\t"apiVersion": "v1",\n\t"kind": "Pod",\n\t"metadata": {"name": "t"}\n}')
    assert [d.ref.name for d in result.documents] == ["t"]


def test_broken_document_does_not_hide_the_rest() -> None:
    text = (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Pod\nmetadata:\n"
        "  name: [oops\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: c}\n"
    )
    result = load_text("b.yaml", text)
    assert [d.ref.name for d in result.documents] == ["a", "c"]
    assert [(p.code, p.line) for p in result.problems] == [("parse-error", 9)]
    assert result.documents[1].location(("metadata", "name")).line == 12


def test_duplicate_keys_are_reported_with_their_line() -> None:
    text = "apiVersion: v1\nkind: Pod\nmetadata: {name: d}\nspec:\n  containers: []\n  containers: []\n"
    result = load_text("d.yaml", text)
    assert [(p.code, p.line, p.fatal) for p in result.problems] == [("duplicate-key", 6, False)]


def test_non_objects_are_counted_and_broken_objects_reported() -> None:
    result = load_text("n.yaml", "just text\n---\n- a\n- b\n---\nreplicas: 3\n---\nkind: Pod\n")
    assert [(p.code, p.line) for p in result.problems] == [("not-kubernetes-object", 8)]
    assert result.other_documents == 3


def test_alias_bomb_is_rejected_fast_and_small() -> None:
    levels = ["a: &a [" + ",".join(['"lol"'] * 9) + "]"]
    for i, name in enumerate("bcdefghij"):
        prev = "abcdefghij"[i]
        levels.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
    text = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bomb}\ndata:\n"
        + "\n".join("  " + line for line in levels)
        + "\n"
    )
    tracemalloc.start()
    result = load_text("bomb.yaml", text)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert [p.code for p in result.problems] == ["alias-bomb"]
    assert not result.documents
    # Nothing expanded the 9**10 leaves (speed is measured in bench/, not here).
    assert peak < 100 * 2**20


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_any_text_loads_without_exception(text: str) -> None:
    result = load_text("fuzz.yaml", text)
    for problem in result.problems:
        assert problem.line >= 1


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            ["apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n", "{", "---\n", "# c\n", "key: [1, 2\n", "\n", "- x\n"]
        ),
        max_size=12,
    )
)
def test_stream_fragments_never_crash(parts: list[str]) -> None:
    load_text("frag.yaml", "".join(parts))


def test_lone_surrogates_are_a_parse_error_not_a_crash() -> None:
    result = load_text("x.json", '{"\ud800\udc00": null}')
    assert [p.code for p in result.problems] == ["parse-error"]


_leaves = st.one_of(
    st.none(), st.booleans(), st.integers(), st.text(max_size=12), st.floats(allow_nan=False, allow_infinity=False)
)
_values = st.recursive(
    _leaves,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(min_size=1, max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)


# The body's keys leave the object's own alone: a body without its kind is not an object, and is skipped.
_body_keys = st.text(min_size=1, max_size=8).filter(lambda key: key not in ("apiVersion", "kind", "metadata"))


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(_body_keys, _values, max_size=5), st.booleans())
def test_documents_equal_what_pyyaml_constructs(body: dict[str, object], flow: bool) -> None:
    data = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, **body}
    text = yaml.safe_dump(data, default_flow_style=flow)
    loaded = load_text("p.yaml", text)
    assert [d.data for d in loaded.documents] == [yaml.load(text, Loader=yaml.SafeLoader)]


def test_aliases_merge_keys_and_tags_construct_as_pyyaml_does() -> None:
    text = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\nbase: &b {x: 1, y: [1, 2]}\n"
        "merged:\n  <<: *b\n  z: 0x1F\nshared: [*b, *b]\nflags: [yes, off, ~, 1.5, !!str 5, 2001-01-01]\n"
        "numbers: {1: one, 2: two}\n"
    )
    doc = load_text("a.yaml", text).documents[0].data
    assert doc["merged"] == {"x": 1, "y": [1, 2], "z": 31}
    assert doc["shared"][0] is doc["shared"][1] is doc["base"]
    assert doc["flags"] == [True, False, None, 1.5, "5", "2001-01-01"]
    assert doc["numbers"] == {1: "one", 2: "two"}


def test_integers_in_every_yaml11_spelling_construct_as_pyyaml_does() -> None:
    # Plain decimals are built inline; octal (leading 0), hex, binary, `_` and sexagesimal spellings go to PyYAML.
    spellings = ["4", "0", "00", "010", "0o17", "0x1F", "0b101", "1_000", "1:30", "-3", "+5", "99999999999999999999"]
    body = "".join(f"  k{i}: {s}\n" for i, s in enumerate(spellings)) + "  seq: [" + ", ".join(spellings) + "]\n"
    text = f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: n}}\ndata:\n{body}"
    assert load_text("i.yaml", text).documents[0].data == yaml.load(text, Loader=yaml.SafeLoader)


def test_the_resolver_hooks_it_skips_have_nothing_to_do() -> None:
    """The loader replaces the parser's per-node path-resolver hooks with no-ops: right only while neither it nor
    PyYAML's base loaders register a path resolver."""
    from kubegpu.manifests.loader import _MarkedLoader

    assert not _MarkedLoader.yaml_path_resolvers
    assert _MarkedLoader.descend_resolver(None, None) is None and _MarkedLoader.ascend_resolver() == 0
    loader = _MarkedLoader("a: [1, {b: c}]\n")
    try:
        assert loader.get_single_data() == {"a": [1, {"b": "c"}]}
    finally:
        loader.dispose()


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=20), st.booleans(), st.booleans())
def test_node_tags_are_pyyaml_resolvers(value: str, plain: bool, quoted: bool) -> None:
    """The cached tag of an untagged node is what PyYAML's own resolver answers, for any text and style."""
    from kubegpu.manifests.loader import _node_tag

    resolver = yaml.resolver.Resolver()
    for kind, text in ((yaml.ScalarNode, value), (yaml.MappingNode, None), (yaml.SequenceNode, None)):
        implicit = (plain, quoted) if kind is yaml.ScalarNode else plain
        assert _node_tag(kind, text, implicit) == resolver.resolve(kind, text, implicit)  # type: ignore[no-untyped-call]


def test_a_streamed_object_drops_its_nodes_once_located() -> None:
    """Positions located before the node tree is dropped stay; later ones read as the object's first line."""
    text = "# head\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: a\n"
    doc = load_text("p.yaml", text).documents[0]
    located = doc.location(("spec", "containers", 0, "name"))
    assert (located.line, located.column) == (8, 5)
    doc.drop_nodes()
    assert doc.node is None and doc.value_node(("spec",)) is None
    assert doc.location(("spec", "containers", 0, "name")) is located  # already located: kept
    assert (doc.location(("metadata",)).line, doc.location(("metadata",)).column) == (doc.start_line, 1)


# JSON payloads with any keys, values and spacing (tabs, escapes, repeated keys written by hand below).
_json_keys = st.text(max_size=8)
_json_values = st.recursive(
    _leaves,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(_json_keys, inner, max_size=4)),
    max_leaves=20,
)
_JSON_EDGES = ('{"a": 1, "a": [2]}', '[{"x": 1}, 2, "kind"]', "[" * 120 + "]" * 120, '{"k": NaN}', '{"\\u006bind": 1}')


def _yaml_path(text: str) -> loader.LoadResult:
    """The reference: what the YAML path alone reads."""
    with mock.patch.object(loader, "_json_data_only", return_value=False):
        return loader.load_text("payload.json", text)


@settings(max_examples=300, deadline=None)
@given(_json_values, st.sampled_from([None, 0, 2, "\t"]), st.booleans())
def test_json_payloads_read_fast_as_the_yaml_path_reads_them(
    value: object, indent: int | str | None, ascii: bool
) -> None:
    text = json.dumps(value, indent=indent, ensure_ascii=ascii)
    for case in (text, *_JSON_EDGES):
        fast = loader.load_text("payload.json", case)
        slow = _yaml_path(case)
        assert (fast.documents, fast.problems, fast.other_documents) == (
            slow.documents,
            slow.problems,
            slow.other_documents,
        )


def test_a_json_payload_is_read_without_the_yaml_parser() -> None:
    payload = json.dumps({"instances": [[0.25] * 50_000, {"image": {"b64": "x"}}]})
    with mock.patch.object(loader, "_MarkedLoader", side_effect=AssertionError("parsed as YAML")):
        result = loader.load_text("input.json", payload)
    assert (result.documents, result.problems, result.other_documents) == ([], [], 1)
    assert _yaml_path(payload).other_documents == 1
