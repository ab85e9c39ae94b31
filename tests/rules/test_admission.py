"""gpu-pod-unadmittable (KG901) and the lint command's --node / --kubelet-config options."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from kubegpu.cli.main import app
from kubegpu.errors import InputError
from kubegpu.kubelet.config import read_kubelet_config_data as read_kubelet_config
from tests.rules.kg_cases import case_ids, load_table, run_case

TABLE = load_table("admission.yaml")
POD = """\
apiVersion: v1
kind: Pod
metadata: {name: eight}
spec:
  containers:
  - name: train
    image: nvcr.io/nvidia/pytorch:24.05-py3
    resources:
      limits: {cpu: "16", memory: 128Gi, nvidia.com/gpu: 8}
"""
KUBELET = """\
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cpuManagerPolicy: static
memoryManagerPolicy: Static
topologyManagerPolicy: single-numa-node
topologyManagerScope: pod
reservedSystemCPUs: "0-1,112-113"
reservedMemory: [{numaNode: 0, limits: {memory: 4196Mi}}]
kubeReserved: {memory: 2Gi}
systemReserved: {memory: 2Gi}
"""


@pytest.mark.parametrize("case", TABLE["cases"], ids=case_ids(TABLE))
def test_case(case: dict[str, Any]) -> None:
    run_case(TABLE, case)


def test_lint_cli_with_node_and_kubelet_config(tmp_path: Path) -> None:
    pod = tmp_path / "pod.yaml"
    pod.write_text(POD)
    kubelet = tmp_path / "kubelet.yaml"
    kubelet.write_text(KUBELET)
    result = CliRunner().invoke(
        app,
        [
            "lint",
            str(pod),
            "--node",
            "dgx-h100",
            "--kubelet-config",
            str(kubelet),
            "--select",
            "KG901",
            "--select",
            "KG8",
            "-o",
            "json",
        ],
    )
    assert result.exit_code == 1, result.output
    assert '"gpu-pod-unadmittable"' in result.output and "TopologyAffinityError" in result.output
    assert '"files": 2' in result.output  # the kubelet configuration is linted as well


def test_lint_cli_rejects_bad_node_and_lone_kubelet_config(tmp_path: Path) -> None:
    pod = tmp_path / "pod.yaml"
    pod.write_text(POD)
    runner = CliRunner()
    unknown = runner.invoke(app, ["lint", str(pod), "--node", "no-such-node"])
    assert unknown.exit_code == 2 and "no-such-node" in unknown.output
    lonely = runner.invoke(app, ["lint", str(pod), "--kubelet-config", str(pod)])
    assert lonely.exit_code == 2


def test_read_kubelet_config_names_the_file(tmp_path: Path) -> None:
    other = tmp_path / "pod.yaml"
    other.write_text(POD)
    with pytest.raises(InputError, match="no KubeletConfiguration"):
        read_kubelet_config(str(other))
    with pytest.raises(InputError, match="cannot read"):
        read_kubelet_config(str(tmp_path / "missing.yaml"))
    good = tmp_path / "kubelet.yaml"
    good.write_text(KUBELET)
    assert read_kubelet_config(str(good))["topologyManagerPolicy"] == "single-numa-node"


def test_kubelet_config_inside_a_linted_folder_is_read_once(tmp_path: Path) -> None:
    (tmp_path / "pod.yaml").write_text(POD)
    kubelet = tmp_path / "kubelet.yaml"
    kubelet.write_text(KUBELET.replace("4196Mi", "2Gi"))
    result = CliRunner().invoke(
        app,
        [
            "lint",
            str(tmp_path),
            "--node",
            "dgx-h100",
            "--kubelet-config",
            str(kubelet),
            "--select",
            "KG804",
            "-o",
            "json",
        ],
    )
    assert result.output.count('"kubelet-reserved-memory-mismatch"') == 1, result.output
    assert '"files": 2' in result.output
