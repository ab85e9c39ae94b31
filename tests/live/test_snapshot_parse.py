"""Dump loading errors, pod request arithmetic, and the stranded-GPU search, with properties."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubegpu.errors import InputError
from kubegpu.live.fit import NodeFree, copies, usable_gpus
from kubegpu.live.model import NodeInfo, PodShape
from kubegpu.live.parse import parse_pod
from kubegpu.live.snapshot import build_snapshot, configz_node, load_snapshot


def test_bad_json_names_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "dump.json"
    bad.write_text('{"kind": "List",\n "items": [\n  {"kind": "Node",, }\n]}')
    with pytest.raises(InputError) as info:
        load_snapshot([bad])
    assert info.value.file == str(bad) and info.value.line == 3


def test_bad_quantity_names_object_and_field(tmp_path: Path) -> None:
    dump = tmp_path / "pods.json"
    dump.write_text(
        json.dumps(
            {
                "kind": "Pod",
                "apiVersion": "v1",
                "metadata": {"name": "p", "namespace": "ns"},
                "spec": {"containers": [{"name": "c", "resources": {"requests": {"nvidia.com/gpu": "two"}}}]},
            }
        )
    )
    with pytest.raises(
        InputError,
        match=r"Pod ns/p\.spec\.containers\[0\]\.resources\.requests"
        r"\.nvidia\.com/gpu",
    ):
        load_snapshot([dump])


def test_not_an_object_and_missing_files(tmp_path: Path) -> None:
    dump = tmp_path / "x.json"
    dump.write_text("[1, 2]")
    with pytest.raises(InputError, match="expected a Kubernetes object"):
        load_snapshot([dump])
    with pytest.raises(InputError, match="does not exist"):
        load_snapshot([tmp_path / "nope.json"])
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(InputError, match="no snapshot files"):
        load_snapshot([empty])


def test_configz_needs_a_node_name(tmp_path: Path) -> None:
    dump = tmp_path / "kubelet.json"
    dump.write_text('{"kubeletconfig": {"cpuManagerPolicy": "static"}}')
    with pytest.raises(InputError, match=r"configz-NODE\.json"):
        load_snapshot([dump])
    assert configz_node(Path("configz-gpu-1.json")) == "gpu-1"
    assert configz_node(Path("gpu-1.configz.json")) == "gpu-1"


def test_yaml_dump_and_typed_list(tmp_path: Path) -> None:
    dump = tmp_path / "nodes.yaml"
    dump.write_text(
        "apiVersion: v1\nkind: NodeList\nitems:\n- metadata: {name: n1}\n"
        "  status: {allocatable: {nvidia.com/gpu: 2, cpu: '8'}}\n"
    )
    snapshot = load_snapshot([dump])
    assert snapshot.nodes[0].allocatable == {"nvidia.com/gpu": 2, "cpu": 8000}


def test_objects_are_sorted_by_kind_and_api_group_and_the_rest_counted() -> None:
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}, "status": {}}
    budget = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "b", "namespace": "ns"}}
    objects = [
        (node, "nodes.json"),
        (budget, "pdb.json"),
        ({**budget, "apiVersion": "v1"}, "pdb.json"),  # a PodDisruptionBudget outside group policy is not one
        ({"apiVersion": "example.com/v1", "kind": "Topology", "metadata": {"name": "t"}}, "x.json"),
        ({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}, "x.json"),
        ({"metadata": {"name": "nameless"}}, "x.json"),
    ]
    snap = build_snapshot(objects, notes=("read from files",), listed=("PriorityClass",))
    assert [n.name for n in snap.nodes] == ["n"]
    assert [b.name for b in snap.disruption_budgets] == ["b"] and snap.kueue_topologies == ()
    assert snap.notes == (
        "read from files",
        "ignored objects the audit does not use: 1 <no kind>, 1 ConfigMap, 1 PodDisruptionBudget, 1 Topology",
    )
    assert snap.kinds == {"Node", "PodDisruptionBudget", "Topology", "ConfigMap", "", "PriorityClass"}
    with pytest.raises(InputError, match="node n appears twice in the snapshot") as info:
        build_snapshot([(node, "a.json"), (node, "b.json")], source="dump")
    assert info.value.file == "dump"


def test_sidecar_and_init_requests() -> None:
    """v1.35 PodRequests: sidecars run beside later init containers and the app containers."""
    pod = parse_pod(
        {
            "metadata": {"name": "p"},
            "spec": {
                "initContainers": [
                    {"name": "side", "restartPolicy": "Always", "resources": {"requests": {"cpu": "1"}}},
                    {"name": "init", "resources": {"requests": {"cpu": "3"}}},
                ],
                "containers": [{"name": "app", "resources": {"requests": {"cpu": "2"}}}],
                "overhead": {"cpu": "250m"},
            },
        }
    )
    # init step: 1 (sidecar) + 3 = 4; steady state: 2 + 1 = 3; max 4, plus overhead 0.25
    assert pod.requests["cpu"] == 4250


requests = st.dictionaries(
    st.sampled_from(["cpu", "memory", "nvidia.com/gpu"]), st.integers(min_value=0, max_value=10_000), max_size=3
)


@given(st.lists(requests, max_size=4), st.lists(requests, max_size=3))
def test_effective_requests_cover_every_phase(apps: list[dict[str, int]], inits: list[dict[str, int]]) -> None:
    def quantities(r: dict[str, int]) -> dict[str, str]:
        return {k: f"{v}m" if k == "cpu" else str(v) for k, v in r.items()}  # cpu is counted in millicores

    spec = {
        "initContainers": [{"name": f"i{i}", "resources": {"requests": quantities(r)}} for i, r in enumerate(inits)],
        "containers": [{"name": f"a{i}", "resources": {"requests": quantities(r)}} for i, r in enumerate(apps)],
    }
    total = parse_pod({"metadata": {"name": "p"}, "spec": spec}).requests
    for name in ("cpu", "memory", "nvidia.com/gpu"):
        assert total.get(name, 0) >= sum(a.get(name, 0) for a in apps)
        assert all(total.get(name, 0) >= i.get(name, 0) for i in inits)
        assert total.get(name, 0) == max([sum(a.get(name, 0) for a in apps)] + [i.get(name, 0) for i in inits])


shapes = st.builds(
    PodShape,
    gpu_resource=st.just("nvidia.com/gpu"),
    gpus=st.integers(min_value=1, max_value=8),
    cpu_millis=st.integers(min_value=0, max_value=64).map(lambda c: c * 1000),
    memory_bytes=st.just(0),
)


@settings(max_examples=60)
@given(st.integers(min_value=0, max_value=8), st.integers(min_value=0, max_value=100), st.lists(shapes, max_size=5))
def test_usable_gpus_is_bounded_and_at_least_any_single_shape(gpus: int, cpu: int, demand: list[PodShape]) -> None:
    node = NodeInfo("n", {"nvidia.com/gpu": 8, "cpu": 100_000}, {})
    free = NodeFree(node, {"nvidia.com/gpu": gpus, "cpu": cpu * 1000})
    usable = usable_gpus(free, "nvidia.com/gpu", demand)
    assert 0 <= usable <= gpus
    for shape in demand:
        assert usable >= copies(free, shape) * shape.gpus
