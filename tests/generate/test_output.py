"""The YAML writer: what it emits parses back to the same objects, comments land where asked."""

from __future__ import annotations

import os
import string
from pathlib import Path

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from kubegpu.generate.output import (
    Generated,
    Note,
    OutFile,
    YamlDoc,
    render_documents,
    write_generated,
)
from kubegpu.manifests.atomic import write_atomic

_keys = st.text(alphabet=string.ascii_letters + string.digits + "./-_", min_size=1, max_size=12)
_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**12), max_value=10**12)
    | st.text(max_size=30)
    | st.sampled_from(["yes", "on", "1", "0-3", "2Gi", "true", "~", "null", "a: b", "- x", "#c"])
)
_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_keys, inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(_keys, _values, min_size=1, max_size=6))
def test_round_trip(obj: dict[str, object]) -> None:
    text = render_documents([YamlDoc(obj)])
    assert yaml.safe_load(text) == obj


@settings(max_examples=100, deadline=None)
@given(st.lists(st.dictionaries(_keys, _values, min_size=1, max_size=4), min_size=1, max_size=3))
def test_multi_document_round_trip(objs: list[dict[str, object]]) -> None:
    text = render_documents([YamlDoc(o, header=("a header",)) for o in objs])
    assert list(yaml.safe_load_all(text)) == objs


def test_comments_sit_above_their_key() -> None:
    doc = YamlDoc(
        {"spec": {"a": 1, "list": [{"name": "x", "v": 2}, {"name": "y"}]}},
        notes=(
            Note(("spec", "a"), "why a"),
            Note(("spec", "list", 1), "why the second item"),
            Note(("spec", "list", 0, "v"), "two lines\nof reasons"),
        ),
    )
    lines = render_documents([doc]).splitlines()
    assert lines[lines.index("  a: 1") - 1] == "  # why a"
    assert lines[lines.index("    - name: y") - 1] == "    # why the second item"
    v = lines.index("      v: 2")
    assert lines[v - 2 : v] == ["      # two lines", "      # of reasons"]


def test_multiline_strings_are_literal_blocks() -> None:
    obj = {"data": {"conf": "a: 1\nb:\n  - 2\n"}}
    text = render_documents([YamlDoc(obj)])
    assert "conf: |" in text
    assert yaml.safe_load(text) == obj


def test_top_level_list_documents() -> None:
    ops = [{"op": "add", "path": "/a", "value": 1}]
    text = render_documents([YamlDoc(ops, notes=(Note((0,), "why"),))])
    assert text.startswith("# why\n- op: add")
    assert yaml.safe_load(text) == ops


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def test_write_atomic_and_folders(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "out.yaml"
    write_atomic(target, "a: 1\n")
    assert target.read_text() == "a: 1\n"
    assert [p.name for p in tmp_path.joinpath("sub").iterdir()] == ["out.yaml"]
    assert target.stat().st_mode & 0o777 == 0o666 & ~_umask()  # a new file gets the usual mode, not 0600
    target.chmod(0o640)
    write_atomic(target, b"a: 2\n")
    assert (target.read_text(), target.stat().st_mode & 0o777) == ("a: 2\n", 0o640)  # a replaced one keeps its mode
    two = Generated((OutFile("x.yaml", (YamlDoc({"a": 1}),)), OutFile("d/y.toml", text="k = 1\n")))
    written = write_generated(two, tmp_path / "bundle")
    assert sorted(p.relative_to(tmp_path / "bundle").as_posix() for p in written) == [
        "d/y.toml",
        "x.yaml",
    ]
    assert "# ==> d/y.toml <==" in two.render()
