"""`kubegpu probe` end to end on fake trees and on this machine; generated manifests validate."""

from __future__ import annotations

import json
from pathlib import Path

import kubernetes_validate
import pytest
import yaml
from typer.testing import CliRunner

from kubegpu.cli.main import app
from kubegpu.topology.model import NodeTopology
from kubegpu.topology.presets import load_node, load_preset
from tests.probe.fakefs import write_container, write_machine

runner = CliRunner()


def _args(machine_root: Path) -> list[str]:
    return ["--sysfs-root", str(machine_root / "sys"), "--procfs-root", str(machine_root / "proc")]


def test_probe_json_is_a_node_profile(tmp_path: Path) -> None:
    preset = load_preset("dgx-h100")
    write_machine(preset, tmp_path)
    result = runner.invoke(app, ["probe", *_args(tmp_path), "--no-nvml", "-o", "json", "--name", "gpu-7"])
    assert result.exit_code == 0, result.output
    profile = NodeTopology.from_dict(json.loads(result.output))
    assert profile.name == "gpu-7"
    assert (profile.cpus, profile.numa_nodes) == (preset.cpus, preset.numa_nodes)
    assert [g.pci_bus_id for g in profile.gpus] == [g.pci_bus_id for g in preset.gpus]
    # The same file works wherever a --node is accepted.
    saved = tmp_path / "gpu-7.json"
    saved.write_text(result.output)
    assert load_node(str(saved)).cpus == preset.cpus


def test_probe_yaml_and_text(tmp_path: Path) -> None:
    write_machine(load_preset("gb200-nvl72-tray"), tmp_path)
    as_yaml = runner.invoke(app, ["probe", *_args(tmp_path), "--no-nvml", "-o", "yaml"])
    assert NodeTopology.from_dict(yaml.safe_load(as_yaml.output)).numa_ids == (0, 1, 2, 10, 18, 26)
    text = runner.invoke(app, ["probe", *_args(tmp_path), "--no-nvml"])
    assert "node 2: memory only, no CPUs" in text.output


def test_check_exit_codes(tmp_path: Path) -> None:
    topo = load_preset("dgx-h100")
    machine = write_machine(topo, tmp_path)
    common = [
        *_args(tmp_path),
        "--no-nvml",
        "--check",
        "--cgroup-root",
        str(machine.cgroup),
        "--min-shm",
        "1Gi",
    ]
    write_container(machine, topo, cpus=[0, 1, 112, 113], mems=[0], gpus=[0], shm_bytes=2 << 30)
    ok = runner.invoke(app, ["probe", *common])
    assert ok.exit_code == 0, ok.output
    assert ok.output.splitlines()[0].startswith("PASS  gpus: 1 GPU(s) visible")
    write_container(machine, topo, cpus=[0, 1, 112, 113], mems=[0], gpus=[7], shm_bytes=2 << 30)
    bad = runner.invoke(app, ["probe", *common, "-o", "json"])
    assert bad.exit_code == 2
    report = json.loads(bad.output)
    assert report["status"] == "fail"
    failing = {c["check"] for c in report["checks"] if c["status"] == "fail"}
    assert failing == {"cpu-numa-alignment", "memory-numa-alignment"}
    assert report["container"]["gpus"] == ["0000:df:00.0"]


def test_check_bad_min_shm_is_exit_2(tmp_path: Path) -> None:
    write_machine(load_preset("topoDualSocketHT"), tmp_path)
    result = runner.invoke(app, ["probe", *_args(tmp_path), "--check", "--min-shm", "lots"])
    assert result.exit_code == 2
    assert "--min-shm" in result.output and "Traceback" not in result.output


def test_bad_sysfs_is_one_line_exit_2(tmp_path: Path) -> None:
    machine = write_machine(load_preset("topoDualSocketHT"), tmp_path)
    (machine.roots.sys / "devices/system/cpu/online").write_text("0-x\n")
    result = runner.invoke(app, ["probe", *_args(tmp_path)])
    assert result.exit_code == 2
    assert "devices/system/cpu/online: not a CPU list" in result.output


def test_probe_on_this_machine() -> None:
    if not Path("/sys/devices/system/cpu").is_dir():
        pytest.skip("no /sys here")
    result = runner.invoke(app, ["probe", "-o", "json"])
    assert result.exit_code == 0, result.output
    assert NodeTopology.from_dict(json.loads(result.output)).cpus
    check = runner.invoke(app, ["probe", "--check", "-o", "json"])
    assert check.exit_code in (0, 1, 2)
    assert {c["check"] for c in json.loads(check.output)["checks"]} >= {
        "gpus",
        "cpu-exclusive",
        "shm",
    }


@pytest.mark.parametrize(
    "args",
    [
        ["gen", "probe-daemonset", "--image", "ghcr.io/example/kubegpu:0.1.0"],
        [
            "gen",
            "probe-job",
            "--image",
            "ghcr.io/example/kubegpu:0.1.0",
            "--gpus",
            "8",
            "--cpus",
            "32",
        ],
    ],
)
def test_generated_manifests_validate(args: list[str]) -> None:
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    manifest = yaml.safe_load(result.output)
    kubernetes_validate.validate(manifest, "1.35.0", strict=True)
    pod = manifest["spec"]["template"]["spec"]
    assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in pod["tolerations"]


def test_daemonset_shape() -> None:
    manifest = yaml.safe_load(runner.invoke(app, ["gen", "probe-daemonset", "--image", "img:1"]).output)
    pod = manifest["spec"]["template"]["spec"]
    terms = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert {"key": "nvidia.com/gpu.present", "operator": "In", "values": ["true"]} in [
        t["matchExpressions"][0] for t in terms
    ]
    probe = pod["initContainers"][0]
    assert probe["volumeMounts"] == [
        {"name": "host-sys", "mountPath": "/host/sys", "readOnly": True, "recursiveReadOnly": "IfPossible"}
    ]
    assert pod["volumes"][0]["hostPath"]["path"] == "/sys"
    assert "--sysfs-root" in probe["command"]


def test_job_is_guaranteed_with_memory_shm() -> None:
    manifest = yaml.safe_load(runner.invoke(app, ["gen", "probe-job", "--image", "img:1", "--shm", "4Gi"]).output)
    pod = manifest["spec"]["template"]["spec"]
    res = pod["containers"][0]["resources"]
    assert res["requests"] == res["limits"] == {"cpu": "4", "memory": "16Gi", "nvidia.com/gpu": "1"}
    assert pod["volumes"][0] == {
        "name": "dshm",
        "emptyDir": {"medium": "Memory", "sizeLimit": "4Gi"},
    }


def test_gen_bad_input() -> None:
    result = runner.invoke(app, ["gen", "probe-job", "--image", "img:1", "--cpus", "four"])
    assert result.exit_code == 2 and "--cpus" in result.output
    result = runner.invoke(app, ["gen", "probe-job", "--image", "img:1", "--gpus", "0"])
    assert result.exit_code == 2


def test_standalone_module_entry(tmp_path: Path) -> None:
    # `python -m kubegpu.cli.probe` works without the rest of the CLI (the device-run command).
    import subprocess
    import sys

    write_machine(load_preset("l40s-4gpu-1socket"), tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "kubegpu.cli.probe", *_args(tmp_path), "--no-nvml", "-o", "json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert len(NodeTopology.from_dict(json.loads(done.stdout)).gpus) == 4


def test_probed_profile_admits_like_the_preset(tmp_path: Path) -> None:
    # The probe's JSON, given to `kubegpu admit --node`, decides exactly as the preset does.
    from kubegpu.cli.main import app as cli

    if "admit" not in {c.name for c in cli.registered_commands}:
        pytest.skip("kubegpu admit is not registered in this checkout")
    data = Path(__file__).resolve().parent.parent / "kubelet/data"
    pods, config = data / "half-node.yaml", data / "kubelet-restricted.yaml"
    if not pods.exists() or not config.exists():
        pytest.skip("the admit test data is absent")
    write_machine(load_preset("dgx-h100"), tmp_path / "m")
    profile = runner.invoke(app, ["probe", *_args(tmp_path / "m"), "--no-nvml", "-o", "json"])
    saved = tmp_path / "probed.json"
    saved.write_text(profile.output)
    verdicts = []
    for node in ("dgx-h100", str(saved)):
        result = runner.invoke(app, ["admit", str(pods), "--node", node, "--kubelet-config", str(config), "-o", "json"])
        assert result.exit_code in (0, 1), result.output
        verdicts.append(json.loads(result.output))
    assert verdicts[0] == verdicts[1]
    assert verdicts[0][0]["admitted"] is True
