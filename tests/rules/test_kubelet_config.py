"""KubeletConfiguration rules (KG8xx): the YAML case table, the seed example and the eviction arithmetic."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubegpu.lint import LintConfig, NodeTarget, lint_text
from kubegpu.rules.kubelet_config import eviction_memory_bytes, go_parse_bool
from kubegpu.topology.model import CPUInfo, NodeTopology, NUMANode
from kubegpu.units.quantity import format_bytes
from tests.paths import SHARED_DIR
from tests.rules.kg_cases import case_ids, load_table, run_case

TABLE = load_table("kubelet_config.yaml")
SEED = SHARED_DIR / "seed" / "000_5d9624ca1d4fa767.txt"


@pytest.mark.parametrize("case", TABLE["cases"], ids=case_ids(TABLE))
def test_case(case: dict[str, Any]) -> None:
    run_case(TABLE, case)


def test_the_seed_files_own_example_is_flagged() -> None:
    if not SEED.is_file():
        pytest.skip(f"{SEED} is absent")
    text = SEED.read_text()
    start = text.index("apiVersion: kubelet.config.k8s.io/v1beta1")
    end = text.index("The NVIDIA device plugin")
    config = text[start:end].strip() + "\n"
    result = lint_text("seed-kubelet.yaml", config, LintConfig(select=("KG804",)))
    assert [f.name for f in result.findings] == ["kubelet-reserved-memory-mismatch"]
    assert "must equal 4196Mi" in result.findings[0].message


def test_percentage_threshold_uses_float32_like_the_kubelet() -> None:
    # 5% is parsed as float32(5)/100 = 13421773 / 2**28; times 2**30 bytes that is exactly 53687092,
    # not the 53687091.2 that exact arithmetic gives.
    value, _ = eviction_memory_bytes({"evictionHard": {"memory.available": "5%"}}, 2**30)
    assert value == 53687092
    assert eviction_memory_bytes({}, None)[0] == 100 * 2**20
    assert eviction_memory_bytes({"evictionHard": {"memory.available": "100%"}}, None)[0] == 0


@given(st.integers(min_value=1, max_value=2**62))
def test_format_bytes_round_trips(value: int) -> None:
    from kubegpu.units.quantity import parse_quantity

    assert parse_quantity(format_bytes(value)).value == value


def test_go_parse_bool_accepts_only_go_spellings() -> None:
    assert go_parse_bool("True") is True and go_parse_bool("0") is False
    assert go_parse_bool("yes") is None and go_parse_bool("TRue") is None


def test_more_numa_nodes_than_the_topology_manager_allows(tmp_path: Path) -> None:
    numa = tuple(NUMANode(i, 2**30) for i in range(10))
    cpus = tuple(CPUInfo(i, i, 0, i) for i in range(10))
    node = NodeTopology("nps-many", cpus, numa)
    text = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\ntopologyManagerPolicy: restricted\n"
    found = lint_text("k.yaml", text, LintConfig(select=("KG803",)), NodeTarget(node)).findings
    assert [(f.location.line, f.severity.value) for f in found] == [(3, "error")]
    assert "max-allowable-numa-nodes" in found[0].message
    allowed = text + 'topologyManagerPolicyOptions: {max-allowable-numa-nodes: "10"}\n'
    assert not lint_text("k.yaml", allowed, LintConfig(select=("KG803",)), NodeTarget(node)).findings


@given(
    st.sampled_from([None, "1Gi", "2Gi", "512Mi"]),
    st.sampled_from([None, "1Gi", "2Gi"]),
    # Both compute percentages in float32 as upstream does (kubegpu.kubelet.eviction).
    st.sampled_from(["absent", "100Mi", "500Mi", "0%", "5%", "7.5%", "nodefs-only"]),
    st.booleans(),
    st.integers(-1, 1),
    st.booleans(),
)
def test_reserved_memory_rule_agrees_with_the_kubelet_models_startup_check(
    kube: str | None, system: str | None, eviction: str, merge: bool, delta_mi: int, split: bool
) -> None:
    """KG804 and kubegpu.kubelet's start-up check are written separately; they must agree on every config."""
    from kubegpu.kubelet import KubeletConfig, KubeletStartupError, check_startup
    from kubegpu.topology.presets import load_node
    from kubegpu.units.quantity import parse_quantity

    node = load_node("dgx-h100")
    config: dict[str, Any] = {
        "apiVersion": "kubelet.config.k8s.io/v1beta1",
        "kind": "KubeletConfiguration",
        "memoryManagerPolicy": "Static",
    }
    if kube:
        config["kubeReserved"] = {"memory": kube}
    if system:
        config["systemReserved"] = {"memory": system}
    if eviction == "nodefs-only":
        config["evictionHard"] = {"nodefs.available": "10%"}
    elif eviction != "absent":
        config["evictionHard"] = {"memory.available": eviction}
    if merge:
        config["mergeDefaultEvictionSettings"] = True
    capacity = sum(n.memory_bytes for n in node.numa_nodes)
    threshold, _ = eviction_memory_bytes(config, capacity)
    assert threshold is not None
    need = threshold + sum(int(parse_quantity(v).value) for v in (kube, system) if v) + delta_mi * 2**20
    if need > 0:
        first = need // 2 if split else need
        entries = [{"numaNode": 0, "limits": {"memory": str(first)}}]
        if need - first:
            entries.append({"numaNode": 1, "limits": {"memory": str(need - first)}})
        config["reservedMemory"] = entries
    import yaml

    text = yaml.safe_dump(config)
    fired = any(
        f.name == "kubelet-reserved-memory-mismatch"
        for f in lint_text("k.yaml", text, LintConfig(select=("KG804",)), NodeTarget(node)).findings
    )
    try:
        error = check_startup(node, KubeletConfig.from_dict(config))
    except KubeletStartupError as err:
        error = err
    assert fired == (error is not None and error.component == "memory manager"), (config, error)
