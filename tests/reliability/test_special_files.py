"""Only regular files are read (links followed): a FIFO, /dev/zero behind a *.yaml link, a directory named
like a manifest are one-line errors, never a hang or an exhausted memory; the size limit counts bytes read. In a
folder walk a link that leaves the folder (to /dev/zero) is not followed at all."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kubegpu.cli.main import app
from kubegpu.fix.files import read_input
from kubegpu.manifests import NotReadable, read_regular, read_source

POD = (
    "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: a\n    image: b:1\n"
    "    resources: {limits: {nvidia.com/gpu: 1, memory: 8Gi}}\n"
)


@pytest.fixture
def specials(tmp_path: Path) -> Path:
    os.mkfifo(tmp_path / "fifo.yaml")
    (tmp_path / "zero.yaml").symlink_to("/dev/zero")
    (tmp_path / "dir.yaml").mkdir()
    (tmp_path / "pod.yaml").write_text(POD)
    return tmp_path


@pytest.mark.parametrize(
    "name, reason, fix_reason",
    [
        ("fifo.yaml", "named pipe", "named pipe"),
        ("zero.yaml", "device", "symbolic link"),  # fix refuses the link itself: it never writes through one
        ("dir.yaml", "directory", "directory"),
    ],
)
def test_read_regular_refuses_what_is_not_a_regular_file(
    specials: Path, name: str, reason: str, fix_reason: str
) -> None:
    with pytest.raises(NotReadable, match=reason):
        read_regular(specials / name, 1000)
    assert reason in (read_source(name, specials / name, "manifest").error or "")
    assert fix_reason in (read_input(name, specials / name).error or "")


def test_the_limit_counts_bytes_read(tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    path.write_bytes(b"a" * 100)
    assert read_regular(path, 100) == b"a" * 100
    with pytest.raises(NotReadable, match="limit"):
        read_regular(path, 99)


def _run(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kubegpu.cli.entry", *args], capture_output=True, text=True, timeout=timeout, check=False
    )


@pytest.mark.parametrize("command", ["lint", "fix"])
def test_commands_finish_on_special_files_and_go_on(specials: Path, command: str) -> None:
    # a subprocess with a timeout: a hang fails the test instead of stopping the suite
    done = _run(command, "--unsafe-fixes" if command == "fix" else "--exit-zero", str(specials))
    # lint: the FIFO is a KG006 finding among files it could read, so --exit-zero exits 0 (exit 2 is for a run that
    # could read nothing: test_cli_runner_on_an_explicit_fifo); fix: a file it could not fix is exit 2
    assert done.returncode == (2 if command == "fix" else 0), done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    out = done.stdout + done.stderr
    assert "named pipe" in out
    # zero.yaml, a link to /dev/zero, leaves the folder given: it is never opened (lint counts it, fix refuses it)
    if command == "fix":
        assert "zero.yaml: not fixed: a symbolic link leading outside" in out
    else:
        assert "1 symbolic link was not followed" in out
    if command == "fix":
        assert "/dev/shm" in (specials / "pod.yaml").read_text()
    else:
        assert "KG201" in out


def test_cli_runner_on_an_explicit_fifo(specials: Path) -> None:
    result = CliRunner().invoke(app, ["lint", str(specials / "fifo.yaml")])
    assert result.exit_code == 2 and "named pipe" in result.output


@pytest.mark.parametrize("name", ["fifo.yaml", "zero.yaml"])
def test_commands_given_a_manifest_refuse_special_files(specials: Path, name: str) -> None:
    """simulate, admit, gen and coldstart read manifests as lint does: a FIFO or a device is a one-line error, not
    a hang."""
    (specials / "cluster.yaml").write_text("nodes:\n- preset: dgx-h100\n  count: 1\n")
    path = str(specials / name)
    for args in (
        ["simulate", "--nodes", str(specials / "cluster.yaml"), "--pods", path],
        ["admit", path, "--node", "dgx-h100"],
        ["gen", "prepull", "--from", path],
        ["gen", "volcano", "--for", path],
        ["coldstart", path],
    ):
        done = _run(*args, timeout=30)
        assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
        # a FIFO is refused when opened; a link to /dev/zero leaves the folder it is in and is never opened
        why = ("named pipe",) if name == "fifo.yaml" else ("device", "symbolic link")
        assert name in done.stderr and any(w in done.stderr for w in why), (args, done.stderr)


BOMB = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
    f"*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n"
    for i in range(8)
)


@pytest.mark.parametrize("name", ["fifo.yaml", "zero.yaml"])
def test_node_profiles_and_cluster_specs_refuse_special_files(specials: Path, name: str) -> None:
    """`--node FILE` (admit, gen kubelet) and simulate's `--nodes FILE` read as manifests are: no hang."""
    path = str(specials / name)
    for args in (
        ["admit", str(specials / "pod.yaml"), "--node", path],
        ["simulate", "--nodes", path, "--pods", str(specials / "pod.yaml")],
    ):
        done = _run(*args, timeout=30)
        assert done.returncode == 2 and "Traceback" not in done.stderr, (args, done.stderr)
        # a FIFO is refused when opened; a link to /dev/zero leaves the folder it is in and is never opened
        why = ("named pipe",) if name == "fifo.yaml" else ("device", "symbolic link")
        assert name in done.stderr and any(w in done.stderr for w in why), (args, done.stderr)


def test_node_profiles_and_cluster_specs_refuse_alias_bombs(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(BOMB)
    (tmp_path / "pod.yaml").write_text(POD)
    for args in (
        ["admit", str(tmp_path / "pod.yaml"), "--node", str(bomb)],
        ["simulate", "--nodes", str(bomb), "--pods", str(tmp_path / "pod.yaml")],
    ):
        done = _run(*args, timeout=60)
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        assert f"{bomb}: aliases expand it past" in done.stderr, (args, done.stderr)
