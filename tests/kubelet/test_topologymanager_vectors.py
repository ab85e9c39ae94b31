"""Topology Manager vectors: merge per policy, compare, single-numa filter, bitmask, admission."""

from __future__ import annotations

from typing import Any

import pytest

from kubegpu.errors import ModelError
from kubegpu.kubelet.bitmask import NUMAMask, iterate_masks
from kubegpu.kubelet.hints import TopologyHint
from kubegpu.kubelet.topologymanager.manager import new_policy
from kubegpu.kubelet.topologymanager.merge import (
    HintMerger,
    filter_single_numa_hints,
    max_of_min_affinity_counts,
)
from kubegpu.kubelet.topologymanager.numa_info import (
    NUMAInfo,
    numa_info_from_matrix,
    split_distances,
)
from tests.kubelet import vectors as V


def _merge_runs() -> list[Any]:
    data = V.load_all().get("topologymanager_merge.json")
    if data is None:
        return V.absent(2)
    params = []
    for run in data["runs"]:
        for case in data["cases"]:
            if case["group"] in run["case_groups"]:
                params.append(pytest.param(run, case, id=f"{run['test']}-{case['id']}"))
    return params


@pytest.mark.parametrize(("run", "case"), _merge_runs())
def test_merge(run: dict[str, Any], case: dict[str, Any]) -> None:
    nodes, matrix = V.numa_fixture(run["numa_fixture"])
    distances = numa_info_from_matrix(nodes, matrix).distances
    options = {"prefer-closest-numa-nodes": "true"} if run["options"]["PreferClosestNUMA"] else {}
    policy, _ = new_policy(run["policy"], "container", nodes, distances, options)
    result = policy.merge([V.provider(p) for p in case["providers"]])
    assert result.hint == V.hint(case["expected_hint"], nodes)
    expected_admit = run["policy"] == "best-effort" or case["expected_hint"]["preferred"]
    assert result.admit == expected_admit


@pytest.mark.parametrize("case", V.cases("topologymanager_compare.json", "compare"))
def test_compare(case: dict[str, Any]) -> None:
    merger = HintMerger(NUMAInfo((0, 1, 2, 3)), case["bestNonPreferredAffinityCount"])
    current, candidate = V.hint(case["current"]), V.hint(case["candidate"])
    assert candidate is not None
    best = merger.compare(current, candidate)
    expected = current if case["expected"] == "current" else candidate
    assert best is expected


@pytest.mark.parametrize("case", V.cases("topologymanager_compare.json", "max_of_min_affinity_counts"))
def test_max_of_min(case: dict[str, Any]) -> None:
    lists = [[V.hint(h) for h in inner] for inner in case["filtered_hints"]]
    assert max_of_min_affinity_counts(lists) == case["expected"]  # type: ignore[arg-type]


@pytest.mark.parametrize("case", V.cases("topologymanager_compare.json", "single_numa_filter"))
def test_single_numa_filter(case: dict[str, Any]) -> None:
    lists = [[V.hint(h) for h in inner] for inner in case["all_resources"]]
    got = filter_single_numa_hints(lists)  # type: ignore[arg-type]
    expected = [[V.hint(h) for h in inner or []] for inner in case["expected"]]
    assert got == expected


@pytest.mark.parametrize("case", V.cases("topologymanager_numa_bitmask.json", "closest"))
def test_closest(case: dict[str, Any]) -> None:
    matrix = case["distances"]
    nodes = tuple(range(len(matrix))) if matrix else (0, 1, 2, 3)
    info = numa_info_from_matrix(nodes, matrix) if matrix else NUMAInfo(nodes)
    current, candidate = NUMAMask.of(case["current"]), NUMAMask.of(case["candidate"])
    best = info.closest(candidate, current)
    assert best == (current if case["expected"] == "current" else candidate)


@pytest.mark.parametrize("case", V.cases("topologymanager_numa_bitmask.json", "average_distance"))
def test_average_distance(case: dict[str, Any]) -> None:
    matrix = case["distances"]
    info = numa_info_from_matrix(tuple(range(len(matrix))), matrix)
    assert info.average_distance(NUMAMask.of(case["mask"])) == pytest.approx(case["expected_average"])


@pytest.mark.parametrize("case", V.cases("topologymanager_numa_bitmask.json", "split_distances"))
def test_split_distances(case: dict[str, Any]) -> None:
    if case["expected_error_substring"]:
        with pytest.raises(ValueError, match="cannot conver"):
            split_distances(case["raw"])
    else:
        assert split_distances(case["raw"]) == case["expected"]


@pytest.mark.parametrize("case", V.cases("topologymanager_numa_bitmask.json", "is_narrower_than"))
def test_is_narrower(case: dict[str, Any]) -> None:
    first, second = NUMAMask.of(case["first"]), NUMAMask.of(case["second"])
    assert first.is_narrower_than(second) == case["expected_first_narrower"]


@pytest.mark.parametrize("case", V.cases("topologymanager_numa_bitmask.json", "iterate_bitmasks"))
def test_iterate(case: dict[str, Any]) -> None:
    assert len(list(iterate_masks(case["bits"]))) == case["expected_mask_count"]


@pytest.mark.parametrize("case", V.cases("topologymanager_admission.json", "admit"))
def test_admit(case: dict[str, Any]) -> None:
    nodes = tuple(case["numa_nodes"])
    for scope in case["scopes"]:
        policy, _ = new_policy(case["policy"], scope, nodes, None)
        result = policy.merge([V.provider(p) for p in case["providers"]])
        assert result.admit == case["expected_admit"], scope


@pytest.mark.parametrize("case", V.cases("topologymanager_admission.json", "new_manager"))
def test_new_manager(case: dict[str, Any]) -> None:
    nodes = tuple(case["topology_numa_ids"] or (0, 1))
    if case["expected_error_substring"]:
        with pytest.raises(ModelError) as err:
            new_policy(case["policy"], case["scope"], nodes, None, case["policy_options"])
        assert case["expected_error_substring"] in str(err.value)
    else:
        policy, _ = new_policy(case["policy"], case["scope"], nodes, None, case["policy_options"])
        assert policy.name == case["expected_policy"]


@pytest.mark.parametrize("case", V.cases("topologymanager_admission.json", "scope"))
def test_scope(case: dict[str, Any]) -> None:
    if case["expected_error_substring"]:
        with pytest.raises(ModelError, match=case["expected_error_substring"].replace('"', ".")):
            new_policy(case["policy"], case["scope"], (0, 1), None)
    else:
        new_policy(case["policy"], case["scope"], (0, 1), None)


def test_more_numa_nodes_than_allowed_stops_the_kubelet() -> None:
    with pytest.raises(ModelError, match="more than 8 NUMA Nodes"):
        new_policy("restricted", "pod", tuple(range(9)), None)
    policy, options = new_policy("restricted", "pod", tuple(range(9)), None, {"max-allowable-numa-nodes": "9"})
    assert options.max_allowable_numa_nodes == 9
    assert policy.merge([]).hint == TopologyHint(NUMAMask.of(range(9)), True)
