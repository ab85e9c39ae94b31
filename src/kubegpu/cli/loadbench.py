"""`kubegpu loadbench`: how fast this machine loads safetensors weights, per loader and thread count."""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from kubegpu.cli.common import fail, positive_ints
from kubegpu.errors import InputError, KubegpuError
from kubegpu.units.size import size_bytes


class Format(StrEnum):
    text = "text"
    json = "json"


@contextmanager
def _progress(enabled: bool, total: int) -> Iterator[Callable[[str, int], None] | None]:
    if not enabled:
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (TextColumn("{task.description:<34}"), BarColumn(), DownloadColumn(), TimeElapsedColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("loadbench", total=total)

        def advance(label: str, done: int) -> None:
            bar.update(task, advance=done, description=label)

        yield advance


def loadbench(
    paths: Annotated[list[Path] | None, typer.Argument(help="Model folders or .safetensors files to load.")] = None,
    synthetic: Annotated[
        str | None,
        typer.Option(help="Write a synthetic model of this size (e.g. 1Gi, 20G) as safetensors shards and load it."),
    ] = None,
    directory: Annotated[
        Path | None,
        typer.Option(
            "--dir",
            help="With --synthetic: where to write the shards (default: a temporary folder under /var/tmp, "
            "removed afterwards). Put it on the storage you want to measure.",
        ),
    ] = None,
    shard_size: Annotated[str, typer.Option(help="With --synthetic: largest shard.")] = "5G",
    keep: Annotated[bool, typer.Option(help="With --synthetic: keep the shards.")] = False,
    threads: Annotated[str, typer.Option(help="Thread counts to try, comma-separated.")] = "1,4,16",
    methods: Annotated[
        str | None,
        typer.Option(
            help="Loaders to run, comma-separated: read, mmap, safetensors, runai-model-streamer, fastsafetensors "
            "(default: every installed one)."
        ),
    ] = None,
    repeats: Annotated[int, typer.Option(min=1, help="Runs per measurement; the median is reported.")] = 1,
    warm: Annotated[bool, typer.Option("--warm/--no-warm", help="Also measure with the files cached.")] = True,
    budget_seconds: Annotated[
        float | None,
        typer.Option(
            min=1.0, help="Stop measuring after about this long (slow storage): runs past it are cut or skipped."
        ),
    ] = None,
    direct_threads: Annotated[int, typer.Option(min=1, help="Threads of the storage-limit read.")] = 16,
    gpu: Annotated[
        bool, typer.Option("--gpu/--no-gpu", help="Measure host-to-device copies when torch has CUDA.")
    ] = True,
    output: Annotated[Format, typer.Option("--output", "-o", help="text or json.")] = Format.text,
    plot: Annotated[Path | None, typer.Option(help="Also draw the rates to this image (PNG, SVG, PDF).")] = None,
    progress: Annotated[
        bool | None,
        typer.Option("--progress/--no-progress", help="Progress bar on stderr (default: when stderr is a terminal)."),
    ] = None,
) -> None:
    """Measure weight loading on this machine: the storage limit (parallel direct reads, what fio reports) and
    each loader over thread counts on a cold and a warm page cache, as GB/s and as a share of the limit."""
    from kubegpu.loadbench.loaders import all_loaders
    from kubegpu.loadbench.render import plot as draw
    from kubegpu.loadbench.render import render_text
    from kubegpu.loadbench.run import Options, bench, plan
    from kubegpu.loadbench.shards import find_shards, write_synthetic

    created: Path | None = None
    try:
        if bool(paths) == (synthetic is not None):
            raise InputError("give either model folders or files to load, or --synthetic SIZE")
        known = {loader.name for loader in all_loaders()}
        chosen = None
        if methods is not None:
            chosen = tuple(m.strip() for m in methods.split(",") if m.strip())
            unknown = [m for m in chosen if m not in known]
            if unknown or not chosen:
                raise InputError(
                    f"--methods: unknown loader {', '.join(unknown) or methods!r}; known: {', '.join(sorted(known))}"
                )
        options = Options(
            threads=positive_ints(threads, "--threads"),
            methods=chosen,
            repeats=repeats,
            warm=warm,
            budget_seconds=budget_seconds,
            direct_threads=direct_threads,
            gpu=gpu,
        )
        show = sys.stderr.isatty() if progress is None else progress
        if synthetic is not None:
            size = size_bytes(synthetic, "--synthetic")
            if directory is None:
                created = Path(tempfile.mkdtemp(prefix="kubegpu-loadbench-", dir=_scratch_root()))
                folder = created
            else:
                folder = directory
                if folder.exists() and any(folder.glob("*.safetensors")):
                    raise InputError(
                        "the folder already holds .safetensors files: give an empty or new folder", file=str(folder)
                    )
            with _progress(show, size) as tick:
                write_synthetic(
                    folder,
                    size,
                    size_bytes(shard_size, "--shard-size"),
                    None if tick is None else (lambda n: tick("writing shards", n)),
                )
            shards = find_shards([folder])
        else:
            shards = find_shards(paths or [])
        work, _ = plan(all_loaders(), shards, options)
        tensor_bytes = sum(s.tensor_bytes for s in shards)
        total = (sum(s.size for s in shards) + tensor_bytes * len(work)) * options.repeats
        with _progress(show, total) as tick:
            result = bench(shards, options, tick)
        if plot is not None:
            draw(result, plot)
    except KubegpuError as err:
        raise fail(err) from err
    except OSError as err:
        raise fail(
            InputError(
                f"cannot read or write: {err.strerror or err}",
                file=err.filename if isinstance(err.filename, str) else None,
            )
        ) from err
    finally:
        if created is not None and not keep:
            shutil.rmtree(created, ignore_errors=True)
    if output is Format.json:
        typer.echo(json.dumps(result.as_dict(), indent=2))
    else:
        typer.echo(render_text(result))
        if created is not None and keep:
            typer.echo(f"shards kept in {created}")


def _scratch_root() -> str:
    """A disk-backed temporary folder: /var/tmp survives reboots and is rarely tmpfs, unlike /tmp."""
    root = os.environ.get("KUBEGPU_SCRATCH") or "/var/tmp"
    return root if os.path.isdir(root) else tempfile.gettempdir()


def gen_loadbench_job(
    pvc: Annotated[str | None, typer.Option(help="The model cache's PersistentVolumeClaim.")] = None,
    host_path: Annotated[str | None, typer.Option(help="The model cache's folder on the node.")] = None,
    node: Annotated[str | None, typer.Option(help="The node to measure (its kubernetes.io/hostname).")] = None,
    node_selector: Annotated[
        list[str] | None, typer.Option(help="KEY=VALUE node label to pin by instead of or beside --node (repeatable).")
    ] = None,
    model_path: Annotated[str, typer.Option(help="One model's folder below the mount (default: all of it).")] = "",
    mount_path: Annotated[str, typer.Option(help="Where the cache is mounted in the pod.")] = "/models",
    image: Annotated[
        str | None, typer.Option(help="An image with kubegpu installed (default: the release image).")
    ] = None,
    namespace: Annotated[str, typer.Option(help="Namespace of the Job.")] = "default",
    name: Annotated[str, typer.Option(help="Name of the Job.")] = "kubegpu-loadbench",
    threads: Annotated[str, typer.Option(help="Thread counts to try, comma-separated.")] = "1,4,16",
    budget_seconds: Annotated[int, typer.Option(help="loadbench's time budget.")] = 600,
    cpus: Annotated[str, typer.Option(help="CPU request = limit.")] = "8",
    memory: Annotated[str, typer.Option(help="Memory request = limit.")] = "16Gi",
    gpus: Annotated[int, typer.Option(help="GPUs to request, for the host-to-device stage.")] = 0,
    gpu_resource: Annotated[str, typer.Option(help="GPU resource name.")] = "nvidia.com/gpu",
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write here instead of stdout.")] = None,
    validate: Annotated[
        bool, typer.Option("--validate", help="Check the Job against the Kubernetes schema first.")
    ] = False,
) -> None:
    """A Job that runs `kubegpu loadbench` on one node against its model cache (PVC or hostPath, read-only)
    and prints the JSON to its log."""
    from kubegpu import DEFAULT_IMAGE
    from kubegpu.cli.gen import _emit, _run
    from kubegpu.generate.loadbench_job import LoadbenchJobOptions, generate

    pairs: list[tuple[str, str]] = []
    for item in node_selector or []:
        key, eq, value = item.partition("=")
        if not eq:
            raise fail(InputError(f"--node-selector must be KEY=VALUE, not {item!r}"))
        pairs.append((key, value))
    options = LoadbenchJobOptions(
        pvc=pvc,
        host_path=host_path,
        node=node,
        node_selector=tuple(pairs),
        model_path=model_path,
        mount_path=mount_path,
        image=image or DEFAULT_IMAGE,
        namespace=namespace,
        name=name,
        threads=threads,
        budget_seconds=budget_seconds,
        cpus=cpus,
        memory=memory,
        gpus=gpus,
        gpu_resource=gpu_resource,
    )
    _emit(_run(lambda: generate(options)), output, validate)


def register(app: typer.Typer, gen_app: typer.Typer) -> None:
    """Add `kubegpu loadbench` and `kubegpu gen loadbench-job`."""
    app.command("loadbench")(loadbench)
    gen_app.command("loadbench-job")(gen_loadbench_job)
