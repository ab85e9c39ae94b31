"""The probe recovers a preset exactly from a fake sysfs/procfs written from it, and runs here."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from kubegpu.errors import InputError
from kubegpu.topology.model import NodeTopology
from kubegpu.topology.presets import load_preset
from kubegpu.topology.sysfs import Roots, read_node
from tests.probe.fakefs import recorded_nvml, write_machine

PRESETS = [
    "dgx-h100",
    "aws-p5.48xlarge",
    "gb200-nvl72-tray",
    "l40s-4gpu-1socket",
    "amd-mi300x-8gpu",
    "azure-nd-h100-v5",
    "topoDualSocketHT",
]


def _hardware(topo: NodeTopology) -> tuple[object, ...]:
    return (topo.cpus, topo.numa_nodes, topo.gpus)


@pytest.mark.parametrize("name", PRESETS)
def test_probe_recovers_preset_with_nvml(tmp_path: Path, name: str) -> None:
    preset = load_preset(name)
    machine = write_machine(preset, tmp_path)
    probed = read_node(machine.roots, nvml=recorded_nvml(preset))
    assert _hardware(probed) == _hardware(preset)
    assert probed.name == "fake-node"


@pytest.mark.parametrize("name", ["dgx-h100", "aws-p5.48xlarge", "gb200-nvl72-tray", "l40s-4gpu-1socket"])
def test_probe_without_nvml_keeps_topology(tmp_path: Path, name: str) -> None:
    # Without NVML the NVIDIA model still comes from /proc/driver/nvidia; memory and links do not.
    preset = load_preset(name)
    probed = read_node(write_machine(preset, tmp_path).roots)
    assert (probed.cpus, probed.numa_nodes) == (preset.cpus, preset.numa_nodes)
    expected = tuple(
        dataclasses.replace(g, memory_bytes=None, nvlink_domain=None, memory_numa_node=None) for g in preset.gpus
    )
    assert probed.gpus == expected


def test_probe_amd_without_nvml_reads_amdgpu_sysfs(tmp_path: Path) -> None:
    preset = load_preset("amd-mi300x-8gpu")
    probed = read_node(write_machine(preset, tmp_path).roots)
    assert [(g.model, g.memory_bytes, g.resource_name) for g in probed.gpus] == [
        ("AMD Instinct MI300X", 206158430208, "amd.com/gpu")
    ] * 8


def test_vm_without_numa_information(tmp_path: Path) -> None:
    # A VM: no /sys/devices/system/node, every GPU numa_node -1; one NUMA node 0 from /proc/meminfo.
    preset = load_preset("aws-p5.48xlarge")
    probed = read_node(write_machine(preset, tmp_path, numa=False).roots, nvml=recorded_nvml(preset))
    assert {c.numa for c in probed.cpus} == {0}
    assert [n.id for n in probed.numa_nodes] == [0]
    assert probed.numa_nodes[0].memory_bytes == sum(n.memory_bytes for n in preset.numa_nodes)
    assert all(g.numa_node is None for g in probed.gpus)
    assert all(g.local_cpus == tuple(range(192)) for g in probed.gpus)
    assert any("no NUMA information" in e for e in probed.estimates)
    assert any("numa_node -1" in e for e in probed.estimates)


def test_offline_cpus_are_left_out(tmp_path: Path) -> None:
    preset = load_preset("dgx-h100")
    probed = read_node(write_machine(preset, tmp_path, offline=[3, 115, 223]).roots)
    assert [c.id for c in probed.cpus] == [c.id for c in preset.cpus if c.id not in (3, 115, 223)]
    by_id = probed.cpu_by_id
    assert by_id[111].core == 111  # core 111's sibling 223 is offline: still named by cpu 111
    assert probed.siblings(3 + 112 + 1) == (4, 116)
    assert any("offline CPUs" in s and "3,115,223" in s for s in probed.sources)
    assert 3 not in probed.gpus[0].local_cpus


def test_deprecated_sibling_file_name(tmp_path: Path) -> None:
    preset = load_preset("topoDualSocketHT")
    probed = read_node(write_machine(preset, tmp_path, sibling_file="thread_siblings_list").roots)
    assert probed.cpus == preset.cpus


def test_gb200_memory_only_numa_nodes(tmp_path: Path) -> None:
    preset = load_preset("gb200-nvl72-tray")
    probed = read_node(write_machine(preset, tmp_path).roots, nvml=recorded_nvml(preset))
    assert probed.numa_ids == (0, 1, 2, 10, 18, 26)
    assert probed.cpus_in_numa(2) == ()
    assert [g.memory_numa_node for g in probed.gpus] == [2, 10, 18, 26]
    assert [g.numa_node for g in probed.gpus] == [0, 0, 1, 1]


def test_bad_sysfs_file_is_an_input_error(tmp_path: Path) -> None:
    machine = write_machine(load_preset("topoDualSocketHT"), tmp_path)
    (machine.roots.sys / "devices/system/node/node1/cpulist").write_text("1,3,x\n")
    with pytest.raises(InputError, match="node1/cpulist"):
        read_node(machine.roots)


def test_probe_runs_on_this_machine() -> None:
    if not Path("/sys/devices/system/cpu").is_dir():
        pytest.skip("no /sys on this machine")
    probed = read_node(Roots())
    assert probed.cpus
    again = NodeTopology.from_dict(json.loads(json.dumps(probed.to_dict())))
    assert again == probed
