"""`kubegpu nodes` lists every preset; `nodes show` prints text, JSON and YAML that load back."""

from __future__ import annotations

import json

import yaml
from typer.testing import CliRunner

from kubegpu.cli.main import app
from kubegpu.topology.model import NodeTopology
from kubegpu.topology.presets import load_preset, preset_names

runner = CliRunner()


def test_nodes_lists_every_preset() -> None:
    result = runner.invoke(app, ["nodes"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].split() == ["NAME", "CPUS", "CORES", "SOCKETS", "NUMA", "GPUS", "MODEL"]
    listed = {line.split()[0] for line in lines[1:]}
    assert listed == set(preset_names())
    dgx = next(line for line in lines if line.startswith("dgx-h100 "))
    assert dgx.split()[1:6] == ["224", "112", "2", "2", "8"]


def test_nodes_json() -> None:
    result = runner.invoke(app, ["nodes", "-o", "json"])
    rows = json.loads(result.output)
    p5 = next(r for r in rows if r["name"] == "aws-p5.48xlarge")
    assert (p5["cpus"], p5["gpus"], p5["gpu_model"]) == (192, 8, "NVIDIA H100 80GB HBM3")


def test_show_json_and_yaml_round_trip() -> None:
    for fmt, loader in (("json", json.loads), ("yaml", yaml.safe_load)):
        result = runner.invoke(app, ["nodes", "show", "gb200-nvl72-tray", "-o", fmt])
        assert result.exit_code == 0, result.output
        assert NodeTopology.from_dict(loader(result.output)) == load_preset("gb200-nvl72-tray")


def test_show_text() -> None:
    result = runner.invoke(app, ["nodes", "show", "dgx-h100"])
    assert result.exit_code == 0
    assert "node 0: cpus 0-55,112-167 (socket 0)" in result.output
    assert "0000:1b:00.0 NUMA 0" in result.output
    assert "Estimates" in result.output


def test_show_unknown_is_one_line_exit_2() -> None:
    result = runner.invoke(app, ["nodes", "show", "no-such-node"])
    assert result.exit_code == 2
    assert "no node preset or profile file named 'no-such-node'" in result.output
    assert "Traceback" not in result.output
