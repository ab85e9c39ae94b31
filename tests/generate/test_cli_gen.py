"""`kubegpu gen …` end to end: stdout, -o FILE, -o DIR, --validate, and one-line errors (exit 2)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from kubegpu.cli.main import app

DATA = Path(__file__).parent / "data"


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["gen", *args])
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["scheduler", "--validate"],
        [
            "scheduler",
            "--strategy",
            "RequestedToCapacityRatio",
            "--gpu-weight",
            "20",
            "--configmap",
        ],
        [
            "kueue",
            "--gpus-per-node",
            "8",
            "--nodes",
            "2",
            "--cpus-per-node",
            "200",
            "--memory-per-node",
            "1800Gi",
            "--topology",
            "nvl72",
            "--validate",
        ],
        [
            "kueue",
            "--gpus-per-node",
            "4",
            "--nodes",
            "18",
            "--cpus-per-node",
            "140",
            "--memory-per-node",
            "850Gi",
            "--node-label",
            "pool=gb200",
            "--gpu-taint",
            "",
        ],
        [
            "kueue",
            "--node",
            "gb200-nvl72-tray",
            "--nodes",
            "18",
            "--topology",
            "nvl72",
            "--validate",
        ],
        ["volcano", "--gpus", "16", "--validate"],
        ["kai", "--gpus", "16", "--gpu-limit", "32", "--validate"],
        [
            "prepull",
            "--from",
            str(DATA / "train-job.yaml"),
            "--from",
            str(DATA / "mixed.yaml"),
            "--validate",
        ],
        ["kubelet", "--node", "dgx-h100", "--validate"],
        [
            "kubelet",
            "--node",
            "l40s-4gpu-1socket",
            "--largest-gpu-pod",
            "2:16:64Gi",
            "--reserve-cores",
            "1",
        ],
        [
            "model-cache",
            "--model",
            "llama",
            "--source",
            "hf://meta-llama/Llama-3.1-8B",
            "--size",
            "20Gi",
            "--validate",
        ],
    ],
)
def test_single_file_commands_print_yaml(args: list[str]) -> None:
    code, out, err = run(*args)
    assert code == 0, err
    docs = [d for d in yaml.safe_load_all(out) if d is not None]
    assert docs and all("kind" in d for d in docs)


def test_kubelet_from_a_profile_file(tmp_path: Path) -> None:
    import json

    from kubegpu.topology.presets import load_preset

    profile = tmp_path / "node.json"
    profile.write_text(json.dumps(load_preset("aws-p5.48xlarge").to_dict()))
    code, out, _ = run("kubelet", "--node", str(profile))
    assert code == 0
    assert yaml.safe_load(out)["reservedSystemCPUs"] == "0-1,96-97"


def test_output_file_and_folder(tmp_path: Path) -> None:
    target = tmp_path / "sched.yaml"
    code, out, err = run("scheduler", "-o", str(target))
    assert code == 0 and out == ""
    assert "wrote" in err
    assert yaml.safe_load(target.read_text())["kind"] == "KubeSchedulerConfiguration"

    bundle = tmp_path / "bundle"
    code, _, err = run("dshm", "--for", str(DATA / "train-job.yaml"), "-o", str(bundle), "--validate")
    assert code == 0, err
    kust = yaml.safe_load((bundle / "kustomization.yaml").read_text())
    assert (bundle / kust["resources"][0]).resolve() == (DATA / "train-job.yaml").resolve()
    assert (bundle / kust["patches"][0]["path"]).is_file()

    lazy = tmp_path / "lazy"
    code, _, _ = run("lazy-pull", "--snapshotter", "soci", "-o", str(lazy))
    assert code == 0
    assert (lazy / "containerd-config.toml").is_file()
    assert (lazy / "soci-snapshotter-grpc" / "config.toml").is_file()

    one = tmp_path / "hosts.toml"  # one registry: one file, written where -o points
    code, _, _ = run("mirror", "--mirror", "https://m.internal", "--registry", "nvcr.io", "-o", str(one))
    assert code == 0 and 'server = "https://nvcr.io"' in one.read_text()
    tree = tmp_path / "certs"  # several: a folder laid out like /etc/containerd
    code, _, _ = run("mirror", "--mirror", "https://m.internal", "-o", str(tree))
    assert code == 0 and (tree / "certs.d" / "docker.io" / "hosts.toml").is_file()


@pytest.mark.parametrize(
    "args",
    [
        [
            "fixes",
            "--for",
            str(DATA / "inference.yaml"),
            "--only",
            "dshm,qos,pull-policy,scheduler",
        ],
        ["volcano", "--for", str(DATA / "train-job.yaml")],
        ["kai", "--gpus", "8", "--for", str(DATA / "train-job.yaml")],
        ["computedomain", "--for", str(DATA / "train-job.yaml"), "--wait-for-all-nodes"],
        [
            "model-cache",
            "--model",
            "m",
            "--source",
            "s3://bucket-a/m",
            "--size",
            "5Gi",
            "--mode",
            "shared",
            "--for",
            str(DATA / "inference.yaml"),
            "--min-replicas",
            "2",
        ],
        ["dshm", "--for", str(DATA / "mixed.yaml"), "--name", "finetune", "--size", "8Gi"],
    ],
)
def test_bundle_commands(args: list[str]) -> None:
    code, out, err = run(*args, "--validate")
    assert code == 0, err
    assert "# ==> kustomization.yaml <==" in out
    assert list(yaml.safe_load_all(out))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["scheduler", "--gpu-weight", "0"], "1..100"),
        (
            [
                "kueue",
                "--gpus-per-node",
                "8",
                "--nodes",
                "1",
                "--cpus-per-node",
                "x",
                "--memory-per-node",
                "1Gi",
            ],
            "cpus-per-node",
        ),
        (
            [
                "kueue",
                "--gpus-per-node",
                "8",
                "--nodes",
                "1",
                "--cpus-per-node",
                "8",
                "--memory-per-node",
                "1Gi",
                "--node-label",
                "novalue",
            ],
            "key=value",
        ),
        (["dshm", "--for", str(DATA / "bad.yaml")], "bad.yaml:"),
        (["dshm", "--for", str(DATA / "missing.yaml")], "no such file"),
        (["dshm", "--for", str(DATA / "train-job.yaml"), "--size", "64Mi"], 'got "64Mi" (not above 64Mi)'),
        (["fixes", "--for", str(DATA / "train-job.yaml"), "--size", "10k"], "--size: expected a quantity above 64Mi"),
        (["dshm", "--for", str(DATA / "train-job.yaml"), "--size", "big"], 'got "big" (not a quantity)'),
        (["dshm", "--for", str(DATA / "mixed.yaml"), "--name", "finetune"], "set memory limits"),
        (["fixes", "--for", str(DATA / "inference.yaml"), "--only", "qos"], "needs none of: qos"),
        (["fixes", "--for", str(DATA / "inference.yaml"), "--only", "gpu"], "unknown fix 'gpu'"),
        (["kubelet", "--node", "no-such-node"], "no node preset"),
        (["kueue", "--nodes", "2"], "--node PRESET"),
        (["kubelet", "--node", "topoDualSocketHT"], "no GPUs"),
        (["kubelet", "--node", "dgx-h100", "--largest-gpu-pod", "1:3:1Gi"], "SMTAlignmentError"),
        (["computedomain", "--for", str(DATA / "mixed.yaml"), "--name", "web"], "no GPUs"),
        (["lazy-pull", "--snapshotter", "zfs"], "snapshotter"),
        (["model-cache", "--model", "m", "--source", "ftp://x", "--size", "1Gi"], "--source"),
        (["prepull", "--from", str(DATA / "inference.yaml"), "--gpu-node-label", "x"], "key=value"),
    ],
)
def test_errors_are_one_line_and_exit_2(args: list[str], message: str) -> None:
    code, out, err = run(*args)
    assert code == 2
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kubegpu: error: ")
    assert message in lines[0]
    assert "Traceback" not in err


def test_gen_fixes_reads_the_configuration_kubegpu_fix_reads(tmp_path: Path) -> None:
    """The kubegpu.toml next to the manifest (or --config) and --smt decide as they do for `kubegpu fix`."""
    manifest = tmp_path / "mixed.yaml"
    manifest.write_text((DATA / "mixed.yaml").read_text())
    (tmp_path / "kubegpu.toml").write_text('[rules.dshm-missing]\nsize-limit = "16Gi"\n')
    code, out, err = run("dshm", "--for", str(manifest), "--name", "finetune")
    assert code == 0, err
    assert "sizeLimit: 16Gi" in out
    code, out, err = run("dshm", "--for", str(manifest), "--name", "finetune", "--size", "12Gi")
    assert code == 0, err
    assert "sizeLimit: 12Gi" in out  # the command line wins over the file
    job = tmp_path / "job.yaml"
    job.write_text(
        (DATA / "train-job.yaml")
        .read_text()
        .replace('"15500m"', '"15"')
        .replace('"16"', '"15"')
        .replace("128Gi", "160Gi")
    )
    code, out, err = run("fixes", "--for", str(job), "--only", "qos", "--smt", "1")
    assert code == 2 and "needs none of: qos" in err  # 15 whole CPUs fill cores with one thread each
    code, out, err = run("fixes", "--for", str(job), "--only", "qos")  # two threads per core assumed
    assert code == 0, err
    assert "value: '16'" in out
