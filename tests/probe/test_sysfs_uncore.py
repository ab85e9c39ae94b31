"""The probe reads each CPU's L3 (uncore) cache id the way cAdvisor does (cpuN/cache/indexM/id, level > 2)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from kubegpu.topology.model import NodeTopology
from kubegpu.topology.presets import load_node
from kubegpu.topology.sysfs import Roots, read_node, uncore_cache_id
from tests.probe.fakefs import write_machine


def _with_ccds(topo: NodeTopology, cores_per_ccd: int) -> NodeTopology:
    """The preset with one L3 group per `cores_per_ccd` physical cores of a socket (AMD CCD style)."""
    ranks: dict[int, int] = {}
    for socket in sorted({c.socket for c in topo.cpus}):
        cores = sorted({c.core for c in topo.cpus if c.socket == socket})
        base = len(set(ranks.values()))
        ranks.update({core: base + i // cores_per_ccd for i, core in enumerate(cores)})
    cpus = tuple(dataclasses.replace(c, uncore_cache=ranks[c.core]) for c in topo.cpus)
    return dataclasses.replace(topo, cpus=cpus)


def _write_caches(root: Path, topo: NodeTopology) -> None:
    """L1d/L1i/L2 per core (ids = core) and an L3 whose id is the CPU's uncore_cache, as Linux lays them out."""
    for cpu in topo.cpus:
        base = root / f"sys/devices/system/cpu/cpu{cpu.id}/cache"
        for index, (level, cache_id) in enumerate([(1, cpu.core), (1, cpu.core), (2, cpu.core), (3, cpu.uncore_cache)]):
            folder = base / f"index{index}"
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "level").write_text(f"{level}\n", encoding="utf-8")
            (folder / "id").write_text(f"{cache_id}\n", encoding="utf-8")


def test_probe_reads_l3_ids(tmp_path: Path) -> None:
    topo = _with_ccds(load_node("amd-mi300x-8gpu"), cores_per_ccd=8)
    assert len({c.uncore_cache for c in topo.cpus}) > 2
    machine = write_machine(topo, tmp_path)
    _write_caches(tmp_path, topo)
    probed = read_node(machine.roots)
    assert probed.cpus == topo.cpus
    # and the profile keeps them through its JSON form
    assert NodeTopology.from_dict(probed.to_dict()).cpus == topo.cpus


def test_no_cache_above_level_2_means_0(tmp_path: Path) -> None:
    folder = tmp_path / "sys/devices/system/cpu/cpu0/cache/index2"
    folder.mkdir(parents=True)
    (folder / "level").write_text("2\n", encoding="utf-8")
    (folder / "id").write_text("7\n", encoding="utf-8")
    roots = Roots(sys=tmp_path / "sys", proc=tmp_path / "proc")
    assert uncore_cache_id(roots, 0) == 0
    assert uncore_cache_id(roots, 1) == 0  # no cache folder at all
