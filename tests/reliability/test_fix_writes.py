"""fix writes only what it read: a file changed during the run is reported and left alone; a read-only folder
is one error with the other files fixed; temp files of a run killed mid-write are removed by the next run,
and kill -9 never leaves a partial file."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from kubegpu.cli.main import app
from kubegpu.fix import FindingLike, FixOptions, fix_input, read_input, write_outcome
from kubegpu.fix.files import ChangedSinceRead, remove_leftovers
from kubegpu.lint import LintConfig, lint_text

POD = (
    "apiVersion: v1\nkind: Pod\nmetadata: {{name: p{n}}}\nspec:\n  containers:\n  - name: a\n    image: b:1\n"
    "    resources: {{limits: {{nvidia.com/gpu: 1, memory: 8Gi}}}}\n"
)


def _lint(name: str, text: str) -> Sequence[FindingLike]:
    return lint_text(name, text, LintConfig()).findings


@pytest.mark.parametrize("change", ["append", "same-size", "touch"])
def test_a_file_changed_after_reading_is_left_alone(tmp_path: Path, change: str) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(POD.format(n=0))
    item = read_input("p.yaml", path)
    outcome = fix_input(item, _lint, FixOptions(unsafe=True))
    assert outcome.changed
    if change == "append":
        with path.open("a") as handle:
            handle.write("# added by someone else\n")
    elif change == "same-size":
        path.write_text(POD.format(n=1))
    else:
        os.utime(path, ns=(time.time_ns(), time.time_ns() + 5_000_000_000))
    before = path.read_bytes()
    with pytest.raises(ChangedSinceRead, match="changed since it was read"):
        write_outcome(item, outcome)
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["p.yaml"]


def test_an_unchanged_file_is_written(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(POD.format(n=0))
    item = read_input("p.yaml", path)
    assert write_outcome(item, fix_input(item, _lint, FixOptions(unsafe=True)))
    assert "/dev/shm" in path.read_text()


def test_a_folder_without_write_permission(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "a.yaml").write_text(POD.format(n=0))
    (tmp_path / "b.yaml").write_text(POD.format(n=1))
    if os.geteuid() == 0:  # root writes anywhere: make the temp file creation fail as it would
        import tempfile

        real = tempfile.mkstemp

        def mkstemp(*args: object, dir: str | Path | None = None, **kw: object) -> tuple[int, str]:
            if dir is not None and Path(dir) == locked:
                raise PermissionError(13, "Permission denied")
            return real(*args, dir=dir, **kw)  # type: ignore[call-overload,no-any-return]

        monkeypatch.setattr(tempfile, "mkstemp", mkstemp)
    locked.chmod(0o555)
    try:
        result = CliRunner().invoke(app, ["fix", "--unsafe-fixes", str(tmp_path)])
    finally:
        locked.chmod(0o755)
    assert result.exit_code == 2, result.output
    assert "Permission denied" in result.output
    assert "/dev/shm" in (tmp_path / "b.yaml").read_text()
    assert (locked / "a.yaml").read_text() == POD.format(n=0)


def test_leftovers_of_a_dead_process_are_removed(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True
    )
    dead = int(done.stdout)
    leftover = tmp_path / f".p.yaml.{dead}.abc123.kubegpu.tmp"
    leftover.write_text("partial")
    mine = tmp_path / f".q.yaml.{os.getpid()}.abc123.kubegpu.tmp"
    mine.write_text("in progress")
    other = tmp_path / ".p.yaml.notes"
    other.write_text("not ours")
    assert remove_leftovers(tmp_path) == [leftover]
    assert not leftover.exists() and mine.exists() and other.exists()


def test_kill_9_during_fix_never_leaves_a_partial_file(tmp_path: Path) -> None:
    originals = {}
    for n in range(40):
        text = POD.format(n=n) + "".join(f"# padding line {i} {'x' * 60}\n" for i in range(400))
        (tmp_path / f"p{n:02}.yaml").write_text(text)
        originals[f"p{n:02}.yaml"] = text
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2] / "src")}
    for delay in (0.4, 0.8, 1.2, 1.6, 2.0):
        proc = subprocess.Popen(
            [sys.executable, "-m", "kubegpu.cli.entry", "fix", "--unsafe-fixes", str(tmp_path)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        for name, text in originals.items():
            now = (tmp_path / name).read_text()
            assert now == text or ("/dev/shm" in now and now.startswith(text[:40])), name
            yaml.safe_load(now)
    done = subprocess.run(
        [sys.executable, "-m", "kubegpu.cli.entry", "fix", "--unsafe-fixes", str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    assert done.returncode in (0, 1), done.stderr
    assert sorted(os.listdir(tmp_path)) == sorted(originals)
    assert all("/dev/shm" in (tmp_path / name).read_text() for name in originals)
