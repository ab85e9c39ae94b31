"""Static CPU policy vectors: Allocate, aligned allocation, start, remove, reuse, hints."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kubegpu.errors import ModelError
from kubegpu.kubelet.bitmask import NUMAMask
from kubegpu.kubelet.cpumanager.cpuset import bits_of, ids_of
from kubegpu.kubelet.cpumanager.options import parse_options
from kubegpu.kubelet.cpumanager.policy_static import CPUState, StaticPolicy
from kubegpu.kubelet.cpumanager.topology import CPUTopology
from kubegpu.kubelet.features import FeatureGates
from kubegpu.kubelet.pod import PodRequest
from kubegpu.kubelet.qos import qos_class
from kubegpu.kubelet.reasons import SMTAlignmentError
from kubegpu.topology.model import CPUInfo
from tests.kubelet import vectors as V

FILE = "cpumanager_static_policy.json"
ALL_GATES = FeatureGates(gates={"CPUManagerPolicyAlphaOptions": True})


def _pod(raw: dict[str, Any], default_memory: bool = True) -> PodRequest:
    def spec(c: dict[str, Any], i: int) -> dict[str, Any]:
        req = {"cpu": c["cpu_request"]}
        lim = {"cpu": c["cpu_limit"]}
        if default_memory or "memory_request" in c:
            req["memory"] = c.get("memory_request", "1G")
            lim["memory"] = c.get("memory_limit", "1G")
        out: dict[str, Any] = {
            "name": c.get("name", f"c{i}"),
            "resources": {"requests": req, "limits": lim},
        }
        if c.get("restartPolicy"):
            out["restartPolicy"] = c["restartPolicy"]
        return out

    body = {
        "initContainers": [spec(c, i) for i, c in enumerate(raw.get("init_containers", []))],
        "containers": [spec(c, i) for i, c in enumerate(raw["containers"])],
    }
    return PodRequest.from_pod_spec("pod", body, uid=raw.get("uid", "fakePod"))


def _policy(case: dict[str, Any], options: dict[str, str] | None) -> StaticPolicy:
    topo = CPUTopology.from_node(V.fixture_topology(case["topology"]))
    reserved = bits_of(case.get("reserved_cpus") or [])
    return StaticPolicy(topo, case["num_reserved_cpus"], reserved, parse_options(options, ALL_GATES))


def _state(case: dict[str, Any]) -> CPUState:
    assignments = {
        pod: {name: bits_of(cpus) for name, cpus in containers.items()}
        for pod, containers in (case.get("st_assignments") or {}).items()
    }
    return CPUState(bits_of(case["st_default_cpuset"]), assignments)


def _option_runs() -> list[Any]:
    params = []
    for p in V.cases(FILE, "allocate"):
        case = p.values[0]
        if case is None:
            return V.absent(2)
        for i, opts in enumerate(case.get("run_with_options") or [case["options"]]):
            params.append(pytest.param(case, opts, id=f"{case['id']}-opts{i}"))
    return params


@pytest.mark.parametrize(("case", "options"), _option_runs())
def test_allocate(case: dict[str, Any], options: dict[str, str] | None) -> None:
    policy = _policy(case, options)
    state = _state(case)
    pod = _pod(case["pod"])
    container = next(c for c in pod.all_containers() if c.name == case["container"])
    hint = V.hint(case["topology_hint"]) if case["topology_hint"] else None
    expected = case["expected"]
    affinity = hint.affinity if hint else None
    if expected["error"]:
        err_type = SMTAlignmentError if expected["error"]["type"] == "SMTAlignmentError" else ModelError
        with pytest.raises(err_type) as err:
            policy.allocate(state, pod, container, qos_class(pod), affinity)
        assert str(err.value) == expected["error"]["message"]
        assert state.get(pod.key, container.name) is None
        return
    cpus = policy.allocate(state, pod, container, qos_class(pod), affinity)
    got = state.get(pod.key, container.name)
    assert (got is not None) == expected["cpu_alloc"]
    assert ids_of(cpus) == tuple(sorted(expected["cpuset"]))
    assert cpus & state.default == 0


@pytest.mark.parametrize("case", V.cases(FILE, "allocate_cpus_with_numa_mask"))
def test_allocate_with_numa_mask(case: dict[str, Any]) -> None:
    topo = CPUTopology.from_node(V.fixture_topology(case["topology"]))
    policy = StaticPolicy(topo, case["num_reserved_cpus"])
    state = CPUState(bits_of(case["st_default_cpuset"]))
    affinity = NUMAMask.of(case["numa_affinity"]) if case["numa_affinity"] else None
    cpus = policy.allocate_cpus(state, case["num_requested"], affinity, 0)
    assert ids_of(cpus) == tuple(sorted(case["expected_cpuset"]))


@pytest.mark.parametrize("case", V.cases(FILE, "start_with_reserved_list"))
def test_start_with_reserved_list(case: dict[str, Any]) -> None:
    if case["expected_new_error"]:
        with pytest.raises(ModelError) as err:
            _policy(case, case["options"])
        assert str(err.value) == case["expected_new_error"]
        return
    policy = _policy(case, case["options"])
    state = _state(case)
    if case["expected_start_error"]:
        with pytest.raises(ModelError) as err:
            policy.start(state)
        assert str(err.value) == case["expected_start_error"]
        return
    policy.start(state)
    assert ids_of(state.default) == tuple(case["expected_default_cpuset"])


@pytest.mark.parametrize("case", V.cases(FILE, "remove_container"))
def test_remove(case: dict[str, Any]) -> None:
    policy = _policy(case, None)
    state = _state(case)
    policy.remove_container(state, case["pod_uid"], case["container"])
    assert ids_of(state.default) == tuple(case["expected_default_cpuset"])


@pytest.mark.parametrize("case", V.cases(FILE, "reuse"))
def test_reuse(case: dict[str, Any]) -> None:
    policy = _policy(case, None)
    state = _state(case)
    pod = _pod(case["pod"])
    for container in pod.all_containers():
        policy.allocate(state, pod, container, qos_class(pod), None)
    assert ids_of(state.default) == tuple(case["expected_default_cpuset_after_alloc"])
    if "expected_default_cpuset_after_remove" in case:
        policy.remove_container(state, pod.key, pod.init_containers[0].name)
        assert ids_of(state.default) == tuple(case["expected_default_cpuset_after_remove"])


def _hint_topology(case: dict[str, Any]) -> CPUTopology:
    if case["topology"] in {t["name"] for t in V.load_all()["fixtures.json"]["cpu_topologies"]}:
        return CPUTopology.from_node(V.fixture_topology(case["topology"]))
    fx = V.load_all()["cpumanager_topology_hints.json"]["fixture_returnMachineInfo"]
    cpus = [
        CPUInfo(id=t, core=min(core["threads"]), socket=core["socket"], numa=node["numa"])
        for node in fx["cadvisor_topology"]
        for core in node["cores"]
        for t in core["threads"]
    ]
    return CPUTopology.from_cpus(cpus)


@pytest.mark.parametrize("case", V.cases("cpumanager_topology_hints.json", "hints"))
def test_hints(case: dict[str, Any]) -> None:
    topo = _hint_topology(case)
    policy = StaticPolicy(topo, 0, 0, parse_options(case["options"], ALL_GATES))
    assignments = {pod: {name: bits_of(cpus) for name, cpus in cs.items()} for pod, cs in case["assignments"].items()}
    state = CPUState(bits_of(case["default_cpuset"]), assignments)
    pod = _pod(case["pod"])
    expected = {(tuple(h["affinity"]), h["preferred"]) for h in case["expected_hints"]}
    qos = qos_class(pod)
    for answer in (
        policy.container_hints(state, pod, pod.containers[0], qos),
        policy.pod_hints(state, pod, qos),
    ):
        assert answer is not None
        got = {(h.affinity.ids(), h.preferred) for h in answer["cpu"] if h.affinity}
        assert got == expected


@pytest.mark.parametrize("case", V.cases("cpumanager_topology_hints.json", "pod_guaranteed_cpus"))
def test_pod_guaranteed_cpus(case: dict[str, Any]) -> None:
    pod = _pod({"init_containers": case["init_containers"], "containers": case["containers"]})
    policy = StaticPolicy(CPUTopology.from_node(V.fixture_topology("topoSingleSocketHT")), 0)
    assert policy.pod_guaranteed_cpus(qos_class(pod), pod) == case["expected_cpus"]


START = json.loads((Path(__file__).parent / "data" / "cpumanager_static_policy_start.json").read_text())


@pytest.mark.parametrize("case", START["cases"], ids=[c["description"] for c in START["cases"]])
def test_start_validates_a_saved_state(case: dict[str, Any]) -> None:
    """TestStaticPolicyStart: Start() refuses a saved state the node's CPUs do not match."""
    policy = _policy(case, case["options"])
    state = _state(case)
    if case["expected_error"]:
        with pytest.raises(ModelError) as err:
            policy.start(state)
        assert str(err.value) == case["expected_error"]
        return
    policy.start(state)
    assert ids_of(state.default) == tuple(case["expected_default_cpuset"])
