"""One KubeletConfiguration reader and one set of kubelet facts for lint, admit, simulate and gen.

The eviction defaults follow kubernetes v1.35 pkg/kubelet/eviction/defaults_linux.go (imagefs.inodesFree joined the
defaults in v1.30, kubernetes PR 121834) and cmd/kubelet/app/server.go loadConfigFile (mergeDefaultEvictionSettings,
v1.33+, kubernetes PR 127577).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from kubegpu.cli.main import app
from kubegpu.errors import InputError, KubegpuError
from kubegpu.kubelet import KubeletConfig, KubeletStartupError, NodeState, check_startup
from kubegpu.kubelet.config import read_kubelet_config
from kubegpu.kubelet.eviction import DEFAULT_EVICTION_HARD, hard_thresholds, memory_threshold
from kubegpu.kubelet.memorymanager.reserved import Amount
from kubegpu.lint import LintConfig, NodeTarget, Severity, lint_text
from kubegpu.topology.presets import load_node

HEADER = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
POD = """\
apiVersion: v1
kind: Pod
metadata: {name: one}
spec:
  containers:
  - name: main
    image: nvcr.io/nvidia/pytorch:24.05-py3
    resources:
      limits: {cpu: "4", memory: 8Gi, nvidia.com/gpu: 1}
"""


def test_the_default_hard_eviction_has_five_signals() -> None:
    assert dict(DEFAULT_EVICTION_HARD) == {
        "memory.available": "100Mi",
        "nodefs.available": "10%",
        "nodefs.inodesFree": "5%",
        "imagefs.available": "15%",
        "imagefs.inodesFree": "5%",
    }
    assert KubeletConfig().eviction_thresholds() == DEFAULT_EVICTION_HARD


@pytest.mark.parametrize(
    ("version", "merge", "expected"),
    [
        ("1.32", True, {"memory.available": "1Gi"}),  # the field does not exist before 1.33
        ("1.33", False, {"memory.available": "1Gi"}),
        ("1.33", True, {**DEFAULT_EVICTION_HARD, "memory.available": "1Gi"}),
        ("1.35", True, {**DEFAULT_EVICTION_HARD, "memory.available": "1Gi"}),
    ],
)
def test_merge_default_eviction_settings_where_the_release_has_it(
    version: str, merge: bool, expected: dict[str, str]
) -> None:
    assert dict(hard_thresholds({"memory.available": "1Gi"}, merge, version)) == expected
    config = KubeletConfig(
        eviction_hard={"memory.available": "1Gi"}, merge_default_eviction_settings=merge, version=version
    )
    assert dict(config.eviction_thresholds()) == expected


def test_a_signal_missing_without_merge_is_zero_and_merged_is_the_default() -> None:
    given = {"nodefs.available": "5%"}
    assert memory_threshold(given, False, "1.35", None).bytes == 0
    assert memory_threshold(given, True, "1.35", None).bytes == 100 * 2**20
    assert memory_threshold(given, True, "1.32", None).bytes == 0


def test_the_allocatable_reservation_computes_percentages_in_float32() -> None:
    # float32(5)/100 of 2**30 bytes is 53687092 bytes (exact arithmetic would give 53687091.2)
    config = KubeletConfig(eviction_hard={"memory.available": "5%"})
    assert config.allocatable_reservation({"memory": Amount(2**30, True)})["memory"].value == 53687092


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("topologyManagerPolicy: restricted\n", "no KubeletConfiguration"),  # no kind: the kubelet cannot decode it
        ("apiVersion: v1\nkind: Pod\nmetadata: {name: x}\n", "no KubeletConfiguration"),
        (HEADER + "---\n" + HEADER, "2 KubeletConfiguration documents"),
        (HEADER + "cpuManagerPolicy: [\n", "kubelet.yaml"),
    ],
)
def test_admit_simulate_and_lint_refuse_the_same_files(tmp_path: Path, text: str, message: str) -> None:
    path = _write(tmp_path, "kubelet.yaml", text)
    pod = _write(tmp_path, "pod.yaml", POD)
    cluster = _write(tmp_path, "cluster.yaml", "nodes:\n- preset: dgx-h100\n  count: 1\n")
    with pytest.raises(InputError, match=message):
        read_kubelet_config(path)
    runner = CliRunner()
    for args in (
        ["admit", pod, "--node", "dgx-h100", "--kubelet-config", path],
        ["lint", pod, "--node", "dgx-h100", "--kubelet-config", path],
        ["simulate", "--nodes", cluster, "--synthetic", "2", "--kubelet-config", path],
    ):
        result = runner.invoke(app, args)
        assert result.exit_code == 2, (args, result.output)
        assert message in result.output, (args, result.output)


def test_admit_simulate_and_lint_accept_the_same_file(tmp_path: Path) -> None:
    path = _write(tmp_path, "kubelet.yaml", HEADER + 'cpuManagerPolicy: static\nsystemReserved: {cpu: "1"}\n')
    config = read_kubelet_config(path)
    assert config.cpu_manager_policy == "static" and config.source == path
    pod = _write(tmp_path, "pod.yaml", POD)
    runner = CliRunner()
    assert runner.invoke(app, ["admit", pod, "--node", "dgx-h100", "--kubelet-config", path]).exit_code == 0
    lint = runner.invoke(app, ["lint", pod, "--node", "dgx-h100", "--kubelet-config", path, "--select", "KG901"])
    assert lint.exit_code == 0, lint.output


@pytest.mark.parametrize(
    "options",
    [
        {"full-pcpus-only": "true", "distribute-cpus-across-cores": "true"},
        {"distribute-cpus-across-numa": "true", "distribute-cpus-across-cores": "true"},
        {"prefer-align-cpus-by-uncorecache": "true", "distribute-cpus-across-numa": "true"},
    ],
)
def test_lint_and_the_kubelet_model_refuse_the_same_cpu_option_pairs(options: dict[str, str]) -> None:
    gates = {"CPUManagerPolicyAlphaOptions": True}
    data = {
        "apiVersion": "kubelet.config.k8s.io/v1beta1",
        "kind": "KubeletConfiguration",
        "cpuManagerPolicy": "static",
        "reservedSystemCPUs": "0,112",
        "cpuManagerPolicyOptions": options,
        "featureGates": gates,
    }
    import yaml

    found = lint_text("k.yaml", yaml.safe_dump(data), LintConfig(select=("KG802",))).findings
    assert any("cannot be used together" in f.message for f in found), found
    with pytest.raises(KubeletStartupError, match="can not be used at the same time"):
        NodeState(load_node("dgx-h100"), KubeletConfig.from_dict(data))


_OPTIONS = [
    "full-pcpus-only",
    "distribute-cpus-across-numa",
    "align-by-socket",
    "distribute-cpus-across-cores",
    "strict-cpu-reservation",
    "prefer-align-cpus-by-uncorecache",
    "no-such-option",
]


@st.composite
def kubelet_configs(draw: st.DrawFn) -> dict[str, Any]:
    cfg: dict[str, Any] = {"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration"}
    for key, choices in (
        ("cpuManagerPolicy", ["none", "static", "Static"]),
        ("topologyManagerPolicy", ["none", "best-effort", "restricted", "single-numa-node", "numa"]),
        ("topologyManagerScope", ["container", "pod", "node"]),
        ("memoryManagerPolicy", ["None", "Static", "static"]),
    ):
        if draw(st.booleans()):
            cfg[key] = draw(st.sampled_from(choices))
    if draw(st.booleans()):
        names = draw(st.lists(st.sampled_from(_OPTIONS), max_size=3, unique=True))
        cfg["cpuManagerPolicyOptions"] = {n: draw(st.sampled_from(["true", "false", "yes"])) for n in names}
    if draw(st.booleans()):
        cfg["featureGates"] = {
            "CPUManagerPolicyAlphaOptions": draw(st.booleans()),
            "CPUManagerPolicyBetaOptions": draw(st.booleans()),
        }
    reserve = draw(st.sampled_from(["list", "cpu", "none", "cgroup", "offline"]))
    if reserve == "list":
        cfg["reservedSystemCPUs"] = draw(st.sampled_from(["0-1,112-113", "0-3", "0"]))
    elif reserve == "cpu":
        cfg["kubeReserved"] = {"cpu": draw(st.sampled_from(["1", "2", "0"]))}
    elif reserve == "cgroup":
        cfg["reservedSystemCPUs"], cfg["kubeReservedCgroup"] = "0,112", "/kube"
    elif reserve == "offline":
        cfg["reservedSystemCPUs"] = "500"
    if draw(st.booleans()):
        cfg["reservedMemory"] = [{"numaNode": 0, "limits": {"memory": draw(st.sampled_from(["100Mi", "1Gi"]))}}]
    return cfg


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kubelet_configs())
def test_lint_reports_an_error_exactly_when_the_kubelet_model_does_not_start(cfg: dict[str, Any]) -> None:
    """Lint's KubeletConfiguration rules and the kubelet model's validation and start-up read the same
    tables (policies, option maturity, gates, incompatible options, eviction defaults): on any config they
    agree whether the kubelet starts on the node."""
    import yaml

    node = load_node("dgx-h100")
    findings = lint_text("k.yaml", yaml.safe_dump(cfg), LintConfig(select=("KG8",)), NodeTarget(node)).findings
    lint_says_no = [f.message for f in findings if f.severity is Severity.ERROR]
    try:
        refused: KubegpuError | None = check_startup(node, KubeletConfig.from_dict(cfg))
    except KubegpuError as err:
        refused = err
    assert bool(lint_says_no) == (refused is not None), (lint_says_no, refused)
