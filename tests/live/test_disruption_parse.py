"""What the snapshot reads for `defrag`: PodDisruptionBudgets, PriorityClasses, claims and volumes, and each pod's
owners, priority, readiness and volumes; bad values are one InputError naming the object and field."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kubegpu.errors import InputError
from kubegpu.live.parse import (
    parse_disruption_budget,
    parse_persistent_volume,
    parse_pod,
    parse_priority_class,
    parse_volume_claim,
)
from kubegpu.live.snapshot import load_snapshot


def _pdb(spec: dict[str, Any], status: dict[str, Any] | None = None) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "web", "namespace": "ml", "generation": 3},
        "spec": spec,
    }
    if status is not None:
        obj["status"] = status
    return obj


def test_budget_with_status_and_percentages() -> None:
    budget = parse_disruption_budget(
        _pdb(
            {"minAvailable": "50%", "selector": {"matchLabels": {"app": "web"}}},
            {
                "observedGeneration": 3,
                "disruptionsAllowed": 1,
                "currentHealthy": 3,
                "desiredHealthy": 2,
                "expectedPods": 4,
            },
        )
    )
    assert budget.key == "ml/web" and budget.min_available == "50%" and budget.max_unavailable is None
    assert budget.generation == 3 and budget.status is not None and budget.status.disruptions_allowed == 1
    assert budget.unhealthy_pod_eviction_policy == "IfHealthyBudget"
    assert budget.selector is not None and budget.selector.matches({"app": "web", "x": "y"})
    assert not budget.selector.matches({"app": "db"})


def test_budget_selectors_empty_missing_and_invalid() -> None:
    everything = parse_disruption_budget(_pdb({"maxUnavailable": 1, "selector": {}}))
    assert everything.selector is not None and everything.selector.matches({}) and everything.status is None
    nothing = parse_disruption_budget(_pdb({"maxUnavailable": "1"}))
    assert nothing.selector is None and nothing.max_unavailable == 1
    bad = parse_disruption_budget(
        _pdb({"maxUnavailable": 1, "selector": {"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]}})
    )
    assert bad.selector is not None and not bad.selector.matches({"a": "2"})
    exists = parse_disruption_budget(
        _pdb({"minAvailable": 0, "selector": {"matchExpressions": [{"key": "a", "operator": "Exists"}]}})
    )
    assert exists.selector is not None and exists.selector.matches({"a": ""}) and not exists.selector.matches({})


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"minAvailable": "half"}, r"spec\.minAvailable: expected a number or a percentage"),
        ({"maxUnavailable": -1}, r"spec\.maxUnavailable: must not be negative"),
        ({"maxUnavailable": True}, r"spec\.maxUnavailable: expected a number or a percentage"),
        ({"selector": []}, r"spec\.selector: expected an object"),
    ],
)
def test_bad_budget_is_one_line(spec: dict[str, Any], message: str) -> None:
    with pytest.raises(InputError, match=message):
        parse_disruption_budget(_pdb(spec), "pdb.json")


def test_priority_class_claim_and_volume() -> None:
    high = parse_priority_class(
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "hi"}, "value": 1000}
    )
    assert (high.name, high.value, high.global_default) == ("hi", 1000, False)
    with pytest.raises(InputError, match=r"PriorityClass lo\.value: required"):
        parse_priority_class({"kind": "PriorityClass", "metadata": {"name": "lo"}})
    claim = parse_volume_claim({"metadata": {"name": "data", "namespace": "ml"}, "spec": {"volumeName": "pv-1"}})
    assert (claim.namespace, claim.name, claim.volume_name) == ("ml", "data", "pv-1")
    local = parse_persistent_volume(
        {
            "metadata": {"name": "pv-1"},
            "spec": {
                "local": {"path": "/mnt/disk"},
                "nodeAffinity": {
                    "required": {
                        "nodeSelectorTerms": [
                            {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": ["a"]}]}
                        ]
                    }
                },
            },
        }
    )
    assert local.local and local.node_affinity[0][0].values == ("a",)


def test_pod_owners_priority_readiness_and_volumes() -> None:
    pod = parse_pod(
        {
            "metadata": {
                "name": "p",
                "namespace": "ml",
                "uid": "u-1",
                "resourceVersion": "42",
                "ownerReferences": [
                    {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "controller": True},
                    {"apiVersion": "v1", "kind": "ConfigMap", "name": "cm"},
                ],
            },
            "spec": {
                "priority": 100,
                "priorityClassName": "hi",
                "containers": [{"name": "c", "image": "i"}],
                "volumes": [
                    {"name": "scratch", "emptyDir": {}},
                    {"name": "shm", "emptyDir": {"medium": "Memory"}},
                    {"name": "data", "persistentVolumeClaim": {"claimName": "data"}},
                ],
            },
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
        }
    )
    assert pod.controller is not None and pod.controller.kind == "ReplicaSet"
    assert (pod.priority, pod.priority_class, pod.ready, pod.deleting) == (100, "hi", True, False)
    assert [(v.name, v.source, v.medium, v.claim) for v in pod.volumes] == [
        ("scratch", "emptyDir", "", ""),
        ("shm", "emptyDir", "Memory", ""),
        ("data", "persistentVolumeClaim", "", "data"),
    ]
    assert (pod.uid, pod.resource_version) == ("u-1", "42")
    with pytest.raises(InputError, match=r"Pod ml/q.spec.priority: expected an integer"):
        parse_pod({"metadata": {"name": "q", "namespace": "ml"}, "spec": {"priority": "high", "containers": []}})


def test_an_empty_typed_list_says_the_kind_was_read(tmp_path: Path) -> None:
    (tmp_path / "nodes.json").write_text(json.dumps({"kind": "NodeList", "apiVersion": "v1", "items": []}))
    (tmp_path / "pdbs.json").write_text(
        json.dumps({"kind": "PodDisruptionBudgetList", "apiVersion": "policy/v1", "items": []})
    )
    snapshot = load_snapshot([tmp_path])
    assert "PodDisruptionBudget" in snapshot.kinds and "PriorityClass" not in snapshot.kinds
