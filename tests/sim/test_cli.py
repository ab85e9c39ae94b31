"""`kubegpu simulate` end to end through the typer app: JSON keys, events mode, errors exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kubegpu.cli.main import app
from kubegpu.sim.traces.openb import BUNDLED_DIR, node_list, variant_files

OPENB = BUNDLED_DIR
runner = CliRunner()


def test_fgd_repro_json_keys() -> None:
    result = runner.invoke(
        app,
        [
            "simulate",
            "fgd-repro",
            "--data",
            str(OPENB),
            "--policy",
            "random",
            "--seeds",
            "42",
            "--workers",
            "1",
            "-o",
            "json",
        ],
    )
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)
    assert rows[0]["policy"] == "random" and rows[0]["workload"] == "default"
    assert rows[0]["seeds"] == [42] and rows[0]["arrival"] == 1.3
    assert abs(rows[0]["gpu_alloc_ratio_mean"] - rows[0]["published_mean"]) < 1.5


def test_simulate_static_csv_and_plot(tmp_path: Path) -> None:
    plot = tmp_path / "alloc.png"
    report = tmp_path / "report.md"
    result = runner.invoke(
        app,
        [
            "simulate",
            "--nodes",
            str(node_list(OPENB)),
            "--pods",
            str(variant_files(OPENB)["multigpu20"]),
            "--policy",
            "dotprod",
            "--arrival",
            "1.3",
            "--seeds",
            "42",
            "-o",
            "csv",
            "--plot",
            str(plot),
            "--report",
            str(report),
        ],
    )
    assert result.exit_code == 0, result.output
    header, row = result.output.strip().splitlines()[:2]
    assert header.startswith("workload,policy,seeds") and row.startswith("multigpu20,dotprod,42")
    assert plot.stat().st_size > 1000 and "| multigpu20 | dotprod |" in report.read_text()


def test_simulate_events_synthetic(tmp_path: Path) -> None:
    spec = tmp_path / "cluster.yaml"
    spec.write_text("nodes:\n- preset: dgx-h100\n  count: 4\n  blocks: 1\n  racks_per_block: 2\n")
    result = runner.invoke(
        app,
        [
            "simulate",
            "--nodes",
            str(spec),
            "--synthetic",
            "20",
            "--rate",
            "120",
            "--gang",
            "both",
            "--policy",
            "most-allocated",
            "-o",
            "json",
        ],
    )
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)
    assert [r["gang"] for r in rows] == ["all-or-nothing", "pod-by-pod"]
    assert all(r["pods"] == rows[0]["pods"] for r in rows)


def test_kubelet_admission_rejections_are_counted(tmp_path: Path) -> None:
    spec = tmp_path / "cluster.yaml"
    spec.write_text("nodes:\n- preset: dgx-h100\n  count: 2\n")
    kubelet = tmp_path / "kubelet.yaml"
    kubelet.write_text(
        "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
        "topologyManagerPolicy: single-numa-node\n"
    )
    jobs = tmp_path / "jobs.yaml"
    jobs.write_text(
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: big, annotations: {kubegpu.io/duration: 1h}}\n"
        "spec: {template: {spec: {containers: [{name: c, image: trainer, resources: {limits: "
        "{cpu: '8', memory: 64Gi, nvidia.com/gpu: 8}}}]}}}\n"
    )
    result = runner.invoke(
        app, ["simulate", "--nodes", str(spec), "--pods", str(jobs), "--kubelet-config", str(kubelet), "-o", "json"]
    )
    assert result.exit_code == 0, result.output
    row = json.loads(result.output)[0]
    assert row["kubelet_rejections"].get("TopologyAffinityError", 0) >= 1
    assert row["pending_pods"] == 1


@pytest.mark.parametrize(
    "args",
    [
        ["simulate", "--nodes", "/no/such/nodes.csv", "--pods", "/no/such.csv"],
        ["simulate", "--synthetic", "3"],
        ["simulate", "fgd-repro", "--data", "/no/such/folder"],
        ["simulate", "fgd-repro", "--seeds", "x-y"],
    ],
)
def test_errors_are_one_line_exit_2(args: list[str]) -> None:
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    assert "Traceback" not in result.output


def test_a_job_without_apiversion_is_refused_with_its_line(tmp_path: Path) -> None:
    """Manifests are read as every command reads them: an object the API server would refuse is an input error."""
    spec = tmp_path / "cluster.yaml"
    spec.write_text("nodes:\n- preset: dgx-h100\n  count: 1\n")
    jobs = tmp_path / "jobs.yaml"
    jobs.write_text(
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: ok}\n"
        "spec: {template: {spec: {containers: [{name: c, image: t, resources: {limits: {nvidia.com/gpu: 1}}}]}}}\n"
        "---\nkind: Job\nmetadata: {name: bad}\n"
    )
    result = runner.invoke(app, ["simulate", "--nodes", str(spec), "--pods", str(jobs)])
    assert result.exit_code == 2
    assert f"{jobs}:6:" in result.output and "has no apiVersion, which the API server requires" in result.output
