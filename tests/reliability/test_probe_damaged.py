"""`probe` on a damaged or unreadable sysfs tree: one line naming what could not be read, exit 2.

Tests run as root here, where permission bits do not stop reading: a folder replaced by a file, or a file by a
folder, gives the same OSError an unreadable directory does (NotADirectoryError, IsADirectoryError)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kubegpu.cli.main import app
from kubegpu.topology.presets import load_preset
from tests.probe.fakefs import write_machine


@pytest.mark.parametrize(
    "damaged",
    ["devices/system/node", "devices/system/node/node0", "devices/system/cpu/cpu0/topology", "bus/pci/devices"],
)
def test_damaged_sysfs_is_one_line(tmp_path: Path, damaged: str) -> None:
    write_machine(load_preset("dgx-h100"), tmp_path)
    target = tmp_path / "sys" / damaged
    if target.is_dir():
        shutil.rmtree(target)
    target.write_text("not a folder\n")
    result = CliRunner().invoke(
        app, ["probe", "--sysfs-root", str(tmp_path / "sys"), "--procfs-root", str(tmp_path / "proc"), "--no-nvml"]
    )
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code in (0, 2), result.output
    if result.exit_code == 2:
        assert result.output.startswith("kubegpu: error:") and result.output.count("\n") == 1


@pytest.mark.parametrize("unreadable", ["devices/system/node", "bus/pci/devices"])
def test_unreadable_sysfs_folder_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, unreadable: str) -> None:
    write_machine(load_preset("dgx-h100"), tmp_path)
    blocked = tmp_path / "sys" / unreadable
    real = Path.iterdir

    def iterdir(self: Path):  # type: ignore[no-untyped-def]  # root reads mode-000 folders: refuse as a user is
        if self == blocked:
            raise PermissionError(13, "Permission denied", str(self))
        return real(self)

    monkeypatch.setattr(Path, "iterdir", iterdir)
    result = CliRunner().invoke(
        app, ["probe", "--sysfs-root", str(tmp_path / "sys"), "--procfs-root", str(tmp_path / "proc"), "--no-nvml"]
    )
    assert result.exit_code == 2, (result.output, result.exception)
    assert result.output == f"kubegpu: error: cannot read {blocked}: Permission denied\n"
