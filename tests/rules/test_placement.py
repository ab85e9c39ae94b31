"""Section 13.6 rule (topology-missing): the YAML case table and the topology-label heuristic."""

from __future__ import annotations

from typing import Any

import pytest

from kubegpu.rules.placement import topology_label
from tests.rules.kg_cases import case_ids, load_table, run_case

TABLE = load_table("placement.yaml")


@pytest.mark.parametrize("case", TABLE["cases"], ids=case_ids(TABLE))
def test_case(case: dict[str, Any]) -> None:
    run_case(TABLE, case)


@pytest.mark.parametrize(
    ("key", "is_topology"),
    [
        ("cloud.provider.com/topology-rack", True),
        ("cloud.google.com/gce-topology-block", True),
        ("topology.k8s.aws/network-node-layer-3", True),
        ("nvidia.com/gpu.clique", True),
        ("oci.oraclecloud.com/rdma.local_block_id", True),
        ("example.com/rack", True),
        ("topology.kubernetes.io/zone", False),
        ("topology.kubernetes.io/region", False),
        ("kubernetes.io/hostname", False),
        ("nvidia.com/gpu.product", False),
        ("node.kubernetes.io/instance-type", False),
    ],
)
def test_topology_labels(key: str, is_topology: bool) -> None:
    assert topology_label(key) is is_topology
