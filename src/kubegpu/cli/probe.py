"""`kubegpu probe` (this machine's node profile, or `--check` from inside a pod) and
`kubegpu gen probe-daemonset` / `gen probe-job`; parsing and printing only."""

from __future__ import annotations

import json
import os
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
import yaml

from kubegpu import DEFAULT_IMAGE
from kubegpu.cli.common import fail, run_app
from kubegpu.errors import KubegpuError
from kubegpu.probe.checks import Status, exit_code, run_checks, visible_gpus
from kubegpu.probe.container import read_container
from kubegpu.probe.manifests import probe_daemonset, probe_job
from kubegpu.probe.snapshot import load_recorded, snapshot
from kubegpu.topology.nvml import NvmlSource, load_nvml
from kubegpu.topology.summary import render_text
from kubegpu.topology.sysfs import Roots, read_node
from kubegpu.units.size import size_bytes


class Format(StrEnum):
    text = "text"
    json = "json"
    yaml = "yaml"


_MARK = {Status.passed: "PASS", Status.warn: "WARN", Status.fail: "FAIL"}


def probe(
    output: Annotated[Format, typer.Option("--output", "-o", help="json, yaml or text.")] = Format.text,
    sysfs_root: Annotated[Path, typer.Option(help="Where sysfs is mounted.")] = Path("/sys"),
    procfs_root: Annotated[Path, typer.Option(help="Where procfs is mounted.")] = Path("/proc"),
    name: Annotated[str | None, typer.Option(help="Node name for the profile (default: hostname).")] = None,
    nvml: Annotated[bool, typer.Option("--nvml/--no-nvml", help="Use NVML if pynvml is installed.")] = True,
    check: Annotated[bool, typer.Option("--check", help="Check this container's alignment instead.")] = False,
    min_shm: Annotated[str | None, typer.Option(help="With --check: smallest acceptable /dev/shm, e.g. 2Gi.")] = None,
    cgroup_root: Annotated[Path, typer.Option(help="With --check: where the cgroup fs is mounted.")] = Path(
        "/sys/fs/cgroup"
    ),
    shm_path: Annotated[Path, typer.Option(help="With --check: the shared-memory mount.")] = Path("/dev/shm"),
    dev_root: Annotated[
        Path, typer.Option(help="With --check: where the container's /dev is (DRM render nodes).")
    ] = Path("/dev"),
    snapshot_dir: Annotated[
        Path | None, typer.Option("--snapshot", help="Also copy every file read into this folder.")
    ] = None,
    replay: Annotated[Path | None, typer.Option(help="Probe a folder written by --snapshot, not this machine.")] = None,
) -> None:
    """Print this machine's node profile (CPUs, NUMA, memory, GPUs), or with --check judge whether
    this container's CPUs, memory and /dev/shm suit its GPUs (exit 0 pass, 1 warn, 2 fail)."""
    try:
        env: dict[str, str] = dict(os.environ)
        source: NvmlSource | None
        if replay is not None:
            sysfs_root, procfs_root, cgroup_root = (
                replay / "sys",
                replay / "proc",
                replay / "cgroup",
            )
            shm_path = replay / "shm"  # only the recorded mount line counts, not this machine's
            dev_root = replay / "dev"
            source, env = load_recorded(replay)
            note = f"replayed from {replay}" + ("" if source else " (NVML not recorded)")
        elif nvml:
            source, note = load_nvml()
        else:
            source, note = None, "NVML not used (--no-nvml)"
        roots = Roots(sys=sysfs_root, proc=procfs_root)
        if snapshot_dir is not None:
            snapshot(roots, cgroup_root, snapshot_dir, env, source, dev_root)
        node = read_node(roots, nvml=source, name=name, notes=(note,))
        if not check:
            _print_profile(node.to_dict(), output, render_text(node))
            raise typer.Exit(0)
        min_bytes = None if min_shm is None else size_bytes(min_shm, "--min-shm")
        view = read_container(roots, cgroup_root, env, shm_path, dev_root)
        uuids = _uuids(source)
        results = run_checks(node, view, min_bytes, uuids)
    except KubegpuError as err:
        raise fail(err) from err
    except OSError as err:  # an unreadable or damaged sysfs, procfs or cgroup tree
        raise fail(f"cannot read {err.filename or 'the system tree'}: {err.strerror or err}") from err
    code = exit_code(results)
    gpus, how = visible_gpus(node, view, uuids)
    if output is Format.text:
        for r in results:
            typer.echo(f"{_MARK[r.status]}  {r.name}: {r.message}")
    else:
        report: dict[str, Any] = {
            "status": ("pass", "warn", "fail")[code],
            "checks": [r.as_dict() for r in results],
            "container": {
                "cpus": view.cpus,
                "mems": view.mems,
                "cgroup_version": view.cgroup.version,
                "cpu_quota": view.cgroup.cpu_quota,
                "memory_limit": view.cgroup.memory_limit,
                "gpus": [g.pci_bus_id for g in gpus],
                "gpus_from": how,
                "shm_bytes": view.shm_bytes,
                "shm_from": view.shm_source,
            },
            "node": node.to_dict(),
        }
        _print_profile(report, output, "")
    raise typer.Exit(code)


def _uuids(source: NvmlSource | None) -> dict[str, str]:
    return {g.uuid: g.pci_bus_id for g in (source.gpus() if source else ()) if g.uuid}


def _print_profile(data: dict[str, Any], output: Format, text: str) -> None:
    if output is Format.json:
        typer.echo(json.dumps(data, indent=2))
    elif output is Format.yaml:
        typer.echo(yaml.safe_dump(data, sort_keys=False), nl=False)
    else:
        typer.echo(text)


IMAGE_HELP = "An image with kubegpu installed (`kubegpu` on PATH); default: this version's release image."


def gen_probe_daemonset(
    image: Annotated[str, typer.Option(help=IMAGE_HELP)] = DEFAULT_IMAGE,
    namespace: Annotated[str, typer.Option(help="Namespace of the DaemonSet.")] = "kubegpu",
) -> None:
    """A DaemonSet that prints every GPU node's profile; collect it with kubectl logs."""
    try:
        manifest = probe_daemonset(image, namespace)
    except KubegpuError as err:
        raise fail(err) from err
    typer.echo(yaml.safe_dump(manifest, sort_keys=False), nl=False)


def gen_probe_job(
    image: Annotated[str, typer.Option(help=IMAGE_HELP)] = DEFAULT_IMAGE,
    namespace: Annotated[str, typer.Option(help="Namespace of the Job.")] = "kubegpu",
    gpus: Annotated[int, typer.Option(help="GPUs to request.")] = 1,
    cpus: Annotated[str, typer.Option(help="CPUs (integer for pinning under the static CPU manager).")] = "4",
    memory: Annotated[str, typer.Option(help="Memory request = limit.")] = "16Gi",
    shm: Annotated[str, typer.Option(help="Size of the in-memory /dev/shm, also the check's minimum.")] = "1Gi",
    resource: Annotated[str, typer.Option(help="GPU resource name.")] = "nvidia.com/gpu",
) -> None:
    """A Job that runs `kubegpu probe --check` in a Guaranteed GPU pod."""
    try:
        manifest = probe_job(image, namespace, gpus, cpus, memory, shm, resource)
    except KubegpuError as err:
        raise fail(err) from err
    typer.echo(yaml.safe_dump(manifest, sort_keys=False), nl=False)


def register(app: typer.Typer, gen_app: typer.Typer) -> None:
    """Add `kubegpu probe`, `kubegpu gen probe-daemonset` and `kubegpu gen probe-job`."""
    app.command("probe")(probe)
    gen_app.command("probe-daemonset")(gen_probe_daemonset)
    gen_app.command("probe-job")(gen_probe_job)


def main() -> None:
    """`python -m kubegpu.cli.probe [...]`: the probe alone, whatever other commands need."""
    standalone = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
    standalone.command()(probe)
    run_app(standalone, "kubegpu probe")


if __name__ == "__main__":
    main()
