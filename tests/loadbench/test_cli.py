"""`kubegpu loadbench` end to end on small synthetic models and on a model folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kubegpu.cli.main import app
from kubegpu.loadbench.shards import Shard

runner = CliRunner()


def test_synthetic_json(tmp_path: Path) -> None:
    folder = tmp_path / "shards"
    result = runner.invoke(
        app,
        [
            "loadbench",
            "--synthetic",
            "6Mi",
            "--shard-size",
            "4Mi",
            "--dir",
            str(folder),
            "--keep",
            "--threads",
            "1,2",
            "--methods",
            "read,mmap",
            "--no-gpu",
            "-o",
            "json",
            "--plot",
            str(tmp_path / "p.png"),
            "--no-progress",
        ],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert len(data["files"]) == 2 and data["tensors"] >= 10
    assert {(r["method"], r["threads"], r["cache"]) for r in data["runs"]} == {
        (m, t, c) for m in ("read", "mmap") for t in (1, 2) for c in ("cold", "warm")
    }
    assert data["best"]["method"] in ("read", "mmap")
    assert (tmp_path / "p.png").is_file() and len(list(folder.glob("*.safetensors"))) == 2


def test_model_folder_text(model: list[Shard]) -> None:
    folder = model[0].path.parent
    result = runner.invoke(
        app,
        [
            "loadbench",
            str(folder),
            "--threads",
            "2",
            "--no-warm",
            "--no-gpu",
            "--methods",
            "read,safetensors,runai-model-streamer",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "storage limit:" in result.output and "recommendation:" in result.output
    assert "read" in result.output


def test_temporary_shards_are_removed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KUBEGPU_SCRATCH", str(tmp_path))
    result = runner.invoke(
        app, ["loadbench", "--synthetic", "2Mi", "--threads", "1", "--methods", "read", "--no-warm", "--no-gpu"]
    )
    assert result.exit_code == 0, result.output
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "give either model folders"),
        (["--synthetic", "2Mi", "x"], "give either model folders"),
        (["--synthetic", "lots"], "--synthetic"),
        (["--synthetic", "2Mi", "--threads", "0"], "--threads must list numbers of at least 1"),
        (["--synthetic", "2Mi", "--threads", "a,b"], "--threads must be comma-separated"),
        (["--synthetic", "2Mi", "--methods", "magic"], "unknown loader 'magic'"),
        (["/no/such/model"], "no such file or folder"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args: list[str], message: str) -> None:
    result = runner.invoke(app, ["loadbench", *args])
    assert result.exit_code == 2
    assert message in result.output and "Traceback" not in result.output


def test_a_folder_that_already_has_shards_is_refused(model: list[Shard]) -> None:
    result = runner.invoke(app, ["loadbench", "--synthetic", "2Mi", "--dir", str(model[0].path.parent)])
    assert result.exit_code == 2 and "already holds" in result.output


def test_progress_bar_goes_to_stderr(tmp_path: Path) -> None:
    result = runner.invoke(
        app,
        [
            "loadbench",
            "--synthetic",
            "2Mi",
            "--dir",
            str(tmp_path / "m"),
            "--threads",
            "1",
            "--methods",
            "read",
            "--no-warm",
            "--no-gpu",
            "-o",
            "json",
            "--progress",
        ],
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["runs"]  # stdout stays pure JSON
