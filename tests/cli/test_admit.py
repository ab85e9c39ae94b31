"""`kubegpu admit` end to end: text, JSON, --explain, --existing, start-up errors, bad input."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from kubegpu.cli.main import app

DATA = Path(__file__).resolve().parent.parent / "kubelet" / "data"
runner = CliRunner()


def _run(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, ["admit", *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, result.stdout, result.stderr


def test_json_output_lists_every_pod_in_order() -> None:
    code, out, _ = _run(
        str(DATA / "half-node.yaml"),
        str(DATA / "train-8gpu.yaml"),
        "--node",
        "dgx-h100",
        "--kubelet-config",
        str(DATA / "kubelet-restricted.yaml"),
        "-o",
        "json",
        "--same-node",
    )
    assert code == 1  # the 8-GPU pod is rejected
    rows = json.loads(out)
    assert [r["pod"] for r in rows] == ["half-a", "half-b", "train-8gpu"]
    assert [r["admitted"] for r in rows] == [True, True, False]
    assert rows[0]["containers"][0]["devices"] == {"nvidia.com/gpu": ["0", "1", "2", "3"]}
    assert rows[1]["containers"][0]["devices"] == {"nvidia.com/gpu": ["4", "5", "6", "7"]}
    assert rows[2]["reason"] == "TopologyAffinityError"
    assert rows[2]["message"] == "Resources cannot be allocated with Topology locality"
    for key in ("pod", "admitted", "reason", "message", "containers"):
        assert key in rows[0]


def test_explain_shows_hints_and_merge() -> None:
    code, out, _ = _run(
        str(DATA / "train-8gpu.yaml"),
        "--node",
        "dgx-h100",
        "--kubelet-config",
        str(DATA / "kubelet-restricted.yaml"),
        "--explain",
    )
    assert code == 1
    assert "REJECTED TopologyAffinityError" in out
    assert "device manager  nvidia.com/gpu: {0,1} preferred" in out
    assert "cpu manager     cpu: {0} preferred, {1} preferred, {0,1} not-preferred" in out
    assert "merged: {0,1} not-preferred -> reject" in out


def test_smt_alignment_error() -> None:
    code, out, _ = _run(
        str(DATA / "odd-cpus.yaml"),
        "--node",
        "dgx-h100",
        "--kubelet-config",
        str(DATA / "kubelet-restricted.yaml"),
    )
    assert code == 1
    assert "REJECTED SMTAlignmentError: SMT Alignment Error: requested 3 cpus" in out


def test_existing_pods_are_admitted_first() -> None:
    code, out, _ = _run(
        str(DATA / "half-node.yaml"),
        "--node",
        "dgx-h100",
        "--existing",
        str(DATA / "half-node.yaml"),
        "--kubelet-config",
        str(DATA / "kubelet-restricted.yaml"),
        "-o",
        "json",
    )
    rows = json.loads(out)
    assert code == 1
    assert [r["admitted"] for r in rows] == [False, False]


def test_default_kubelet_admits_with_shared_cpus() -> None:
    code, out, err = _run(str(DATA / "train-8gpu.yaml"), "--node", "dgx-h100")
    assert code == 0
    assert "pod train-8gpu: admitted (Guaranteed)" in out
    assert "cpus shared pool" in out
    # the defaults are said loudly, with the way to the recommended configuration
    assert out.splitlines()[0].endswith("[the kubelet's defaults: no --kubelet-config given]")
    assert "warning: no --kubelet-config" in err
    assert "kubegpu gen kubelet --node dgx-h100 -o kubelet.yaml" in err
    _, _, quiet = _run(str(DATA / "train-8gpu.yaml"), "--node", "dgx-h100", "--kubelet-config", str(_recommended()))
    assert "warning" not in quiet


def _recommended() -> Path:
    import tempfile

    folder = Path(tempfile.mkdtemp())
    result = runner.invoke(app, ["gen", "kubelet", "--node", "dgx-h100", "-o", str(folder / "kubelet.yaml")])
    assert result.exit_code == 0, result.output
    return folder / "kubelet.yaml"


def test_seed_config_stops_the_kubelet() -> None:
    code, out, err = _run(
        str(DATA / "train-8gpu.yaml"),
        "--node",
        "dgx-h100",
        "--kubelet-config",
        str(DATA / "kubelet-guide-example.yaml"),
    )
    assert code == 2
    assert out == ""
    assert "the kubelet would not start (memory manager)" in err
    assert '"2Gi" of type "memory" is not equal to the value "4196Mi"' in err
    assert len(err.strip().splitlines()) == 1


def test_bad_inputs_exit_2_with_one_line(tmp_path: Path) -> None:
    bad_pod = tmp_path / "bad.yaml"
    bad_pod.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec:\n  containers:\n"
        "  - name: a\n    image: x:1\n    resources: {limits: {cpu: lots}}\n"
    )
    broken = tmp_path / "broken.yaml"
    broken.write_text("apiVersion: v1\nkind: Pod\nspec: [\n")
    bad_cfg = tmp_path / "kubelet.yaml"
    bad_cfg.write_text(
        "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\ntopologyManagerScope: node\n"
    )
    cases = [
        ([str(bad_pod), "--node", "dgx-h100"], "bad.yaml:4: pod x: spec.containers[0]"),
        ([str(broken), "--node", "dgx-h100"], "broken.yaml:"),
        ([str(tmp_path / "missing.yaml"), "--node", "dgx-h100"], "missing.yaml"),
        ([str(DATA / "odd-cpus.yaml"), "--node", "no-such-node"], "no node preset"),
        (
            [str(DATA / "odd-cpus.yaml"), "--node", "dgx-h100", "--kubelet-config", str(bad_cfg)],
            'topologyManagerScope (--topology-manager-scope) "node" must be one of',
        ),
    ]
    for args, expected in cases:
        code, _, err = _run(*args)
        assert code == 2, args
        assert expected in err, err
        assert len(err.strip().splitlines()) == 1


def test_profile_file_as_node(tmp_path: Path) -> None:
    profile = tmp_path / "node.json"
    show = runner.invoke(app, ["nodes", "show", "l40s-4gpu-1socket", "-o", "json"])
    profile.write_text(show.stdout)
    code, out, _ = _run(str(DATA / "half-node.yaml"), "--node", str(profile), "-o", "json", "--same-node")
    rows = json.loads(out)
    # 4 GPUs on the node: the second 4-GPU pod finds none free. With the default (none) Topology
    # Manager policy the device manager's Allocate fails -> UnexpectedAdmissionError.
    assert code == 1
    assert [r["admitted"] for r in rows] == [True, False]
    assert rows[1]["reason"] == "UnexpectedAdmissionError"
    assert rows[1]["message"] == (
        "Allocate failed due to requested number of devices unavailable for nvidia.com/gpu. "
        "Requested: 4, Available: 0, which is unexpected"
    )


def test_each_template_gets_a_fresh_node_unless_same_node(tmp_path: Path) -> None:
    # three copies: the same file named twice is read once, as lint reads it
    files = []
    for n in range(3):
        (tmp_path / f"half-{n}.yaml").write_text((DATA / "half-node.yaml").read_text())
        files.append(str(tmp_path / f"half-{n}.yaml"))
    config = ["--node", "dgx-h100", "--kubelet-config", str(DATA / "kubelet-restricted.yaml")]
    code, out, _ = _run(*files, *config)
    assert code == 0 and "REJECTED" not in out
    code, out, _ = _run(*files, *config, "--same-node")
    assert code == 1 and "REJECTED" in out  # three pairs of half-node pods cannot share one node


def test_a_folder_is_read_as_lint_reads_it(tmp_path: Path) -> None:
    (tmp_path / "k8s").mkdir()
    (tmp_path / "k8s" / "train.yaml").write_text((DATA / "train-8gpu.yaml").read_text())
    (tmp_path / "k8s" / "values.yaml").write_text("replicas: 2\n")  # not an object: passed over in a folder
    code, out, _ = _run(str(tmp_path / "k8s"), "--node", "dgx-h100")
    assert code == 0 and "pod train-8gpu: admitted" in out
    code, _, err = _run(str(tmp_path / "k8s" / "values.yaml"), "--node", "dgx-h100")
    assert code == 2 and "values.yaml: no pod or pod template found" in err  # named alone, it must hold one


def test_remedy_after_smt_rejection_is_computed_by_the_model() -> None:
    code, out, _ = _run(
        str(DATA / "odd-cpus.yaml"), "--node", "dgx-h100", "--kubelet-config", str(DATA / "kubelet-restricted.yaml")
    )
    assert code == 1
    assert "remedy: the same pod is admitted with 4 CPUs in container 'main' (instead of 3)" in out


def test_remedy_says_when_no_setting_admits_the_pod() -> None:
    code, out, _ = _run(
        str(DATA / "train-8gpu.yaml"),
        "--node",
        "dgx-h100",
        "--kubelet-config",
        str(DATA / "kubelet-restricted.yaml"),
        "-o",
        "json",
    )
    [pod] = json.loads(out)
    assert code == 1 and "8 GPUs span 2 NUMA nodes" in pod["remedy"]


def test_kserve_predictor_model_is_admitted_from_its_model_container(tmp_path: Path) -> None:
    isvc = tmp_path / "isvc.yaml"
    isvc.write_text("""\
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata: {name: llama}
spec:
  predictor:
    model:
      modelFormat: {name: huggingface}
      resources:
        requests: {cpu: "8", memory: 64Gi, nvidia.com/gpu: 1}
        limits: {cpu: "8", memory: 64Gi, nvidia.com/gpu: 1}
""")
    code, out, err = _run(str(isvc), "--node", "dgx-h100", "--kubelet-config", str(DATA / "kubelet-restricted.yaml"))
    assert code == 0, out + err
    assert "pod llama-predictor: admitted (Guaranteed)" in out and "nvidia.com/gpu 0" in out
