"""The comment policy of `kubegpu fix`: a trailing comment on a line a fix rewrites is removed (it described the
old value) and reported; every other comment, and every key, stays byte for byte. Cases and a property test over
random pods with a unique comment on many lines, on both the text-edit and the round-trip path."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from kubegpu.cli.main import app
from kubegpu.fix import FixOptions, fix_text
from kubegpu.lint import LintConfig
from kubegpu.manifests import load_text
from tests.fix.helpers import linter, strip_paths, touched_by_document

UNSAFE = FixOptions(unsafe=True)
QOS_AND_SHM = LintConfig(select=("KG101", "KG102", "KG104", "KG2"))


def _fix(text: str, text_edits: bool = True) -> Any:
    outcome = fix_text("p.yaml", text, linter(QOS_AND_SHM), FixOptions(unsafe=True, text_edits=text_edits))
    assert outcome.error is None, outcome.error
    return outcome


POD = """\
# training pod
apiVersion: v1
kind: Pod
metadata:
  name: tok  # the tokeniser
spec:
  volumes:
  - name: dshm
    emptyDir: {medium: Memory, sizeLimit: 1Gi}
  containers:
  - name: train
    image: nvcr.io/nvidia/pytorch:24.05-py3
    volumeMounts: [{name: dshm, mountPath: /dev/shm}]
    resources:
      # sized for the tokeniser
      requests:
        cpu: 3500m  # 3.5 cores for tokenisation
        memory: 4Gi # small
      limits:
        cpu: 3500m
        memory: 4Gi  # same as the request
        nvidia.com/gpu: 1  # one GPU
"""


@pytest.mark.parametrize("text_edits", [True, False], ids=["text", "round-trip"])
def test_a_changed_value_loses_its_trailing_comment_and_nothing_else_changes(text_edits: bool) -> None:
    outcome = _fix(POD, text_edits)
    assert "cpu: 3500m" not in outcome.fixed
    assert "3.5 cores" not in outcome.fixed
    assert '        cpu: "4"\n' in outcome.fixed
    # The lines the fix did not rewrite keep their comments byte for byte.
    for line in ("# training pod", "  name: tok  # the tokeniser", "      # sized for the tokeniser",
                 "        memory: 4Gi # small", "        memory: 4Gi  # same as the request",
                 "        nvidia.com/gpu: 1  # one GPU"):  # fmt: skip
        assert line + "\n" in outcome.fixed
    assert [d for a in outcome.applied for d in a.dropped_comments] == ["# 3.5 cores for tokenisation"]


def test_an_unchanged_line_keeps_its_comment_when_a_neighbour_changes() -> None:
    text = POD.replace("        memory: 4Gi # small\n", "        memory: 2Gi # small\n")
    outcome = _fix(text)
    # The memory request is raised to the limit: its comment goes; the limit's line is not rewritten.
    assert "# small" not in outcome.fixed
    assert "        memory: 4Gi  # same as the request\n" in outcome.fixed
    assert sorted(d for a in outcome.applied for d in a.dropped_comments) == [
        "# 3.5 cores for tokenisation",
        "# small",
    ]


def test_an_entry_added_to_a_one_line_flow_mapping_drops_that_line_comment() -> None:
    text = POD.replace(
        "    emptyDir: {medium: Memory, sizeLimit: 1Gi}\n", "    emptyDir: {medium: Memory}  # no size yet\n"
    )
    outcome = _fix(text)
    assert "    emptyDir: {medium: Memory, sizeLimit: 2Gi}\n" in outcome.fixed
    assert "no size yet" not in outcome.fixed


def test_an_entry_added_on_a_new_line_keeps_the_comments_around_it() -> None:
    text = POD.replace("        cpu: 3500m\n", "").replace("3500m", '"4"')
    outcome = _fix(text)
    assert '        cpu: "4"  # 3.5 cores for tokenisation\n' in outcome.fixed  # the request is not changed
    assert not [d for a in outcome.applied for d in a.dropped_comments]


def test_a_quoted_hash_is_not_a_comment() -> None:
    text = POD.replace("  name: tok  # the tokeniser\n", "  name: tok\n  annotations: {note: 'a # b'}\n")
    outcome = _fix(text)
    assert "note: 'a # b'" in outcome.fixed


def test_the_summary_names_the_removed_comment(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(POD)
    result = CliRunner().invoke(app, ["fix", "--unsafe-fixes", "--select", "KG102", str(path)])
    assert "removed the comment '# 3.5 cores for tokenisation' from the line it changed" in result.output
    assert "3.5 cores" not in path.read_text()


# ---------------------------------------------------------------------------------------------------- property


class _Lines:
    """Numbered lines, each maybe with a unique trailing comment, and unique full-line comments."""

    def __init__(self, draw: Any) -> None:
        self.draw = draw
        self.lines: list[str] = []
        self.count = 0

    def _next(self) -> str:
        self.count += 1
        return f"c{self.count}"

    def add(self, line: str) -> None:
        if self.draw(st.integers(0, 3)) == 0:
            self.lines.append(" " * (len(line) - len(line.lstrip())) + f"# {self._next()} above")
        spacing = self.draw(st.sampled_from([" ", "  ", "   "]))
        self.lines.append(line + (f"{spacing}# {self._next()} was here" if self.draw(st.booleans()) else ""))


_CPU = st.sampled_from(["3500m", "4", '"4"', "7", "250m", "2"])
_MEM = st.sampled_from(["1Gi", "2Gi", "1024Mi", "512Mi"])


@st.composite
def _pods(draw: Any) -> str:
    out = _Lines(draw)
    out.add("apiVersion: v1")
    out.add("kind: Pod")
    out.add("metadata:")
    out.add("  name: p")
    out.add("spec:")
    groups = [("containers", "train", True)]
    if draw(st.booleans()):
        groups.insert(0, ("initContainers", "proxy", False))
    for field, name, gpu in groups:
        out.add(f"  {field}:")
        out.add(f"  - name: {name}")
        out.add("    image: nvcr.io/nvidia/pytorch:24.05-py3")
        if field == "initContainers" and draw(st.booleans()):
            out.add("    restartPolicy: Always")
        out.add("    resources:")
        for section in ("requests", "limits"):
            values = {"cpu": draw(_CPU), "memory": draw(_MEM)}
            if gpu:
                values["nvidia.com/gpu"] = "1"
            kept = {k: v for k, v in values.items() if k == "nvidia.com/gpu" or draw(st.integers(0, 4)) > 0}
            if draw(st.booleans()):
                out.add(f"      {section}: {{{', '.join(f'{k}: {v}' for k, v in kept.items())}}}")
            else:
                out.add(f"      {section}:")
                for key, value in kept.items():
                    out.add(f"        {key}: {value}")
    return "\n".join(out.lines) + "\n"


def _comment_of(line: str) -> str | None:
    at = line.find(" #")
    return line[at + 1 :].strip() if at >= 0 and not line.lstrip().startswith("#") else None


@settings(max_examples=80, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(text=_pods(), text_edits=st.booleans())
def test_comments_on_rewritten_lines_go_and_every_other_comment_and_key_stays(text: str, text_edits: bool) -> None:
    outcome = fix_text("p.yaml", text, linter(QOS_AND_SHM), FixOptions(unsafe=True, text_edits=text_edits))
    assert outcome.error is None
    fixed_lines = outcome.fixed.splitlines()
    dropped = Counter(d for a in outcome.applied for d in a.dropped_comments)
    # Full-line comments: all kept, in order, byte for byte.
    assert [x for x in text.splitlines() if x.lstrip().startswith("#")] == [
        x for x in fixed_lines if x.lstrip().startswith("#")
    ]
    # Trailing comments (each unique): kept only on a line kept byte for byte, else removed and reported.
    lost: Counter[str] = Counter()
    for line in text.splitlines():
        comment = _comment_of(line)
        if comment is None:
            continue
        holders = [x for x in fixed_lines if _comment_of(x) == comment]
        if holders:
            assert holders == [line], (line, holders)
        else:
            lost[comment] += 1
            assert line not in fixed_lines
    assert lost == dropped
    # No key or value outside the fixed paths changed, and every key is still there.
    before = load_text("p.yaml", text)
    after = load_text("p.yaml", outcome.fixed)
    touched = touched_by_document(outcome.applied, before.documents)
    for old, new in zip(before.documents, after.documents, strict=True):
        paths = touched.get(old.index, [])
        assert strip_paths(old.data, paths) == strip_paths(new.data, paths)
        assert _keys(old.data) <= _keys(new.data)


def _keys(data: Any, prefix: tuple[Any, ...] = ()) -> set[tuple[Any, ...]]:
    found: set[tuple[Any, ...]] = set()
    if isinstance(data, dict):
        for key, value in data.items():
            found.add((*prefix, key))
            found |= _keys(value, (*prefix, key))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            found |= _keys(value, (*prefix, i))
    return found
