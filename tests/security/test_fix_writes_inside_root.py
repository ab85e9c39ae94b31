"""`kubegpu fix` edits regular files inside the root only (each path named on the command line), keeps their
mode, and refuses, with a one-line reason, symbolic links, read-only files and files with several hard links.
Before, it wrote through a link to a file outside the repository, rewrote 0444 files and split hard links."""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from kubegpu.errors import InputError
from kubegpu.fix import FindingLike, FixOptions, fix_input, read_input, write_outcome
from kubegpu.lint import LintConfig, lint_text
from kubegpu.manifests.atomic import replace_in_place

POD = (
    "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n"
    "    image: nvcr.io/nvidia/pytorch:24.05-py3\n    imagePullPolicy: Always\n"
    "    resources: {limits: {nvidia.com/gpu: 1, memory: 16Gi}}\n"
)
SECRET = "# a file outside the repository: token=hunter2\n" + POD


def _lint(name: str, text: str) -> Sequence[FindingLike]:
    return lint_text(name, text, LintConfig()).findings


def _snapshot(folder: Path) -> dict[str, tuple[str, int, int, int]]:
    """Every entry under `folder`: content hash (or link target), mode, inode and link count."""
    out = {}
    for path in sorted(folder.rglob("*")):
        info = path.lstat()
        if path.is_symlink():
            digest = "-> " + os.readlink(path)
        elif path.is_file():
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
        else:
            digest = "dir"
        out[str(path.relative_to(folder))] = (digest, info.st_mode, info.st_ino, info.st_nlink)
    return out


def _fix(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kubegpu", "fix", "--unsafe-fixes", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture
def hostile(tmp_path: Path) -> tuple[Path, Path]:
    """A repository holding a link to a file outside it, a hard link to one, a read-only file, a link to a
    folder outside it and one ordinary manifest; and the folder outside."""
    repo, outside = tmp_path / "repo", tmp_path / "outside"
    repo.mkdir()
    (outside / "nested").mkdir(parents=True)
    (outside / "target.yaml").write_text(SECRET)
    (outside / "nested" / "deep.yaml").write_text(SECRET)
    (outside / "hard.yaml").write_text(SECRET)
    (repo / "link.yaml").symlink_to(outside / "target.yaml")
    (repo / "relative-link.yaml").symlink_to(Path("..") / "outside" / "target.yaml")
    os.link(outside / "hard.yaml", repo / "hard.yaml")
    (repo / "read-only.yaml").write_text(POD)
    (repo / "read-only.yaml").chmod(0o444)
    (repo / "linked-folder").symlink_to(outside / "nested")
    (repo / "ok.yaml").write_text(POD)
    (repo / "ok.yaml").chmod(0o640)
    return repo, outside


@pytest.mark.parametrize("mode", [[], ["--check"], ["--diff"]])
def test_a_hostile_repository_is_fixed_inside_only(hostile: tuple[Path, Path], mode: list[str]) -> None:
    repo, outside = hostile
    before_outside, before_repo = _snapshot(outside), _snapshot(repo)
    done = _fix(*mode, ".", cwd=repo)
    assert done.returncode == 2, done.stdout + done.stderr  # refusals are errors: the run says so
    assert "Traceback" not in done.stderr
    assert _snapshot(outside) == before_outside  # nothing outside written, no link split, no mode changed
    assert "hunter2" not in done.stdout + done.stderr  # nor read into the output (--diff)
    refused = {line.split(":")[0]: line for line in done.stderr.splitlines() if ": not fixed: " in line}
    # links out of the root are never followed: the walk refuses each (a folder behind a link is never walked)
    assert set(refused) == {"link.yaml", "relative-link.yaml", "hard.yaml", "read-only.yaml"}
    for link in ("link.yaml", "relative-link.yaml"):
        assert "a symbolic link leading outside ./: not followed" in refused[link]
    assert "has 2 hard links" in refused["hard.yaml"]
    assert "is read-only (mode -r--r--r--)" in refused["read-only.yaml"]
    after_repo = _snapshot(repo)
    for name in ("link.yaml", "relative-link.yaml", "hard.yaml", "read-only.yaml", "linked-folder"):
        assert after_repo[name] == before_repo[name]
    if not mode:
        assert "/dev/shm" in (repo / "ok.yaml").read_text()
        assert stat.S_IMODE((repo / "ok.yaml").stat().st_mode) == 0o640
    else:
        assert after_repo == before_repo


def test_a_named_link_is_refused_wherever_it_points(tmp_path: Path) -> None:
    (tmp_path / "real.yaml").write_text(POD)
    (tmp_path / "link.yaml").symlink_to("real.yaml")
    done = _fix("link.yaml", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[0] == (
        "link.yaml: not fixed: is a symbolic link: written only as the file it points to, by that name"
    )
    assert (tmp_path / "real.yaml").read_text() == POD


@pytest.mark.parametrize("mode", [0o600, 0o640, 0o664, 0o755])
def test_the_mode_is_kept(tmp_path: Path, mode: int) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(POD)
    path.chmod(mode)
    item = read_input("p.yaml", path)
    assert write_outcome(item, fix_input(item, _lint, FixOptions(unsafe=True)))
    assert stat.S_IMODE(path.stat().st_mode) == mode and "/dev/shm" in path.read_text()


def test_a_file_swapped_for_a_link_after_reading_is_not_written_through(tmp_path: Path) -> None:
    outside = tmp_path / "outside.yaml"
    outside.write_text(SECRET)
    repo = tmp_path / "repo"
    repo.mkdir()
    path = repo / "p.yaml"
    path.write_text(POD)
    item = read_input("p.yaml", path)
    outcome = fix_input(item, _lint, FixOptions(unsafe=True))
    path.unlink()
    path.symlink_to(outside)  # what a process racing the fix would do
    with pytest.raises(InputError, match=r"was replaced since it was read|is a symbolic link"):  # (inodes are reused)
        write_outcome(item, outcome)
    assert outside.read_text() == SECRET and path.is_symlink()
    assert sorted(os.listdir(repo)) == ["p.yaml"]  # the temp file is gone


def test_a_file_hard_linked_after_reading_is_not_split(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(POD)
    item = read_input("p.yaml", path)
    outcome = fix_input(item, _lint, FixOptions(unsafe=True))
    os.link(path, tmp_path / "other-name.yaml")
    with pytest.raises(InputError, match="has 2 hard links"):
        write_outcome(item, outcome)
    assert path.read_text() == POD and path.stat().st_nlink == 2


def test_a_folder_swapped_for_a_link_during_the_write_is_not_followed(tmp_path: Path) -> None:
    """The folder is opened once: if its name is made to lead elsewhere right before the rename, the rename
    still happens in the folder that was read (or fails), never in the other one."""
    repo, elsewhere = tmp_path / "repo", tmp_path / "elsewhere"
    repo.mkdir()
    elsewhere.mkdir()
    (elsewhere / "p.yaml").write_text(SECRET)
    path = repo / "p.yaml"
    path.write_text(POD)
    read = os.lstat(path)

    def swap(target: Path) -> None:
        repo.rename(tmp_path / "moved")
        repo.symlink_to(elsewhere)

    replace_in_place(path, "fixed: true\n", read, before_replace=swap)
    assert (elsewhere / "p.yaml").read_text() == SECRET
    assert (tmp_path / "moved" / "p.yaml").read_text() == "fixed: true\n"
    assert [p.name for p in elsewhere.iterdir()] == ["p.yaml"]
