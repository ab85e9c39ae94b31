"""The in-pod check: aligned containers pass, misaligned ones fail with the reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubegpu.probe.checks import CheckResult, Status, exit_code, run_checks, visible_gpus
from kubegpu.probe.container import read_container
from kubegpu.topology.model import NodeTopology
from kubegpu.topology.presets import load_preset
from kubegpu.topology.sysfs import read_node
from tests.probe.fakefs import FakeMachine, gpu_uuid, recorded_nvml, write_container, write_machine


def _run(
    tmp_path: Path,
    preset: str,
    *,
    numa: bool = True,
    min_shm: int | None = None,
    **container: object,
) -> tuple[dict[str, CheckResult], NodeTopology]:
    topo = load_preset(preset)
    machine: FakeMachine = write_machine(topo, tmp_path, numa=numa)
    env = dict(write_container(machine, topo, **container))  # type: ignore[arg-type]
    env.update({k: str(v) for k, v in container.items() if k.isupper()})
    node = read_node(machine.roots)
    view = read_container(machine.roots, machine.cgroup, env, tmp_path / "no-shm")
    uuids = {g.uuid: g.pci_bus_id for g in recorded_nvml(topo).gpus() if g.uuid}
    results = run_checks(node, view, min_shm, uuids)
    return {r.name: r for r in results}, node


DGX_NUMA0_8 = [0, 1, 2, 3, 112, 113, 114, 115]


@pytest.mark.parametrize("cgroup_version", [1, 2])
def test_aligned_container_passes(tmp_path: Path, cgroup_version: int) -> None:
    checks, _ = _run(
        tmp_path,
        "dgx-h100",
        cpus=DGX_NUMA0_8,
        mems=[0],
        gpus=[0, 1],
        cgroup_version=cgroup_version,
        shm_bytes=8 << 30,
        cpu_quota=8.0,
    )
    assert exit_code(list(checks.values())) == 0, [c.message for c in checks.values()]
    assert "2 GPU(s) visible via /proc/driver/nvidia/gpus" in checks["gpus"].message
    assert checks["cpu-numa-alignment"].message.startswith("all 8 CPUs (0-3,112-115)")
    assert checks["cpu-exclusive"].message == "8 CPUs pinned on 4 whole core(s)"


@pytest.mark.parametrize("cgroup_version", [1, 2])
def test_misaligned_container_fails_with_reason(tmp_path: Path, cgroup_version: int) -> None:
    # GPUs 4 and 5 sit on NUMA node 1, but the CPUs and memory were given on NUMA node 0.
    checks, _ = _run(
        tmp_path,
        "dgx-h100",
        cpus=DGX_NUMA0_8,
        mems=[0],
        gpus=[4, 5],
        cgroup_version=cgroup_version,
        shm_bytes=8 << 30,
    )
    cpu, mem = checks["cpu-numa-alignment"], checks["memory-numa-alignment"]
    assert cpu.status is Status.fail
    assert cpu.message == (
        "GPU 4 (0000:9d:00.0, NUMA 1), GPU 5 (0000:c3:00.0, NUMA 1): "
        "GPUs on NUMA node(s) 1 but all "
        "8 CPUs (0-3,112-115) are on NUMA node(s) 0"
    )
    assert mem.status is Status.fail and "not the GPUs' node(s) 1" in mem.message
    assert exit_code(list(checks.values())) == 2


def test_partly_aligned_and_split_cores_warn(tmp_path: Path) -> None:
    checks, _ = _run(tmp_path, "dgx-h100", cpus=[0, 1, 56, 57], mems=[0, 1], gpus=[0], shm_bytes=1 << 30)
    assert checks["cpu-numa-alignment"].status is Status.warn
    assert "only 2 of 4 CPUs" in checks["cpu-numa-alignment"].message
    assert checks["memory-numa-alignment"].status is Status.warn
    assert checks["cpu-exclusive"].status is Status.warn
    assert "0-1,56-57" in checks["cpu-exclusive"].message and "SMT sibling" in checks["cpu-exclusive"].message


def test_unpinned_container_and_default_shm_warn(tmp_path: Path) -> None:
    checks, _ = _run(tmp_path, "l40s-4gpu-1socket", cpus=range(64), mems=[0], gpus=[2], cpu_quota=4.0)
    assert checks["cpu-numa-alignment"].status is Status.passed  # one NUMA node: trivially aligned
    assert checks["cpu-exclusive"].status is Status.warn and "all 64 CPUs" in checks["cpu-exclusive"].message
    assert checks["cpu-quota"].status is Status.warn and "limit of 4" in checks["cpu-quota"].message
    assert checks["shm"].status is Status.warn and "64 MiB" in checks["shm"].message


def test_min_shm(tmp_path: Path) -> None:
    checks, _ = _run(
        tmp_path,
        "l40s-4gpu-1socket",
        cpus=[0, 32],
        mems=[0],
        gpus=[0],
        shm_bytes=512 << 20,
        min_shm=2 << 30,
    )
    assert checks["shm"].status is Status.fail
    assert "512 MiB, less than the 2 GiB" in checks["shm"].message


def test_vm_gpus_without_numa_warn(tmp_path: Path) -> None:
    checks, _ = _run(tmp_path, "aws-p5.48xlarge", numa=False, cpus=[0, 96], mems=[0], gpus=[0], shm_bytes=1 << 30)
    assert checks["cpu-numa-alignment"].status is Status.warn
    assert "numa_node -1" in checks["cpu-numa-alignment"].message


def test_env_var_uuids_and_cuda_visible_devices(tmp_path: Path) -> None:
    # CDI-style injection: no /proc/driver/nvidia entries, NVIDIA_VISIBLE_DEVICES lists UUIDs;
    # CUDA_VISIBLE_DEVICES=1 then picks the second of them; an invalid entry ends the list.
    topo = load_preset("dgx-h100")
    machine = write_machine(topo, tmp_path)
    env = dict(write_container(machine, topo, cpus=range(56, 64), mems=[1], gpus=[4, 6], env_devices=True))
    assert env["NVIDIA_VISIBLE_DEVICES"] == f"{gpu_uuid(4)},{gpu_uuid(6)}"
    node = read_node(machine.roots)
    uuids = {g.uuid: g.pci_bus_id for g in recorded_nvml(topo).gpus() if g.uuid}
    env["CUDA_VISIBLE_DEVICES"] = "1,7,0"
    view = read_container(machine.roots, machine.cgroup, env)
    gpus, how = visible_gpus(node, view, uuids)
    assert [g.index for g in gpus] == [6]
    assert "CUDA_VISIBLE_DEVICES=1,7,0" in how
    env["NVIDIA_VISIBLE_DEVICES"] = "all"
    del env["CUDA_VISIBLE_DEVICES"]
    gpus, _ = visible_gpus(node, read_container(machine.roots, machine.cgroup, env), uuids)
    assert len(gpus) == 8


def test_gb200_gpu_memory_nodes_are_not_host_memory(tmp_path: Path) -> None:
    # mems 0 and 2: Grace 0's memory and GPU 0's own HBM node; HBM is not judged as host memory.
    topo = load_preset("gb200-nvl72-tray")
    machine = write_machine(topo, tmp_path)
    write_container(machine, topo, cpus=range(0, 16), mems=[0, 2], gpus=[0], shm_bytes=1 << 30)
    node = read_node(machine.roots, nvml=recorded_nvml(topo))
    view = read_container(machine.roots, machine.cgroup, {})
    checks = {r.name: r for r in run_checks(node, view)}
    assert checks["memory-numa-alignment"].status is Status.passed
    assert checks["cpu-numa-alignment"].status is Status.passed
    assert checks["cpu-exclusive"].status is Status.passed


def test_amd_gpus_from_render_nodes(tmp_path: Path) -> None:
    # MI300X: GPUs 5 and 6 (NUMA 1) granted as /dev/dri render nodes; CPUs on NUMA 1 pass, and
    # ROCR_VISIBLE_DEVICES=1 narrows to the second of them.
    topo = load_preset("amd-mi300x-8gpu")
    machine = write_machine(topo, tmp_path)
    cpus = [96, 97, 288, 289]
    write_container(machine, topo, cpus=cpus, mems=[1], gpus=[5, 6], shm_bytes=1 << 30)
    node = read_node(machine.roots)
    view = read_container(machine.roots, machine.cgroup, {}, dev_root=tmp_path / "dev")
    assert [g.index for g in visible_gpus(node, view)[0]] == [5, 6]
    checks = {r.name: r for r in run_checks(node, view)}
    assert exit_code(list(checks.values())) == 0, [c.message for c in checks.values()]
    assert "AMD via /dev/dri render nodes" in checks["gpus"].message
    env = {"ROCR_VISIBLE_DEVICES": "1"}
    view = read_container(machine.roots, machine.cgroup, env, dev_root=tmp_path / "dev")
    assert [g.index for g in visible_gpus(node, view)[0]] == [6]
    write_container(machine, topo, cpus=[0, 1, 192, 193], mems=[0], gpus=[5], shm_bytes=1 << 30)
    view = read_container(machine.roots, machine.cgroup, {}, dev_root=tmp_path / "dev")
    failed = {r.name: r for r in run_checks(read_node(machine.roots), view)}
    assert failed["cpu-numa-alignment"].status is Status.fail
