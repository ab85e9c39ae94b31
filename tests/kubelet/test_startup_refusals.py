"""Start-up refusals: more NUMA nodes than masks can be enumerated, options the none CPU policy refuses."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from kubegpu.cli.main import app


def test_admit_on_a_34_numa_node_profile_exits_2(tmp_path: Path) -> None:
    # A probed GB200 tray reports 34 NUMA nodes; allowing them all through max-allowable-numa-nodes
    # would make hint generation enumerate 2^34 masks.
    profile = {
        "name": "wide",
        "cpus": [{"id": i, "core": i, "socket": 0, "numa": i % 2} for i in range(8)],
        "numa_nodes": [{"id": n, "memory_bytes": 2**30} for n in range(34)],
        "gpus": [],
    }
    (tmp_path / "node.json").write_text(json.dumps(profile))
    (tmp_path / "kubelet.yaml").write_text(
        "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
        "topologyManagerPolicy: restricted\ntopologyManagerPolicyOptions:\n  max-allowable-numa-nodes: '40'\n"
    )
    (tmp_path / "pod.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    image: i\n"
        "    resources: {limits: {cpu: '2', memory: 1Gi}}\n"
    )
    result = CliRunner().invoke(
        app,
        [
            "admit",
            str(tmp_path / "pod.yaml"),
            "--node",
            str(tmp_path / "node.json"),
            "--kubelet-config",
            str(tmp_path / "kubelet.yaml"),
        ],
    )
    assert result.exit_code == 2, result.output
    assert "34 NUMA nodes" in result.output
    assert "Traceback" not in result.output


def test_none_cpu_policy_with_options_stops_the_kubelet() -> None:
    # cpumanager NewNonePolicy (v1.35) refuses any cpuManagerPolicyOptions.
    from kubegpu.kubelet import KubeletConfig, check_startup
    from kubegpu.topology.presets import load_preset

    config = KubeletConfig.from_dict(
        {
            "apiVersion": "kubelet.config.k8s.io/v1beta1",
            "kind": "KubeletConfiguration",
            "cpuManagerPolicyOptions": {"full-pcpus-only": "true"},
        },
        "kubelet.yaml",
    )
    error = check_startup(load_preset("dgx-h100"), config)
    assert error is not None
    assert "None policy: received unsupported options=map[full-pcpus-only:true]" in str(error)
