"""`kubegpu audit` end to end: against the recorded cluster over HTTP and from dump files."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from kubegpu.cli.main import app
from tests.live.conftest import CLUSTER, ServeFn


def test_audit_cluster_json(serve_cluster: ServeFn) -> None:
    kubeconfig = serve_cluster()
    result = CliRunner().invoke(app, ["audit", "--cluster", "--kubeconfig", str(kubeconfig), "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert (data["free_gpus"], data["stranded_gpus"], data["largest_placeable_gpus"]) == (15, 8, 3)
    assert len(data["nodes"]) == 5
    # lint rules on live GPU pods: llm-1 mounts /dev/shm, the other 6 live GPU pods do not
    shm = {f["target"] for f in data["lint_findings"] if f["rule"] == "KG201 dshm-missing"}
    assert shm == {
        "train/llm-0",
        "train/llm-big",
        "infer/embed-0",
        "infer/batch-0",
        "infer/l4-serve-0",
        "infer/l4-serve-1",
    }
    # kubelet rules on h100-b's configz: best-effort topology policy is reported
    assert any(f["target"] == "node/h100-b" and f["rule"].startswith("KG803") for f in data["kubelet_findings"])


def test_audit_namespace_filter_and_markdown() -> None:
    result = CliRunner().invoke(app, ["audit", "--snapshot", str(CLUSTER), "-n", "infer", "-o", "markdown"])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("# kubegpu audit of ")
    assert "| l4-a | NVIDIA-L4 | 4 | 1 | 3 | 2 | demand shapes can use only 1 of 3 | 2.33 |" in (result.output)
    assert "train/llm-0" not in result.output  # another namespace's pods are not reported
    assert "infer/embed-0" in result.output


def test_audit_text_and_errors() -> None:
    runner = CliRunner()
    text = runner.invoke(app, ["audit", "--snapshot", str(CLUSTER)])
    assert text.exit_code == 0 and "stranded GPUs: 8" in text.output
    assert "[warning]" in text.output  # severities are printed, not eaten as markup
    both = runner.invoke(app, ["audit", "--cluster", "--snapshot", str(CLUSTER)])
    assert both.exit_code == 2 and "exactly one of --cluster or --snapshot" in both.output


def test_lone_surrogate_in_a_dump_is_one_line_error(tmp_path: Path) -> None:
    text = (CLUSTER / "pods.json").read_text().replace('"llm-0"', '"llm-\\ud800"', 1)
    folder = tmp_path / "dump"
    folder.mkdir()
    (folder / "pods.json").write_text(text)
    (folder / "nodes.json").write_text((CLUSTER / "nodes.json").read_text())
    result = CliRunner().invoke(app, ["audit", "--snapshot", str(folder)])
    assert result.exit_code == 2 and "is not valid Unicode" in result.output


def test_accelerator_resources_setting_reaches_audit(tmp_path: Path) -> None:
    """lint's `accelerator-resources` (kubegpu.toml) decides which resources audit counts as accelerators."""
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "fpga-a"},
        "status": {
            "allocatable": {"cpu": "32", "memory": "128Gi", "example.com/fpga": "4", "pods": "110"},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "synth-0", "namespace": "hw"},
        "spec": {
            "nodeName": "fpga-a",
            "containers": [
                {
                    "name": "c",
                    "image": "synth:1",
                    "resources": {"limits": {"cpu": "4", "memory": "8Gi", "example.com/fpga": "1"}},
                }
            ],
        },
        "status": {"phase": "Running"},
    }
    (tmp_path / "nodes.json").write_text(json.dumps({"kind": "List", "items": [node]}), encoding="utf-8")
    (tmp_path / "pods.json").write_text(json.dumps({"kind": "List", "items": [pod]}), encoding="utf-8")
    config = tmp_path / "kubegpu.toml"
    config.write_text('extend-accelerator-resources = ["example.com/fpga"]\n', encoding="utf-8")

    def nodes(*extra: str) -> list[dict[str, object]]:
        result = CliRunner().invoke(
            app,
            [
                "audit",
                "--snapshot",
                str(tmp_path / "nodes.json"),
                "--snapshot",
                str(tmp_path / "pods.json"),
                "--format",
                "json",
                *extra,
            ],
        )
        assert result.exit_code == 0, result.output
        rows: list[dict[str, object]] = json.loads(result.output)["nodes"]
        return rows

    assert nodes() == []  # not an accelerator by default
    rows = nodes("--config", str(config))
    assert [(r["name"], r["resource"], r["used_gpus"], r["free_gpus"]) for r in rows] == [
        ("fpga-a", "example.com/fpga", 1, 3)
    ]
