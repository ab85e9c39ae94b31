"""Which files that do not parse are templates or other tools' files (skipped) and which are broken manifests
(KG001): manifests.recognise, decided by content alone."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubegpu.manifests import load_text
from kubegpu.manifests.recognise import not_a_manifest


def _recognise(text: str, name: str = "f.yaml") -> str | None:
    found = not_a_manifest(name, text, load_text(name, text))
    return None if found is None else found.reason


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: {{.Name}}\n", "a Go template (`{{.Name}}` at line 4)"),
        ("{{$n := DefaultParam .N 1}}\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\n", "a Go template"),
        ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: {{ pod_name }}\n", "a Jinja template"),
        ("apiVersion: v1\nkind: List\nitems:\n{% for i in r %}\n- {kind: Pod}\n{% endfor %}\n", "a Jinja template"),
        ("spec:\n  labels:\n    a: b\n    ${indent(4, yamlencode(x))}\n", "`${}` interpolations"),
        ("apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - image: {user}/img:1\n", "`{user}` at line 5"),
        ("site_name: x\nicon: !!python/name:material.icons\n", "not a Kubernetes manifest"),
        ("jobs:\n  build:\n    steps: [\n", "not a Kubernetes manifest"),
    ],
)
def test_templates_and_other_files_are_recognised(text: str, words: str) -> None:
    reason = _recognise(text)
    assert reason is not None and words in reason


@pytest.mark.parametrize(
    "text",
    [
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n   labels: {}\n",  # a broken manifest
        # a Prometheus-style template string in a value does not make the real mistake (the indentation) a template
        "apiVersion: v1\nkind: ConfigMap\ndata:\n  msg: '{{ $labels.pod }} is down'\n   bad: [\n",
        '{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}',
    ],
)
def test_broken_manifests_stay_parse_errors(text: str) -> None:
    assert load_text("f.yaml", text).problems
    assert _recognise(text) is None


def test_a_file_that_parses_is_never_skipped_here() -> None:
    assert _recognise("apiVersion: v1\nkind: Pod\nmetadata: {name: '{{.Name}}'}\n") is None


_TOP = re.compile(r"""^["']?(apiVersion|kind)["']?[ \t]*:|"(apiVersion|kind)"[ \t]*:""", re.MULTILINE)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "apiVersion: v1",
                "kind: Pod",
                "metadata:",
                "  name: {{.Name}}",
                "  name: {{ x }}",
                "{% if a %}",
                "{% endif %}",
                "- {user}/img",
                "  bad: [",
                "${x}",
                "  image: ${IMAGE}",
                "key: value",
                "---",
                "# {{ comment }}",
                "\t",
            ]
        ),
        max_size=12,
    )
)
def test_a_file_with_apiversion_and_kind_is_skipped_only_as_a_template(lines: list[str]) -> None:
    """Whatever the lines, a file skipped for a reason other than its template markers has no top-level
    apiVersion or kind, and a template's reason names a marker the file holds."""
    text = "\n".join(lines)
    found = not_a_manifest("f.yaml", text, load_text("f.yaml", text))
    if found is None:
        return
    if found.template:
        marker = re.search(r"\(`(.*?)` at line (\d+)\)", found.reason)
        assert marker is not None
        shown, line = marker.group(1), int(marker.group(2))
        assert shown.removesuffix("...") in text.split("\n")[line - 1]
    else:
        assert len({m.group(1) or m.group(2) for m in _TOP.finditer(text)}) < 2


def test_hostile_lines_are_read_in_linear_time_and_bounded() -> None:
    """Lines of openers without closers, or of thousands of slots, are left as written; a file past the size bound
    is not read as a template (a broken manifest there stays a parse error)."""
    from kubegpu.manifests.recognise import _spans

    assert _spans("}}" + "{{" * 5000) == []
    assert _spans("{a} " * 100) == []  # more openers than a line people write holds
    assert _spans("image: {user}/x {b}} ${c} {{ .d }} x{e}") == [(7, 13), (21, 25), (26, 34)]
    many = "apiVersion: v1\nkind: Pod\nmetadata: [\n" + "{{" * 2000 + "\n"
    assert _recognise(many * 3) is None
    huge = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {{.Name}}\n" + "x: y\n" * (1 << 19)
    assert _recognise(huge) is None
