"""Every bundled preset loads, is self-consistent and round-trips through the JSON profile form."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from kubegpu.errors import InputError
from kubegpu.topology.model import NodeTopology
from kubegpu.topology.presets import load_node, load_preset, preset_names

NAMES = preset_names()


def test_required_presets_exist() -> None:
    required = {
        "dgx-h100",
        "hgx-h100-8gpu",
        "dgx-h200",
        "dgx-b200",
        "aws-p5.48xlarge",
        "aws-p4d.24xlarge",
        "gcp-a3-highgpu-8g",
        "gcp-a3-megagpu-8g",
        "azure-nd-h100-v5",
        "gb200-nvl72-tray",
        "amd-mi300x-8gpu",
        "l40s-4gpu-1socket",
        "topoSingleSocketHT",
        "topoDualSocketHT",
        "topoTripleSocketHT",
        "topoDualSocketNoHT",
        "topoDualSocketMultiNumaPerSocketHT",
        "fakeTopoMultiSocketDualSocketPerNumaHT",
        "cpumanagerHintsMachineInfo",
    }
    assert required <= set(NAMES), sorted(required - set(NAMES))


@pytest.mark.parametrize("name", NAMES)
def test_preset_is_self_consistent(name: str) -> None:
    topo = load_preset(name)
    assert topo.name == name
    assert topo.sources, "every preset cites its sources"
    numa_ids = {n.id for n in topo.numa_nodes}
    assert {c.numa for c in topo.cpus} <= numa_ids, "every CPU's NUMA node exists"
    for gpu in topo.gpus:
        assert gpu.numa_node is None or gpu.numa_node in numa_ids
        assert gpu.memory_numa_node is None or gpu.memory_numa_node in numa_ids
        assert set(gpu.local_cpus) <= set(topo.cpu_by_id)
    assert [g.index for g in topo.gpus] == list(range(len(topo.gpus)))
    assert len({g.pci_bus_id for g in topo.gpus}) == len(topo.gpus)
    siblings_per_core = Counter(c.core for c in topo.cpus).values()
    assert len(set(siblings_per_core)) == 1, "every core has the same number of threads"
    for cpu in topo.cpus:  # a core lives on one socket and one NUMA node
        assert {(c.socket, c.numa) for c in topo.cpus if c.core == cpu.core} == {(cpu.socket, cpu.numa)}
    for node in topo.numa_nodes:
        assert node.memory_bytes >= 0
        assert set(node.distances) == numa_ids
        assert node.distances[node.id] == 10


@pytest.mark.parametrize("name", NAMES)
def test_preset_json_round_trip(name: str) -> None:
    topo = load_preset(name)
    again = NodeTopology.from_dict(json.loads(json.dumps(topo.to_dict())))
    assert again == topo


def test_dgx_h100_facts() -> None:
    topo = load_preset("dgx-h100")
    assert (topo.num_cpus, topo.num_cores, topo.num_sockets, topo.threads_per_core) == (
        224,
        112,
        2,
        2,
    )
    assert topo.cpus_in_numa(0) == tuple(range(56)) + tuple(range(112, 168))
    assert topo.siblings(5) == (5, 117)
    assert [g.numa_node for g in topo.gpus] == [0, 0, 0, 0, 1, 1, 1, 1]


def test_kubelet_fixture_matches_vectors(shared_dir: Path) -> None:
    data = json.loads((shared_dir / "vectors/kubelet/fixtures.json").read_text())
    for fixture in data["cpu_topologies"]:
        topo = load_preset(fixture["name"])
        got = [(c.id, c.core, c.socket, c.numa) for c in topo.cpus]
        want = sorted((c["cpu"], c["core"], c["socket"], c["numa"]) for c in fixture["cpus"])
        assert got == want
        assert topo.num_sockets == fixture["num_sockets"]
        assert len(topo.numa_ids) == fixture["num_numa_nodes"]


def test_load_node_file_and_errors(tmp_path: Path) -> None:
    profile = tmp_path / "node.json"
    profile.write_text(json.dumps(load_preset("topoDualSocketHT").to_dict()))
    assert load_node(str(profile)).cpus == load_preset("topoDualSocketHT").cpus
    with pytest.raises(InputError, match="no node preset or profile file"):
        load_node(str(tmp_path / "missing.json"))
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\ncpus: [\n")
    with pytest.raises(InputError) as err:
        load_node(str(bad))
    assert err.value.file == str(bad) and err.value.line is not None
    broken = tmp_path / "broken.json"
    broken.write_text('{"cpus": [{"id": 0}]}')
    with pytest.raises(InputError, match="missing field 'core'"):
        load_node(str(broken))
