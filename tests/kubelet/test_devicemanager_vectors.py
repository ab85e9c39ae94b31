"""Device manager vectors: container/pod hints and topology-aligned device selection."""

from __future__ import annotations

from typing import Any

import pytest

from kubegpu.kubelet.devicemanager.manager import Device, DeviceManager, DeviceState
from kubegpu.kubelet.pod import PodRequest
from tests.kubelet import vectors as V

FILE = "devicemanager_topology.json"


def _device(raw: dict[str, Any]) -> Device:
    numa = raw["numa"]
    if numa is None or numa == "topology-with-nil-nodes":
        return Device(raw["id"], None)
    return Device(raw["id"], tuple(numa))


def _pod(raw: dict[str, Any]) -> PodRequest:
    def spec(c: dict[str, Any], prefix: str, i: int) -> dict[str, Any]:
        return {"name": c.get("name", f"{prefix}{i}"), "resources": {"limits": c["limits"]}}

    body = {
        "initContainers": [spec(c, "init", i) for i, c in enumerate(raw.get("init_containers", []))],
        "containers": [spec(c, "app", i) for i, c in enumerate(raw["containers"])],
    }
    return PodRequest.from_pod_spec("pod", body, uid=raw["uid"])


@pytest.mark.parametrize("case", V.cases(FILE, "hints"))
def test_hints(case: dict[str, Any]) -> None:
    devices = {r: [_device(d) for d in ds] for r, ds in case["devices"].items()}
    manager = DeviceManager(devices, case["numa_nodes"])
    state = DeviceState()
    for pod_uid, containers in case["allocated_devices"].items():
        for name, resources in containers.items():
            for resource, ids in resources.items():
                state.allocated.setdefault(resource, set()).update(ids)
                state.pod_devices.setdefault(pod_uid, {}).setdefault(name, {})[resource] = tuple(ids)
    pod = _pod(case["pod"])
    if case["test"] == "TestGetPodTopologyHints":
        got = manager.pod_hints(state, pod)
    else:
        got = manager.container_hints(state, pod, pod.containers[0])
    expected = case["expected_hints"]
    assert set(got) == set(expected)
    for resource, hints in expected.items():
        if hints is None:
            assert got[resource] is None
            continue
        answer = got[resource]
        assert answer is not None
        want = {(tuple(h["affinity"]), h["preferred"]) for h in hints}
        assert {(h.affinity.ids(), h.preferred) for h in answer if h.affinity} == want


def _aligned_devices(raw: list[dict[str, Any]]) -> list[Device]:
    out: list[Device] = []
    for d in raw:
        if "range" in d:
            lo, hi = d["range"]
            out.extend(Device(f"Dev{i}", (d["numa"],)) for i in range(lo, hi))
        else:
            out.append(_device(d))
    return out


@pytest.mark.parametrize("case", V.cases(FILE, "aligned_allocation"))
def test_aligned_allocation(case: dict[str, Any]) -> None:
    devices = _aligned_devices(case["devices"])
    manager = DeviceManager({case["resource"]: devices}, (0, 1))
    hint = V.hint(case["hint"])
    assert hint is not None
    chosen = manager.devices_to_allocate(
        DeviceState(),
        "pod",
        "c",
        case["resource"],
        case["request"],
        set(),
        hint.affinity,
        case["plugin_preferred_allocation"],
    )
    assert len(chosen) == case["request"]
    assert set(case["expected_preferred_subset"]) <= set(chosen)
    by_id = {d.id: d for d in devices}
    counts: dict[str, int] = {}
    for dev_id in chosen:
        for node in by_id[dev_id].numa or ():
            counts[str(node)] = counts.get(str(node), 0) + 1
    assert counts == case["expected_alignment_count_by_numa"]
