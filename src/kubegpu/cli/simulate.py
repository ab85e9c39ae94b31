"""`kubegpu simulate` (replay a trace or jobs through the scheduler model) and `kubegpu simulate
fgd-repro` (the FGD paper's experiment beside the published numbers): argument parsing only."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from kubegpu.cli.common import fail, positive_ints
from kubegpu.errors import InputError, KubegpuError
from kubegpu.report.simulation import Format, published_runs_note, summaries_text
from kubegpu.scheduler.gpu.registry import PROFILES, parse_policies
from kubegpu.scheduler.gpu.state import GpuPod, NodeSpec
from kubegpu.scheduler.tas import Algorithm
from kubegpu.sim.experiment import RunResult, run_matrix, summarize
from kubegpu.sim.outputs import plot_allocation, plot_timeline, summaries_markdown
from kubegpu.sim.published import read_published
from kubegpu.sim.traces.files import is_csv
from kubegpu.sim.traces.openb import (
    ENV_VAR,
    default_openb_dir,
    node_list,
    published_file,
    read_nodes,
    read_pods,
    variant_files,
    workload_name,
)
from kubegpu.topology.model import NodeTopology
from kubegpu.workloads import simulated_kinds

if TYPE_CHECKING:  # the simulator is imported when a run needs it
    from kubegpu.sim.bound import BoundSummary
    from kubegpu.sim.events import EventsPlan, SyntheticJobs


BoundOption = Annotated[
    bool,
    typer.Option(
        "--bound",
        help="Also compute the packing bound and print it beside every policy: static mode, the most GPU "
        "any placement of the same arrivals could allocate, and the most a greedy scheduler (one that places "
        "every pod that fits when it arrives, as kube-scheduler does) could; --snapshot, the most pending "
        "GPUs any repacking of the running pods could place.",
    ),
]


class Mode(StrEnum):
    static = "static"
    events = "events"


def parse_seeds(text: str) -> tuple[int, ...]:
    """`42-51`, `42,43,50` or `42` -> seeds; InputError for anything else."""
    seeds: list[int] = []
    try:
        for part in text.split(","):
            part = part.strip()
            if "-" in part[1:]:
                lo, hi = part.split("-", 1)
                if int(hi) < int(lo):
                    raise ValueError
                seeds.extend(range(int(lo), int(hi) + 1))
            elif part:
                seeds.append(int(part))
    except ValueError:
        raise InputError(f"--seeds: {text!r} is not a seed list (e.g. 42-51 or 42,43)") from None
    if not seeds or len(seeds) > 1000:
        raise InputError(f"--seeds: {text!r} gives no seeds (or more than 1000)")
    return tuple(seeds)


def _console() -> Console:
    """stdout console; wide enough for the tables when not a terminal."""
    return Console() if sys.stdout.isatty() else Console(width=160)


@contextmanager
def _progress(total: int, label: str) -> Iterator[Callable[[], None]]:
    """A rich progress bar on a TTY (stderr); a no-op otherwise."""
    if not sys.stderr.isatty() or total <= 1:
        yield lambda: None
        return
    console = Console(stderr=True)
    with Progress(
        TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=console, transient=True
    ) as bar:
        task = bar.add_task(label, total=total)
        yield lambda: bar.advance(task)


def _print(out: str | Table) -> None:
    """A rendered result: text as it is (one final newline), a table on the console."""
    if isinstance(out, str):
        typer.echo(out, nl=not out.endswith("\n"))
    else:
        _console().print(out)


def _write_report(report: Path, text: str) -> None:
    try:
        report.write_text(text, encoding="utf-8")
    except OSError as err:
        raise InputError(f"cannot write the report: {err.strerror}", file=str(report)) from None


def _static(
    nodes: Sequence[NodeSpec],
    traces: Mapping[str, Sequence[GpuPod]],
    policies: Sequence[str],
    seeds: Sequence[int],
    arrival: float,
    workers: int,
    tie_break: str,
    data: Path | None,
    fmt: Format,
    plot: Path | None,
    report: Path | None,
    title: str,
    bound: bool = False,
) -> None:
    total = len(traces) * len(policies) * len(seeds)
    with _progress(total, "simulating") as tick:
        results: list[RunResult] = run_matrix(
            nodes, traces, policies, seeds, arrival, workers, tie_break, on_done=lambda _r: tick()
        )
    bounds: dict[str, BoundSummary] | None = None
    if bound:
        from kubegpu.sim.bound import bound_curves, summarize_bounds  # HiGHS only when the bound is asked for

        with _progress(len(traces) * len(seeds), "bounding") as tick:
            bounds = summarize_bounds(bound_curves(nodes, traces, seeds, arrival, on_done=lambda _c: tick()))
    published = None
    source = None if data is None else published_file(data)
    if source is not None and round(arrival * 100) <= 130:
        published = read_published(source)
    summaries = summarize(results, published)
    _print(summaries_text(summaries, fmt, title, bounds))
    note = published_runs_note(summaries) if fmt is Format.text else None
    if note is not None:
        _print(note)
    if plot is not None:
        for workload in traces:
            target = plot if len(traces) == 1 else plot.with_name(f"{plot.stem}-{workload}{plot.suffix}")
            summary = None if bounds is None else bounds[workload]
            plot_allocation(
                [r for r in results if r.workload == workload],
                target,
                f"{title}: {workload}",
                None if summary is None else summary.curve,
                None if summary is None else summary.greedy_curve,
            )
    if report is not None:
        _write_report(report, summaries_markdown(summaries, title, bounds))


def _load_nodes(path: Path) -> tuple[list[NodeSpec], list[NodeTopology | None] | None, tuple[str, ...] | None]:
    if is_csv(path):
        return read_nodes(path), None, None
    from kubegpu.sim.cluster_spec import load_cluster_spec

    spec = load_cluster_spec(path)
    return list(spec.nodes), list(spec.profiles), spec.levels


def simulate_main(
    ctx: typer.Context,
    nodes: Annotated[
        Path | None,
        typer.Option(
            "--nodes", help="openb node CSV, or a YAML cluster spec (presets × counts over blocks and racks)."
        ),
    ] = None,
    pods: Annotated[
        list[Path] | None,
        typer.Option(
            "--pods", help=f"openb pod CSV, or YAML files with {' / '.join(simulated_kinds())} (kubegpu.io/duration)."
        ),
    ] = None,
    synthetic: Annotated[int, typer.Option(help="Generate this many synthetic jobs instead of --pods.")] = 0,
    rate: Annotated[float, typer.Option(help="Synthetic arrival rate, jobs per hour.")] = 60.0,
    gang_sizes: Annotated[str, typer.Option(help="Synthetic gang sizes to draw from.")] = "1,1,2,4,8",
    gpus_per_pod: Annotated[str, typer.Option(help="Synthetic GPUs per pod to draw from.")] = "1,2,4,8",
    duration: Annotated[float, typer.Option(help="Synthetic mean job duration, hours.")] = 1.0,
    policy: Annotated[str, typer.Option("--policy", help=f"Comma list of {', '.join(PROFILES)}, or all.")] = "",
    arrival: Annotated[float, typer.Option(help="Static mode: inflate arrivals to this × GPU capacity.")] = 1.3,
    seeds: Annotated[str, typer.Option(help="Seeds: 42-51 or 42,43.")] = "42",
    mode: Annotated[
        Mode | None,
        typer.Option(
            help="static: the FGD method (shuffle, inflate, pods never "
            "leave); events: arrivals and completions over time."
        ),
    ] = None,
    gang: Annotated[str, typer.Option(help="all-or-nothing, pod-by-pod or both (events mode).")] = "all-or-nothing",
    tas_algorithm: Annotated[Algorithm | None, typer.Option(help="Force Kueue's domain ordering.")] = None,
    tie_break: Annotated[
        str, typer.Option(help="random (kube-scheduler) or lowest-name (the FGD artifact's fork); default per mode.")
    ] = "",
    kubelet_config: Annotated[
        Path | None,
        typer.Option(help="KubeletConfiguration for kubelet admission on nodes with presets (events mode)."),
    ] = None,
    workers: Annotated[int, typer.Option(help="Worker processes for static runs.")] = 1,
    fmt: Annotated[Format, typer.Option("--format", "-o", help="Output format.")] = Format.text,
    plot: Annotated[Path | None, typer.Option(help="Write a PNG plot here.")] = None,
    report: Annotated[Path | None, typer.Option(help="Write a markdown report here.")] = None,
    bound: BoundOption = False,
    snapshot: Annotated[
        list[Path] | None,
        typer.Option(
            "--snapshot",
            help="Start from a live cluster: `kubectl get nodes,pods -A -o json` dumps (as for "
            "`kubegpu audit --snapshot`); running pods stay, pending GPU pods are placed by each policy.",
        ),
    ] = None,
) -> None:
    """Replay a trace or jobs through the scheduler model; `simulate fgd-repro` runs the FGD paper."""
    if ctx.invoked_subcommand is not None:
        return
    try:
        if snapshot:
            _whatif(
                snapshot,
                parse_policies(policy or "k8s-default,most-allocated,fgd,ours"),
                parse_seeds(seeds),
                tie_break or "random",
                fmt,
                bound,
            )
            return
        if nodes is None:
            raise InputError("--nodes is required (an openb node CSV or a YAML cluster spec)")
        seed_list = parse_seeds(seeds)
        node_list, profiles, levels = _load_nodes(nodes)
        csv_pods = bool(pods) and all(is_csv(p) for p in pods or [])
        chosen = mode or (Mode.static if csv_pods and not synthetic else Mode.events)
        if chosen is Mode.static:
            if not csv_pods:
                raise InputError("static mode replays openb pod CSVs (--pods FILE.csv)")
            policies = parse_policies(policy or "fgd")
            traces = {workload_name(p): read_pods(p) for p in pods or []}
            _static(
                node_list,
                traces,
                policies,
                seed_list,
                arrival,
                workers,
                tie_break or "lowest-name",
                nodes.parent,
                fmt,
                plot,
                report,
                "kubegpu simulate",
                bound,
            )
            return
        if bound:
            raise InputError("--bound needs static mode (openb pod CSVs) or --snapshot")
        from kubegpu.sim.events import SyntheticJobs

        jobs = (
            SyntheticJobs(
                synthetic,
                rate,
                positive_ints(gang_sizes, "--gang-sizes"),
                positive_ints(gpus_per_pod, "--gpus-per-pod"),
                duration,
            )
            if synthetic
            else None
        )
        plan = _events_plan(
            node_list,
            profiles,
            levels,
            pods or [],
            jobs,
            parse_policies(policy or "k8s-default"),
            seed_list,
            gang,
            tas_algorithm,
            tie_break or "random",
            kubelet_config,
        )
        _events(plan, fmt, plot, report)
    except KubegpuError as err:
        raise fail(err) from None


def _whatif(
    paths: Sequence[Path], policies: Sequence[str], seeds: Sequence[int], tie_break: str, fmt: Format, bound: bool
) -> None:
    """Place a snapshot's pending GPU pods on its running cluster under each policy and seed; with `bound`,
    beside the most pending GPUs any repacking of the running pods could place."""
    from kubegpu.live.simstart import simulation_start
    from kubegpu.live.snapshot import load_snapshot
    from kubegpu.report.simulation import whatif_text, whatif_unplaced_lines
    from kubegpu.sim.whatif import place_pending

    snap = load_snapshot(list(paths))
    start = simulation_start(snap)
    running = [placement.pod for placement in start.placed]
    results = [
        place_pending(start.cluster(), running, start.pending, name, seed, tie_break)
        for name in policies
        for seed in seeds
    ]
    repack = None
    if bound:
        from kubegpu.live.bound import repack_bound  # HiGHS only when the bound is asked for

        repack = repack_bound(snap)
    _print(whatif_text(results, fmt, repack))
    if fmt is not Format.text:
        return
    for line in whatif_unplaced_lines(results):
        _console().print(line, markup=False, highlight=False)
    for note in start.left_out:
        _console().print(f"[dim]left out: {note}[/dim]")


def _events(plan: EventsPlan, fmt: Format, plot: Path | None, report: Path | None) -> None:
    from kubegpu.report.simulation import events_report, events_text
    from kubegpu.sim.events import run_events, series

    with _progress(len(plan.configs()), "simulating") as tick:
        runs = run_events(plan, on_done=tick)
    _print(events_text(runs, fmt))
    if plot is not None:
        plot_timeline(series(runs), plot, "GPU allocation (%)", "GPU allocation over time")
    if report is not None:
        _write_report(report, events_report(runs))


def _fragment_notices(pods: Sequence[Path]) -> None:
    """Name each partial object (a patch fragment) the manifests hold and count them: they are not simulated, as
    lint counts them and does not lint them (kubegpu.workloads.partial)."""
    from kubegpu.sim.workload import read_job_manifests

    _, fragments = read_job_manifests(pods)
    for fragment in fragments:
        typer.echo(
            f"kubegpu: notice: {fragment.file}:{fragment.line}: {fragment.what}: a patch fragment, not simulated",
            err=True,
        )
    if fragments:
        count = len(fragments)
        typer.echo(f"kubegpu: notice: {count} partial object{'s' if count != 1 else ''} skipped", err=True)


def _events_plan(
    nodes: Sequence[NodeSpec],
    profiles: Sequence[NodeTopology | None] | None,
    levels: Sequence[str] | None,
    pods: Sequence[Path],
    synthetic: SyntheticJobs | None,
    policies: Sequence[str],
    seeds: Sequence[int],
    gang: str,
    tas_algorithm: Algorithm | None,
    tie_break: str,
    kubelet_config: Path | None,
) -> EventsPlan:
    from kubegpu.kubelet.config import read_kubelet_config
    from kubegpu.sim.events import Cluster, EventsPlan, Workload, gang_modes

    gangs = gang_modes(gang)
    workload = Workload(tuple(pods), synthetic)
    if synthetic is None and not all(p.suffix.lower() == ".csv" for p in pods):
        _fragment_notices(pods)
    kubelet = None if kubelet_config is None else read_kubelet_config(str(kubelet_config))
    cluster = Cluster(
        tuple(nodes), None if profiles is None else tuple(profiles), None if levels is None else tuple(levels)
    )
    return EventsPlan(cluster, workload, tuple(policies), tuple(seeds), gangs, tas_algorithm, tie_break, kubelet)


def fgd_repro(
    workload: Annotated[
        list[str] | None,
        typer.Option(
            "--workload", help="Trace variant (default, gpushare40, …) or all for every published one; repeatable."
        ),
    ] = None,
    data: Annotated[
        Path | None, typer.Option(help=f"An openb folder (default ${ENV_VAR}, else the trace that ships with kubegpu).")
    ] = None,
    policy: Annotated[str, typer.Option(help="Comma list of policies, or all.")] = "all",
    seeds: Annotated[
        str, typer.Option(help="Runs by the authors' seed numbers (each replays their run): 42-51 or 42,43.")
    ] = "42-51",
    arrival: Annotated[float, typer.Option(help="Inflate arrivals to this × GPU capacity.")] = 1.3,
    workers: Annotated[int, typer.Option(help="Worker processes.")] = 2,
    fmt: Annotated[Format, typer.Option("--format", "-o", help="Output format.")] = Format.text,
    plot: Annotated[Path | None, typer.Option(help="Write a PNG (one per workload) here.")] = None,
    report: Annotated[Path | None, typer.Option(help="Write a markdown report here.")] = None,
    bound: BoundOption = False,
) -> None:
    """Run the FGD paper's method on the openb trace and print our ratio beside the published one."""
    try:
        folder = data or default_openb_dir()
        nodes = node_list(folder)
        if not nodes.is_file():
            raise InputError(f"no {nodes.name} (or .xz/.gz) here; pass --data or set {ENV_VAR}", file=str(folder))
        files = variant_files(folder)
        names = workload or ["default"]
        if names == ["all"]:
            source = published_file(folder)
            if source is None:
                raise InputError(
                    "no published results here (analysis_allo_discrete.csv) to pick the variants from", file=str(folder)
                )
            names = read_published(source).workloads()
        for name in names:
            if name not in files:
                raise InputError(f"unknown workload {name!r}; choose from {', '.join(files)} or all", file=str(folder))
        traces = {name: read_pods(files[name]) for name in names}
        _static(
            read_nodes(nodes),
            traces,
            parse_policies(policy),
            parse_seeds(seeds),
            arrival,
            workers,
            "lowest-name",
            folder,
            fmt,
            plot,
            report,
            "FGD reproduction (openb, GPU allocation at arrival)",
            bound,
        )
    except KubegpuError as err:
        raise fail(err) from None


def register(app: typer.Typer, gen_app: typer.Typer) -> None:
    """Add `kubegpu simulate` (default command) and `kubegpu simulate fgd-repro`."""
    sim_app = typer.Typer(
        help="Replay GPU clusters through the scheduler model; reproduce FGD.",
        invoke_without_command=True,
        no_args_is_help=False,
    )
    sim_app.callback(invoke_without_command=True)(simulate_main)
    sim_app.command("fgd-repro")(fgd_repro)
    app.add_typer(sim_app, name="simulate")
