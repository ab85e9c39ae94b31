"""Upstream scheduler test tables (../shared/vectors/scheduler) run against our models.

Parametrised at collection time; every case is a test of its own and none is special-cased.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kubegpu.errors import ConfigError
from kubegpu.scheduler.gpu.fragmentation import TypicalPod, gpu_frag_milli, node_frag_milli
from kubegpu.scheduler.noderesources import (
    BalancedAllocationScorer,
    FitScorer,
    ResourceSpec,
    ShapePoint,
    Strategy,
    broken_linear,
    requested_to_capacity_ratio,
    scaled_utilization,
)
from kubegpu.scheduler.resources import NodeResources, ResourceRequest, resource_request
from kubegpu.scheduler.volcano import BinpackArgs, binpack_score
from tests.paths import vectors_root

ROOT = vectors_root() / "scheduler"
K8S_FILES = (
    "least_allocated.json",
    "most_allocated.json",
    "requested_to_capacity_ratio.json",
    "balanced_allocation.json",
    "fit_score.json",
)


def _load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((ROOT / name).read_text())
    return data


def _cases(name: str, section: str | None = None, key: str = "cases") -> list[Any]:
    path = ROOT / name
    if not path.is_file():
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"{path} absent (set KUBEGPU_VECTORS_DIR)"))]
    data = _load(name)
    items = data[section][key] if section else data[key]
    return [pytest.param((data, case), id=f"{Path(name).stem}:{case.get('name', i)}") for i, case in enumerate(items)]


def _k8s_cases() -> list[Any]:
    out: list[Any] = []
    for name in K8S_FILES:
        out.extend(_cases(name))
    return out


def _pod(spec: dict[str, Any]) -> ResourceRequest:
    pod = resource_request(spec.get("containers", []), spec.get("sidecars", []))
    # the transcription's canonical sums must be what our request model computes
    assert dict(pod.requests) == {k: v for k, v in spec["requests"].items()}
    return pod


def _nodes(case: dict[str, Any]) -> list[NodeResources]:
    dra = case.get("dra_extended_resource")
    nodes = []
    for node in case["nodes"]:
        alloc = dict(node["allocatable"])
        req: dict[str, int] = {}
        nonzero: dict[str, int] = {}
        count = 0
        for pod in case["existing_pods"]:
            if pod.get("node") != node["name"]:
                continue
            p = resource_request(pod.get("containers", []), pod.get("sidecars", []))
            for k, v in p.requests.items():
                req[k] = req.get(k, 0) + v
            for k, v in p.nonzero.items():
                nonzero[k] = nonzero.get(k, 0) + v
            count += 1
        if dra:  # DRA-backed extended resource: devices in ResourceSlices act as allocatable
            name = dra["device_class_maps_extended_resource"]
            devices = dra["devices_per_node"].get(node["name"], 0)
            if devices:
                alloc[name] = devices
                req[name] = req.get(name, 0) + dra["allocated_per_node"].get(node["name"], 0)
        nodes.append(NodeResources(node["name"], alloc, req, nonzero, count))
    return nodes


@pytest.mark.parametrize("item", _k8s_cases())
def test_noderesources_vector(item: tuple[dict[str, Any], dict[str, Any]]) -> None:
    data, case = item
    resources = tuple(ResourceSpec(r["name"], r["weight"]) for r in case["resources"])
    plugin = data["plugin"]
    strategy_name = case.get("strategy") or data["strategy"]
    strategy = Strategy(strategy_name) if plugin == "NodeResourcesFit" else Strategy.LEAST_ALLOCATED
    shape = tuple(ShapePoint(p["utilization"], p["score"]) for p in case.get("shape", []))
    if "expect_config_error" in case:
        with pytest.raises(
            ConfigError, match=case["expect_config_error"]["field"].replace("[", r"\[").replace("]", r"\]")
        ):
            FitScorer(strategy, resources, shape)
        return
    pod = _pod(case["incoming_pod"])
    nodes = _nodes(case)
    if plugin == "NodeResourcesBalancedAllocation":
        scorer = BalancedAllocationScorer(resources)
        if case.get("expect_prescore_status") == "Skip":
            assert scorer.skip(pod)
            return
        got = {n.name: scorer.score(n, pod) for n in nodes}
    else:
        fit = FitScorer(strategy, resources, shape)
        got = {}
        for n in nodes:
            try:
                got[n.name] = fit.score(n, pod)
            except ConfigError:
                assert case.get("expected_score_status") == "Error"
                got[n.name] = 0
    assert got == case["expected_scores"]


@pytest.mark.parametrize("item", _cases("requested_to_capacity_ratio.json", "broken_linear_function"))
def test_broken_linear_function(item: tuple[dict[str, Any], dict[str, Any]]) -> None:
    _, case = item
    shape = [ShapePoint(p["utilization"], p["score"]) for p in case["points"]]
    for p, expected in case["assertions"]:
        assert broken_linear(shape, p) == expected, p


@pytest.mark.parametrize("item", _cases("requested_to_capacity_ratio.json", "scorer_unit"))
def test_rtcr_scorer_unit(item: tuple[dict[str, Any], dict[str, Any]]) -> None:
    _, case = item
    shape = [ShapePoint(p["utilization"], p["score"]) for p in case["shape_scaled"]]
    got = requested_to_capacity_ratio([int(case["requested"])], [int(case["capacity"])], [1], shape)
    assert got == int(case["expected"])


@pytest.mark.parametrize("item", _cases("requested_to_capacity_ratio.json", "scaled_utilization"))
def test_scaled_utilization(item: tuple[dict[str, Any], dict[str, Any]]) -> None:
    _, case = item
    assert scaled_utilization(int(case["requested"]), int(case["capacity"]), case["max"]) == case["expected"]


def _typical(data: dict[str, Any], name: str) -> list[TypicalPod]:
    return [
        TypicalPod(
            t["milli_cpu"],
            t["milli_gpu"],
            t["gpu_number"],
            tuple(m for m in t["gpu_type"].split("|") if m),
            t["percentage"] / 100,
        )
        for t in data["typical_pod_sets"][name]
    ]


@pytest.mark.parametrize("item", _cases("fgd_fragmentation.json"))
def test_fgd_node_fragmentation(item: tuple[dict[str, Any], dict[str, Any]]) -> None:
    data, case = item
    node = case["node"]
    got = node_frag_milli(
        _typical(data, case["typical_pod_set"]), node["gpu_type"], node["milli_cpu_left"], node["milli_gpu_left"]
    )
    assert abs(got - case["expected_frag_milli"]) <= case["tolerance"]


@pytest.mark.parametrize("item", _cases("fgd_fragmentation.json", key="gpu_frag_milli_cases"))
def test_fgd_gpu_frag_milli(item: tuple[dict[str, Any], dict[str, Any]]) -> None:
    _, case = item
    assert gpu_frag_milli(case["milli_gpu_left"], case["pod_milli_gpu"]) == case["expected"]


def _binpack_cases() -> list[Any]:
    path = ROOT / "volcano_binpack.json"
    if not path.is_file():
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"{path} absent"))]
    data = _load("volcano_binpack.json")
    out = []
    for config in data["configs"]:
        for task in data["tasks"]:
            for node in data["nodes"]:
                expected = config["expected"][task["name"]][node["name"]]
                out.append(
                    pytest.param(
                        (config, task, node, expected), id=f"{config['name'][:5]}:{task['name']}:{node['name']}"
                    )
                )
    return out


@pytest.mark.parametrize("item", _binpack_cases())
def test_volcano_binpack(item: tuple[dict[str, Any], dict[str, Any], dict[str, Any], float]) -> None:
    config, task, node, expected = item
    args = BinpackArgs(config["binpack.weight"], config["weights"])
    got = binpack_score(task["request"], node["allocatable"], node["used"], args)
    assert abs(got - expected) <= 1e-6
