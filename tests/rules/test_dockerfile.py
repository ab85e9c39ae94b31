"""dockerfile-devel-final-stage: the case table through the engine, and the Dockerfile reader itself."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from kubegpu.lint import LintConfig, lint_loaded, lint_paths
from kubegpu.lint.engine import LoadedSource
from kubegpu.manifests import SourceText
from kubegpu.manifests.dockerfile import instructions, root_chain, stages, substitute

TABLE = yaml.safe_load((Path(__file__).parent / "cases" / "dockerfile.yaml").read_text())


def _lint(name: str, text: str, select: tuple[str, ...]) -> list[tuple[str, int]]:
    source = LoadedSource(SourceText(name, text, kind="dockerfile"), (), ())
    result = lint_loaded([source], LintConfig(select=select))
    return sorted((f.name, f.location.line) for f in result.findings)


@pytest.mark.parametrize("case", TABLE["cases"], ids=[c["name"] for c in TABLE["cases"]])
def test_case(case: dict[str, Any]) -> None:
    got = _lint(case.get("file", "Dockerfile"), case["dockerfile"], tuple(case.get("select", TABLE["select"])))
    want = [] if case["expect"] == "none" else sorted((e["rule"], e["line"]) for e in case["expect"])
    assert got == want


def test_message_names_the_chain_and_the_runtime_variant() -> None:
    text = "FROM nvidia/cuda:12.4.1-cudnn-devel-ubuntu22.04 AS base\nFROM base AS app\n"
    result = lint_loaded(
        [LoadedSource(SourceText("Dockerfile", text, kind="dockerfile"), (), ())], LintConfig(select=("KG304",))
    )
    [finding] = result.findings
    assert "via stage(s) base" in finding.message
    assert "nvidia/cuda:12.4.1-cudnn-runtime-ubuntu22.04" in finding.message
    assert finding.location.line == 2


def test_lint_paths_reads_dockerfiles_by_name(tmp_path: Path) -> None:
    (tmp_path / "Dockerfile.gpu").write_text("FROM nvidia/cuda:12.4.1-devel-ubuntu22.04\n")
    (tmp_path / "ok.Dockerfile").write_text("FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04\n")
    result = lint_paths([str(tmp_path)], LintConfig(select=("dockerfile-devel-final-stage",)))
    assert [(Path(f.location.file).name, f.location.line) for f in result.findings] == [("Dockerfile.gpu", 1)]


def test_instructions_join_continuations_and_keep_first_line() -> None:
    text = "FROM a \\\n  AS b\n\n# c\nRUN x \\\n# inner comment\n  y\n"
    got = [(i.keyword, i.arguments, i.line) for i in instructions(text)]
    assert got == [("FROM", "a AS b", 1), ("RUN", "x y", 5)]


def test_stages_and_chain() -> None:
    parsed = stages("ARG V=1.0\nFROM img:${V} AS one\nFROM one AS two\nFROM other:2.0\nFROM two\n")
    assert [(s.resolved, s.name) for s in parsed] == [
        ("img:1.0", "one"),
        ("one", "two"),
        ("other:2.0", None),
        ("two", None),
    ]
    assert [s.index for s in root_chain(parsed, parsed[-1])] == [3, 1, 0]


def test_self_reference_does_not_loop() -> None:
    parsed = stages("FROM x AS x\nFROM x AS y\n")
    assert [s.index for s in root_chain(parsed, parsed[-1])] == [1, 0]


def test_substitute_operators() -> None:
    assert substitute("${A:-d}/${B:+alt}/$C", {"B": "b", "C": "c"}) == ("d/alt/c", ())
    assert substitute("${MISSING}-x", {}) == ("${MISSING}-x", ("MISSING",))


@given(st.text(alphabet=st.sampled_from(list("FROMRUNARG AS=$\\{}:-#`\n\tabc12./")), max_size=300))
def test_reader_never_crashes_and_lines_stay_in_range(text: str) -> None:
    count = len(text.splitlines())
    for instruction in instructions(text):
        assert 1 <= instruction.line <= max(count, 1)
    for stage in stages(text):
        assert root_chain(stages(text), stage)[0] is not None
