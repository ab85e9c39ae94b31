"""Input rules (KG001-KG007) and suppressions: the YAML case table, and unreadable files read from disk."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kubegpu.lint import LintConfig, lint_paths
from tests.rules.kg_cases import case_ids, load_table, run_case

TABLE = load_table("inputs.yaml")
_GPU_POD = (
    "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
    "  - {name: a, image: 'x:1.0', resources: {limits: {nvidia.com/gpu: 1}}}\n"
)


@pytest.mark.parametrize("case", TABLE["cases"], ids=case_ids(TABLE))
def test_case(case: dict[str, Any]) -> None:
    run_case(TABLE, case)


def _lint(*paths: Path, **config: Any) -> list[tuple[str, str, int]]:
    result = lint_paths([str(p) for p in paths], LintConfig(select=("KG0", "KG201"), **config))
    return [(Path(f.location.file).name, f.name, f.location.line) for f in result.findings]


def test_unreadable_files_are_reported_and_the_rest_is_linted(tmp_path: Path) -> None:
    (tmp_path / "a-binary.yaml").write_bytes(b"\x00\x01\x02\xff" * 64)
    (tmp_path / "b-latin1.yaml").write_bytes("name: caf\xe9\n".encode("latin-1"))
    (tmp_path / "c-good.yaml").write_text(_GPU_POD)
    found = _lint(tmp_path)
    assert ("a-binary.yaml", "unreadable-file", 1) in found
    assert ("b-latin1.yaml", "unreadable-file", 1) in found
    assert ("c-good.yaml", "dshm-missing", 6) in found


def test_a_file_over_the_size_limit_is_not_read(tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    big.write_text(_GPU_POD + "#" * 4096 + "\n")
    assert _lint(big, max_file_bytes=1024) == [("big.yaml", "unreadable-file", 1)]
    assert _lint(big) == [("big.yaml", "dshm-missing", 6)]


def test_a_missing_file_is_unreadable(tmp_path: Path) -> None:
    result = lint_paths([str(tmp_path / "nope.yaml")], LintConfig())
    assert [f.name for f in result.findings] == ["unreadable-file"]
    assert result.unreadable


def test_input_rules_can_be_ignored_like_any_other(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text("kind: Deployment\n")
    assert _lint(path) == [("broken.yaml", "not-kubernetes-object", 1)]
    result = lint_paths([str(path)], LintConfig(ignore=("not-kubernetes-object",)))
    assert result.findings == []
