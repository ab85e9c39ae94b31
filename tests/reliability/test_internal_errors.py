"""A kubegpu bug met in one file exits 3 with "internal error while reading FILE", after the other files' results."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from kubegpu.cli.main import app
from kubegpu.lint import engine
from kubegpu.manifests import Document

POD = (
    "apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}}}\nspec:\n  containers:\n  - name: a\n    image: b:1\n"
    "    resources: {{limits: {{nvidia.com/gpu: 1, memory: 8Gi}}}}\n"
)


@pytest.fixture
def broken_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make linting any document named `boom` fail as a bug in a rule would."""
    real = engine._lint_document

    def lint_document(doc: Document, *args: Any) -> None:
        if doc.ref.name == "boom":
            raise KeyError("a bug")
        real(doc, *args)

    monkeypatch.setattr(engine, "_lint_document", lint_document)


def _inputs(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(POD.format(name="good-a"))
    (tmp_path / "b.yaml").write_text(POD.format(name="boom"))
    (tmp_path / "c.yaml").write_text(POD.format(name="good-c"))


@pytest.mark.usefixtures("broken_rule")
def test_lint_exits_3_and_keeps_the_other_files_results(tmp_path: Path) -> None:
    _inputs(tmp_path)
    result = CliRunner().invoke(app, ["lint", str(tmp_path)])
    assert result.exit_code == 3, result.output
    assert f"internal error while reading {tmp_path / 'b.yaml'}: KeyError" in result.output
    assert result.output.count("KG201") == 2  # a.yaml and c.yaml were still linted and reported
    assert "Traceback" not in result.output


@pytest.mark.usefixtures("broken_rule")
def test_fix_exits_3_and_fixes_the_other_files(tmp_path: Path) -> None:
    _inputs(tmp_path)
    result = CliRunner().invoke(app, ["fix", "--unsafe-fixes", str(tmp_path)])
    assert result.exit_code == 3, result.output
    assert f"internal error while reading {tmp_path / 'b.yaml'}" in result.output
    assert "/dev/shm" in (tmp_path / "a.yaml").read_text() and "/dev/shm" in (tmp_path / "c.yaml").read_text()
    assert (tmp_path / "b.yaml").read_text() == POD.format(name="boom")


def test_the_documented_exit_codes_match() -> None:
    docs = Path(__file__).parents[2] / "docs" / "commands"
    for page in ("lint.md", "fix.md"):
        text = (docs / page).read_text()
        assert "3" in text and "internal error" in text, page
