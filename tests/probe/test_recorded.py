"""Snapshots replay to the same profile and verdicts: fake machines, this one, recorded fixtures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kubegpu.cli.main import app
from kubegpu.probe.checks import run_checks
from kubegpu.probe.container import read_container
from kubegpu.probe.snapshot import load_recorded, snapshot
from kubegpu.topology.model import NodeTopology
from kubegpu.topology.presets import load_preset
from kubegpu.topology.sysfs import Roots, read_node
from tests.paths import REPO_ROOT
from tests.probe.fakefs import recorded_nvml, write_container, write_machine

FIXTURES = REPO_ROOT / "tests/fixtures/probe"
RECORDED = sorted(p for p in FIXTURES.iterdir() if (p / "snapshot").is_dir()) if FIXTURES.is_dir() else []
runner = CliRunner()


def _hardware(topo: NodeTopology) -> tuple[object, ...]:
    return (topo.cpus, topo.numa_nodes, topo.gpus)


def test_snapshot_of_fake_gpu_machine_replays(tmp_path: Path) -> None:
    topo = load_preset("dgx-h100")
    machine = write_machine(topo, tmp_path / "host")
    env = write_container(machine, topo, cpus=[56, 57, 168, 169], mems=[1], gpus=[4], shm_bytes=1 << 30)
    nvml = recorded_nvml(topo)
    snapshot(machine.roots, machine.cgroup, tmp_path / "snap", env, nvml)
    replay_nvml, replay_env = load_recorded(tmp_path / "snap")
    replay = Roots(sys=tmp_path / "snap/sys", proc=tmp_path / "snap/proc")
    assert _hardware(read_node(replay, nvml=replay_nvml)) == _hardware(read_node(machine.roots, nvml=nvml))
    original = run_checks(read_node(machine.roots), read_container(machine.roots, machine.cgroup, env))
    again = run_checks(read_node(replay), read_container(replay, tmp_path / "snap/cgroup", replay_env))
    assert again == original
    cli = runner.invoke(app, ["probe", "--replay", str(tmp_path / "snap"), "-o", "json"])
    assert _hardware(NodeTopology.from_dict(json.loads(cli.output))) == _hardware(topo)


def test_snapshot_refuses_a_used_folder(tmp_path: Path) -> None:
    (tmp_path / "x").mkdir()
    (tmp_path / "x/file").write_text("keep me")
    result = runner.invoke(app, ["probe", "--snapshot", str(tmp_path / "x")])
    assert result.exit_code == 2 and "must be empty" in result.output


def test_snapshot_of_this_machine_replays(tmp_path: Path) -> None:
    if not Path("/sys/devices/system/cpu").is_dir():
        pytest.skip("no /sys here")
    live = runner.invoke(app, ["probe", "--no-nvml", "--snapshot", str(tmp_path / "snap"), "-o", "json"])
    assert live.exit_code == 0, live.output
    replay = runner.invoke(app, ["probe", "--replay", str(tmp_path / "snap"), "-o", "json"])
    first, second = (NodeTopology.from_dict(json.loads(r.output)) for r in (live, replay))
    assert _hardware(first) == _hardware(second)


@pytest.mark.skipif(not RECORDED, reason="no recorded machine in tests/fixtures/probe yet")
@pytest.mark.parametrize("folder", RECORDED, ids=[p.name for p in RECORDED])
def test_recorded_machine(folder: Path) -> None:
    profile = runner.invoke(app, ["probe", "--replay", str(folder / "snapshot"), "-o", "json"])
    expected = NodeTopology.from_dict(json.loads((folder / "expected-profile.json").read_text()))
    assert _hardware(NodeTopology.from_dict(json.loads(profile.output))) == _hardware(expected)
    if (folder / "expected-check.json").exists():
        check = runner.invoke(app, ["probe", "--replay", str(folder / "snapshot"), "--check", "-o", "json"])
        want = json.loads((folder / "expected-check.json").read_text())
        got = json.loads(check.output)
        assert [(c["check"], c["status"]) for c in got["checks"]] == [(c["check"], c["status"]) for c in want["checks"]]


def test_snapshot_keeps_amd_render_nodes(tmp_path: Path) -> None:
    topo = load_preset("amd-mi300x-8gpu")
    machine = write_machine(topo, tmp_path / "host")
    write_container(machine, topo, cpus=[96, 288], mems=[1], gpus=[4], shm_bytes=1 << 30)
    snapshot(machine.roots, machine.cgroup, tmp_path / "snap", {}, None, tmp_path / "host/dev")
    result = runner.invoke(app, ["probe", "--replay", str(tmp_path / "snap"), "--check", "-o", "json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["container"]["gpus"] == [topo.gpus[4].pci_bus_id]
