"""Upstream scheduler test tables (tests/scheduler/data/filter_status.json) run against the GPU model's filter
plugins and the FitError message; each case names its Go test."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import kubegpu.manifests.pod as podmodel
from kubegpu.live.parse import node_affinity, tolerations
from kubegpu.scheduler.constraints import Taint
from kubegpu.scheduler.framework import Framework
from kubegpu.scheduler.gpu.filters import NodeAffinity, NodeResourcesFit, NodeUnschedulable, TaintToleration
from kubegpu.scheduler.gpu.objects import node_of, pod_of
from kubegpu.scheduler.gpu.state import GpuCluster, GpuPod, NodeSpec
from kubegpu.scheduler.status import CODES_BY_LABEL, Code, Diagnosis, FitError, NodeToStatus, Status
from kubegpu.units.quantity import parse_quantity

DATA = json.loads((Path(__file__).parent / "data" / "filter_status.json").read_text())


def _cases(section: str) -> list[Any]:
    return [pytest.param(case, id=case["name"][:80]) for case in DATA[section]["cases"]]


def _requests(spec: dict[str, Any]) -> dict[str, int]:
    model = podmodel.read_pod_spec(spec, None, where="pod", source="vector")
    return podmodel.canonical_amounts(podmodel.pod_requests(model))


def _amounts(raw: dict[str, str]) -> dict[str, int]:
    return {k: parse_quantity(v).millis if k == "cpu" else parse_quantity(v).ceil for k, v in raw.items()}


def _status(plugin: Any, cluster: GpuCluster, pod: GpuPod, node: int = 0) -> Status:
    mask = plugin.filter(cluster, pod)
    status: Status = plugin.status(cluster, pod, node)
    # the mask and the status are one answer
    assert (mask is None or bool(mask[node])) == status.success
    return status


def _check(status: Status, case: dict[str, Any]) -> None:
    assert status.code is CODES_BY_LABEL[case["want_code"]]
    assert sorted(status.reasons) == sorted(case["want_reasons"])


@pytest.mark.parametrize("case", _cases("fit_error"))
def test_fit_error_message(case: dict[str, Any]) -> None:
    statuses = {name: Status(CODES_BY_LABEL[s["code"]], tuple(s["reasons"])) for name, s in case["statuses"].items()}
    absent = Status(CODES_BY_LABEL[case["absent"]["code"]], tuple(case["absent"]["reasons"]))
    diagnosis = Diagnosis(
        NodeToStatus(statuses, absent),
        pre_filter_msg=case["pre_filter_msg"],
        post_filter_msg=case["post_filter_msg"],
    )
    assert FitError(case["num_all_nodes"], diagnosis).message == case["want"]


def test_fit_error_counts_absent_nodes_and_sorts_as_strings() -> None:
    # ten nodes rejected for cpu sort before two tainted ones: "10 ..." < "2 ..." as strings, as sort.Strings does
    explicit = {f"n{i}": Status(Code.UNSCHEDULABLE, ("Insufficient cpu",)) for i in range(10)}
    explicit |= {
        f"t{i}": Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("node(s) had untolerated taint(s)",)) for i in (0, 1)
    }
    absent = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("node(s) didn't satisfy plugin(s) [NodeAffinity]",))
    error = FitError(15, Diagnosis(NodeToStatus(explicit, absent)))
    assert error.message == (
        "0/15 nodes are available: 10 Insufficient cpu, 2 node(s) had untolerated taint(s), "
        "3 node(s) didn't satisfy plugin(s) [NodeAffinity]."
    )


@pytest.mark.parametrize("case", _cases("node_resources_fit"))
def test_node_resources_fit(case: dict[str, Any]) -> None:
    node = node_of("node", _amounts(DATA["node_resources_fit"]["node_allocatable"]))
    cluster = GpuCluster([node])
    existing = pod_of("existing", _requests(case["existing"]))
    cluster.bind(0, existing, ())
    pod = pod_of("pod", _requests(case["pod"]))
    _check(_status(NodeResourcesFit(), cluster, pod), case)


@pytest.mark.parametrize("case", _cases("taint_toleration"))
def test_taint_toleration(case: dict[str, Any]) -> None:
    taints = tuple(Taint(t["key"], t.get("value", ""), t.get("effect", "")) for t in case["taints"])
    cluster = GpuCluster([NodeSpec("nodeA", 4000, 1 << 30, taints=taints)])
    pod = GpuPod("pod1", 0, tolerations=tolerations(case["tolerations"], "tolerations", "vector"))
    _check(_status(TaintToleration(), cluster, pod), case)


@pytest.mark.parametrize("case", _cases("node_unschedulable"))
def test_node_unschedulable(case: dict[str, Any]) -> None:
    cluster = GpuCluster([NodeSpec("node", 4000, 1 << 30, unschedulable=case["unschedulable"])])
    pod = GpuPod("pod", 0, tolerations=tolerations(case["tolerations"], "tolerations", "vector"))
    _check(_status(NodeUnschedulable(), cluster, pod), case)


@pytest.mark.parametrize("case", _cases("node_affinity"))
def test_node_affinity(case: dict[str, Any]) -> None:
    name = case.get("node", "node")
    cluster = GpuCluster([NodeSpec(name, 4000, 1 << 30, labels=case.get("labels", {}))])
    spec = {"affinity": case["affinity"]} if "affinity" in case else {}
    pod = GpuPod(
        "pod",
        0,
        node_selector=tuple(sorted(case.get("nodeSelector", {}).items())),
        node_affinity=node_affinity(spec, "spec", "vector"),
    )
    plugin = NodeAffinity()
    _check(_status(plugin, cluster, pod), case)
    result = plugin.pre_filter(cluster, pod)
    if "want_prefilter_nodes" in case:
        assert result is not None and result.nodes is not None
        assert sorted(cluster.names[i] for i in result.nodes) == [n for n in case["want_prefilter_nodes"] if n == name]
    else:
        assert result is None


def test_prefilter_leaves_other_nodes_absent() -> None:
    nodes = [NodeSpec(f"node{i}", 1000, 1 << 30) for i in (1, 2, 3)]
    spec = {
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node2"]}]}
                    ]
                }
            }
        }
    }
    cluster = GpuCluster(nodes)
    pod = GpuPod("p", 2000, node_affinity=node_affinity(spec, "spec", "vector"))
    outcome = Framework[GpuCluster, GpuPod]([]).diagnose(cluster, pod)
    assert len(outcome.feasible) == 0
    assert FitError(3, outcome.diagnosis).message == (
        "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't satisfy plugin(s) [NodeAffinity]."
    )
    assert outcome.diagnosis.unschedulable_plugins == frozenset({"NodeAffinity", "NodeResourcesFit"})


def test_prefilter_conflict_stands_for_every_node() -> None:
    spec = {
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchFields": [
                                {"key": "metadata.name", "operator": "In", "values": ["a"]},
                                {"key": "metadata.name", "operator": "In", "values": ["b"]},
                            ]
                        }
                    ]
                }
            }
        }
    }
    cluster = GpuCluster([NodeSpec("a", 1000, 1 << 30), NodeSpec("b", 1000, 1 << 30)])
    pod = GpuPod("p", 100, node_affinity=node_affinity(spec, "spec", "vector"))
    diagnosis = Framework[GpuCluster, GpuPod]([]).diagnose(cluster, pod).diagnosis
    assert FitError(2, diagnosis).message == "0/2 nodes are available: pod affinity terms conflict."


def test_first_failing_filter_wins() -> None:
    # a cordoned node short of GPUs is counted once, for the cordon (RunFilterPlugins stops at the first)
    nodes = [
        NodeSpec("cordoned", 64000, 1 << 40, gpu_count=8, unschedulable=True),
        NodeSpec("tainted", 64000, 1 << 40, gpu_count=8, taints=(Taint("gpu", "yes", "NoSchedule"),)),
        NodeSpec("small", 64000, 1 << 40, gpu_count=4),
        NodeSpec("cpu", 64000, 1 << 40),
    ]
    pod = pod_of("p", {"cpu": 1000, "nvidia.com/gpu": 8})
    outcome = Framework[GpuCluster, GpuPod]([]).diagnose(GpuCluster(nodes), pod)
    assert FitError(4, outcome.diagnosis).message == (
        "0/4 nodes are available: 1 node(s) had untolerated taint(s), 1 node(s) were unschedulable, "
        "2 Insufficient nvidia.com/gpu."
    )
    statuses = outcome.diagnosis.node_to_status.explicit
    assert statuses["small"].code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE  # 8 > its 4 GPUs: preemption cannot help
    assert statuses["cpu"].plugin == "NodeResourcesFit"
