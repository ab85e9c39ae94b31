"""Kubelet configuration vectors: static validation, policy options, CPU manager creation."""

from __future__ import annotations

from typing import Any

import pytest

from kubegpu.errors import ModelError
from kubegpu.kubelet.config import KubeletConfig, KubeletStartupError
from kubegpu.kubelet.cpumanager import options as cpu_options
from kubegpu.kubelet.cpumanager.manager import num_reserved_cpus
from kubegpu.kubelet.cpumanager.topology import CPUTopology
from kubegpu.kubelet.features import FeatureGates
from kubegpu.kubelet.topologymanager import options as tm_options
from tests.kubelet import vectors as V

TM_TEST_OPTIONS = {"fancy-new-option": "beta", "fancy-alpha-option": "alpha"}


@pytest.mark.parametrize("case", V.cases("kubelet_config_validation.json", "cases"))
def test_config_validation(case: dict[str, Any]) -> None:
    doc = dict(case["config_changes_from_valid_baseline"])
    if case["expected_error"] is None:
        KubeletConfig.from_dict(doc)
        return
    with pytest.raises(KubeletStartupError) as err:
        KubeletConfig.from_dict(doc)
    message = str(err.value.message)
    expected = case["expected_error"]
    if expected.startswith("invalid configuration"):
        assert message.startswith(expected)
    else:
        # v1.35 prefixes reservedMemory messages with "invalid configuration: " (see the note).
        assert message == f"invalid configuration: {expected}"


def _gates(case: dict[str, Any], version: str) -> FeatureGates:
    gates: dict[str, bool] = {}
    if case.get("feature_gate") and case.get("feature_gate_enabled") is not None:
        gates[case["feature_gate"]] = bool(case["feature_gate_enabled"])
    for name, value in (case.get("feature_gates") or {}).items():
        gates[name] = bool(value)
    return FeatureGates(version, gates)


@pytest.mark.parametrize("case", V.cases("policy_options.json", "topologymanager_new_options"))
def test_tm_new_options(case: dict[str, Any]) -> None:
    gates = _gates(case, "1.34")  # transcribed from the 1.32-1.34 option sets (version_note)
    if case["expected_error_substring"]:
        with pytest.raises(ModelError) as err:
            tm_options.parse_options(case["policy_options"], gates, TM_TEST_OPTIONS)
        assert case["expected_error_substring"] in str(err.value)
        return
    opts = tm_options.parse_options(case["policy_options"], gates, TM_TEST_OPTIONS)
    assert opts.prefer_closest_numa == case["expected_options"]["PreferClosestNUMA"]
    assert opts.max_allowable_numa_nodes == case["expected_options"]["MaxAllowableNUMANodes"]


@pytest.mark.parametrize("case", V.cases("policy_options.json", "topologymanager_option_available"))
def test_tm_option_available(case: dict[str, Any]) -> None:
    gates = _gates(case, "1.34")
    assert tm_options.option_available(case["option"], gates, TM_TEST_OPTIONS) == case["expected_available"]


@pytest.mark.parametrize("case", V.cases("policy_options.json", "cpumanager_option_available"))
def test_cpu_option_available(case: dict[str, Any]) -> None:
    gates = _gates(case, "1.32")  # "Transcribed from a ~1.31/1.32 revision of the test."
    assert cpu_options.option_available(case["option"], gates) == case["expected_available"]


@pytest.mark.parametrize("case", V.cases("policy_options.json", "cpumanager_validate_static_policy_options"))
def test_cpu_validate_static_options(case: dict[str, Any]) -> None:
    topo = CPUTopology.from_node(V.fixture_topology(case["topology"]))
    gates = _gates(case, "1.35")

    def run() -> None:
        opts = cpu_options.parse_options(case["policy_options"], gates)
        cpu_options.validate_for_machine(opts, topo.num_sockets, topo.num_numa_nodes, case["topology_manager_policy"])

    if case["expected_error"]:
        with pytest.raises(ModelError):
            run()
    else:
        run()


@pytest.mark.parametrize("case", V.cases("policy_options.json", "cpumanager_options_compatibility"))
def test_cpu_options_compatibility(case: dict[str, Any]) -> None:
    gates = FeatureGates("1.35", {case["feature_gate_enabled"]: True})
    if case["expected_error"]:
        with pytest.raises(ModelError, match="can not be used at the same time"):
            cpu_options.parse_options(case["policy_options"], gates)
    else:
        cpu_options.parse_options(case["policy_options"], gates)


@pytest.mark.parametrize("case", V.cases("cpumanager_static_policy.json", "new_manager"))
def test_cpu_new_manager(case: dict[str, Any]) -> None:
    num_cpus = 0 if case["machine_info"].startswith("empty") else 4
    reservation = {k: int(float(v) * 1000) for k, v in case["node_allocatable_reservation"].items()}
    with pytest.raises(ModelError) as err:
        num_reserved_cpus(num_cpus, reservation)
    assert case["expected_error_substring"] in str(err.value)
