"""Unit tests of the fix engine's parts: stream splitting, indentation detection, JSON-Patch semantics on the
round-trip tree (comments kept on add and remove), text edits, JSON layout, and the loop itself with a fake
linter (safety levels, overlapping fixes, skipped fixes, non-convergence)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubegpu.fix import FindingLike, FixOptions, fix_text, jsondoc, patch, textpatch, yamlio
from kubegpu.fix.stream import cut_chunk, split_stream
from kubegpu.manifests import FieldPath, load_text
from tests.fix.helpers import FakeEdit, FakeFinding, FakeFix

# --- stream ---------------------------------------------------------------------------------------------------

LINES = st.sampled_from(["---", "--- ", "--- # c", "a: 1", "# c", "", "  b: x", "...", "---x: 1", "\r"])


@given(st.lists(LINES, max_size=30), st.booleans())
def test_split_stream_joins_back_exactly(lines: list[str], final_newline: bool) -> None:
    text = "\n".join(lines) + ("\n" if final_newline else "")
    assert "".join(c.text for c in split_stream(text)) == text


def test_cut_chunk_keeps_separator_tail_crlf_and_missing_newline() -> None:
    parts = cut_chunk("--- # doc\r\na: 1\r\nb: 2\r\n\r\n")
    assert parts is not None
    assert (parts.head, parts.body, parts.tail, parts.crlf) == ("--- # doc\r\n", "a: 1\nb: 2\n", "\r\n", True)
    assert parts.join("a: 1\nb: 3\n") == "--- # doc\r\na: 1\r\nb: 3\r\n\r\n"
    last = cut_chunk("---\na: 1")
    assert last is not None and last.join("a: 2\n") == "---\na: 2"
    ended = cut_chunk("a: 1\n...\n# after the end\n")
    assert ended is not None and (ended.body, ended.tail) == ("a: 1\n", "...\n# after the end\n")
    assert cut_chunk("--- {a: 1}\n") is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a:\n  b:\n  - c: 1\n    d: 2\n", yamlio.Indent(2, 2, 0)),
        ("a:\n  b:\n    - c: 1\n      d: 2\n", yamlio.Indent(2, 4, 2)),
        ("a:\n    b:\n        -   c: 1\n            d: 2\n", yamlio.Indent(4, 8, 4)),
        ("a:\n    b: 1\n", yamlio.Indent(4, 4, 0)),
    ],
)
def test_detect_indent(text: str, expected: yamlio.Indent) -> None:
    assert yamlio.detect_indent(text) == expected


# --- patch on the round-trip tree -------------------------------------------------------------------------------


def _round_trip(text: str, edits: Sequence[tuple[str, FieldPath, Any]]) -> str:
    handle = yamlio.make_yaml(yamlio.detect_indent(text))
    tree = yamlio.load_document(handle, text)
    style = patch.Style(True, '"', lambda v: yamlio.needs_quotes(handle, v))
    for op, path, value in edits:
        patch.apply_edit(tree, op, path, value, style)
    return yamlio.dump_document(handle, tree)


def test_add_keeps_comments_and_yaml11_spellings() -> None:
    text = "a:  # head\n  on: yes\n  n: ~\n  x: 1  # inline\n  # trailing\nb: 2\n"
    out = _round_trip(text, [("add", ("a", "y"), "on"), ("add", ("a", "z", "w"), "8")])
    assert out == (
        'a:  # head\n  on: yes\n  n: ~\n  x: 1  # inline\n  \'y\': "on"\n  z:\n    w: "8"\n  # trailing\nb: 2\n'
    )


def test_remove_keeps_the_comment_lines_around_it() -> None:
    text = "r:\n  cpu: 500m  # gone with its line\n  # about memory\n  memory: 1Gi\nl:\n- a\n# after a\n- b\n# end\n"
    out = _round_trip(text, [("remove", ("r", "cpu"), None), ("remove", ("l", 0), None)])
    assert out == "r:\n  # about memory\n  memory: 1Gi\nl:\n# after a\n- b\n# end\n"


def test_check_edit_creates_mappings_never_lists() -> None:
    tree = {"spec": {"containers": [{"name": "a"}]}}
    assert patch.check_edit(tree, "add", ("spec", "x", "y"), set()) is None
    assert patch.check_edit(tree, "add", ("spec", "volumes", "-"), set()) is not None
    assert patch.check_edit(tree, "add", ("spec", "containers", "-"), set()) is None
    assert patch.check_edit(tree, "replace", ("spec", "containers", 1, "name"), set()) is not None
    assert patch.check_edit(tree, "remove", ("spec", "nope"), set()) is not None
    assert patch.check_edit(tree, "move", ("spec",), set()) is not None
    assert patch.check_edit(tree, "add", ("spec", "volumes", "-"), {("spec", "volumes")}) is None


def test_json_patch_add_replaces_and_inserts() -> None:
    tree: dict[str, Any] = {"a": [1, 3], "b": 1}
    plain = patch.Style(round_trip=False)
    patch.apply_edit(tree, "add", ("a", 1), 2, plain)
    patch.apply_edit(tree, "add", ("b",), 5, plain)
    patch.apply_edit(tree, "add", ("a", "-"), 4, plain)
    assert tree == {"a": [1, 2, 3, 4], "b": 5}
    with pytest.raises(patch.PatchError):
        patch.apply_edit(tree, "replace", ("c",), 1, plain)


# --- text edits ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "edit", "expected"),
    [
        ("m: { a: 1 }\n", ("add", ("m", "b"), "x y"), "m: { a: 1, b: x y }\n"),
        ("m: {}\n", ("add", ("m", "b"), 1), "m: {b: 1}\n"),
        ("l: [a]\n", ("add", ("l", "-"), {"k": "v"}), "l: [a, {k: v}]\n"),
        ("a:\n  b: 1  # c\n# tail\n", ("add", ("a", "d"), [{"e": "8"}]), 'a:\n  b: 1  # c\n  d:\n  - e: "8"\n# tail\n'),
        ("l:\n    -   n: 1\n", ("add", ("l", "-"), {"n": 2, "m": 3}), "l:\n    -   n: 1\n    -   n: 2\n        m: 3\n"),
        ("c: '7'  # x\n", ("replace", ("c",), "8"), "c: '8'  # x\n"),
        ("c: 7500m\n", ("replace", ("c",), "8"), 'c: "8"\n'),
    ],
)
def test_text_edits(text: str, edit: tuple[str, FieldPath, Any], expected: str) -> None:
    indent = yamlio.detect_indent(text)
    assert textpatch.apply_text_edits(text, [edit], indent, yamlio.preferred_quote(text)) == expected


@pytest.mark.parametrize(
    ("text", "edit"),
    [
        ("a: 1\n", ("remove", ("a",), None)),
        ("a:\n  b: |\n    x\n", ("add", ("a", "c"), 1)),
        ("l: [1, 2]\n", ("add", ("l", 0), 0)),
    ],
)
def test_text_edits_hand_over_what_they_do_not_handle(text: str, edit: tuple[str, FieldPath, Any]) -> None:
    with pytest.raises(textpatch.Unsupported):
        textpatch.apply_text_edits(text, [edit], yamlio.Indent(), '"')


def test_text_edits_are_off_with_anchors_and_tags() -> None:
    assert not textpatch.usable("a: &x 1\nb: *x\n")
    assert not textpatch.usable("a: !!str 1\n")
    assert textpatch.usable("a: 'hello!'\nb: x*y\n")


# --- JSON -------------------------------------------------------------------------------------------------------


def test_json_layout_is_detected_and_kept() -> None:
    text = '{\n\t"a": 1,\n\t"b": [1, 2]\n}'
    style = jsondoc.detect_json_style(text)
    assert (style.indent, style.final_newline) == ("\t", False)
    data = jsondoc.parse_json(text)
    data["c"] = "é"
    assert jsondoc.dump_json(data, text, style) == '{\n\t"a": 1,\n\t"b": [1, 2],\n\t"c": "\\u00e9"\n}'
    data["d"] = [{"e": 1}]
    assert jsondoc.dump_json(data, text, style).endswith('"d": [{"e": 1}]\n}'), "new arrays follow their siblings"
    compact = '{"a": 1}\n'
    assert jsondoc.dump_json({"a": 2}, compact, jsondoc.detect_json_style(compact)) == '{"a": 2}\n'


# --- the loop, with a fake linter -------------------------------------------------------------------------------


def _fake_lint(rules: dict[str, tuple[str, tuple[FakeEdit, ...], str]]) -> Any:
    """Report rule CODE while its `want` key is absent from spec (or differs), with the given fix."""

    def lint(name: str, text: str) -> Sequence[FindingLike]:
        out: list[FakeFinding] = []
        for doc in load_text(name, text).documents:
            spec = doc.data.get("spec") or {}
            for code, (want, edits, safety) in rules.items():
                key, _, value = want.partition("=")
                if str(spec.get(key)) != value:
                    out.append(
                        FakeFinding(
                            code,
                            code.lower(),
                            "warning",
                            f"{key} should be {value}",
                            doc.location(("spec",)),
                            FakeFix(f"set {key}", safety, edits),
                            doc,
                        )
                    )
        return out

    return lint


DOC = "# head\nkind: Pod\napiVersion: v1\nmetadata: {name: p}\nspec:\n  a: 1  # keep\n"


def test_safety_levels() -> None:
    lint = _fake_lint(
        {
            "S1": ("x=1", (FakeEdit("add", ("spec", "x"), 1),), "safe"),
            "U1": ("y=2", (FakeEdit("add", ("spec", "y"), 2),), "unsafe"),
            "D1": ("z=3", (FakeEdit("add", ("spec", "z"), 3),), "display-only"),
        }
    )
    safe = fix_text("p.yaml", DOC, lint)
    assert safe.fixed == DOC + "  x: 1\n"
    assert {r.code: r.reason for r in safe.remaining} == {
        "U1": "unsafe fix withheld: use --unsafe-fixes",
        "D1": "fix is shown for review only, never applied",
    }
    both = fix_text("p.yaml", DOC, lint, FixOptions(unsafe=True))
    assert both.fixed == DOC + "  x: 1\n  y: 2\n"
    assert [r.code for r in both.remaining] == ["D1"]


def test_overlapping_fixes_wait_for_the_next_pass() -> None:
    lint = _fake_lint(
        {
            "A1": ("x=1", (FakeEdit("add", ("spec", "x"), 1),), "safe"),
            "B1": ("w=2", (FakeEdit("add", ("spec", "x"), 9), FakeEdit("add", ("spec", "w"), 2)), "safe"),
        }
    )
    outcome = fix_text("p.yaml", DOC, lint, FixOptions(max_passes=3))
    assert [a.code for a in outcome.applied] == ["A1", "B1", "A1"]
    assert outcome.fixed == DOC + "  x: 1\n  w: 2\n"
    assert outcome.passes == 3 and outcome.converged


def test_a_fix_whose_path_is_gone_is_skipped_and_reported() -> None:
    lint = _fake_lint({"G1": ("q=1", (FakeEdit("replace", ("spec", "nothere"), 1),), "safe")})
    outcome = fix_text("p.yaml", DOC, lint)
    assert outcome.fixed == DOC
    assert outcome.remaining[0].reason.startswith("not applied: path /spec/nothere does not exist")


def test_fixes_that_never_settle_are_reported() -> None:
    lint = _fake_lint(
        {
            "A1": ("x=1", (FakeEdit("add", ("spec", "x"), 1),), "safe"),
            "B1": ("x=2", (FakeEdit("add", ("spec", "x"), 2),), "safe"),
        }
    )
    outcome = fix_text("p.yaml", DOC, lint, FixOptions(max_passes=4))
    assert not outcome.converged
    assert outcome.passes == 4
    assert outcome.remaining


def test_unparsable_input_is_left_alone() -> None:
    broken = "a: [1\n"
    outcome = fix_text("b.yaml", broken, _fake_lint({}))
    assert outcome.error is not None and outcome.fixed == broken


def test_only_the_document_with_edits_changes() -> None:
    other = "---\n# untouched\nkind: Service\napiVersion: v1\nmetadata: { name:  s }   \nspec: {a: 1, x: 1}\n"
    lint = _fake_lint({"S1": ("x=1", (FakeEdit("add", ("spec", "x"), 1),), "safe")})
    outcome = fix_text("p.yaml", DOC + other, lint, FixOptions(text_edits=False))
    assert outcome.fixed == DOC + "  x: 1\n" + other


def test_round_trip_keeps_mixed_indentation_outside_the_edit() -> None:
    text = (
        "kind: KubeletConfiguration\nevictionHard:\n    memory.available: 100Mi\nkubeReserved:\n"
        '  cpu: "1"   # reserve one\n  memory: 2Gi\nfeatureGates:\n- a\n'
    )
    handle = yamlio.make_yaml(yamlio.detect_indent(text))
    tree = yamlio.load_document(handle, text)
    patch.apply_edit(tree, "remove", ("kubeReserved", "cpu"), None, patch.Style(True))
    emitted = yamlio.dump_document(handle, tree)
    restored = yamlio.restore_spacing(text, emitted, yamlio.plain_data)
    assert restored == text.replace('  cpu: "1"   # reserve one\n', "")


def test_a_removal_takes_its_inline_comment_and_keeps_the_others() -> None:
    text = DOC.replace("  a: 1  # keep\n", "  a: 1  # keep\n  b: 2  # goes with b\n  # about c\n  c: 3\n")
    lint = _fake_lint({"R1": ("b=None", (FakeEdit("remove", ("spec", "b")),), "safe")})
    outcome = fix_text("p.yaml", text, lint)
    assert outcome.fixed == DOC + "  # about c\n  c: 3\n"
