"""`kubegpu defrag`: argument parsing only; the work is in defrag/."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from kubegpu.cli.cluster_input import ClusterInput, read_input
from kubegpu.cli.common import fail
from kubegpu.errors import KubegpuError, QuantityError
from kubegpu.live.model import DEFAULT_BLOCK_LABEL, DEFAULT_RACK_LABEL
from kubegpu.report.escape import json_defused, printable
from kubegpu.units.quantity import cpu_millis, memory_bytes

if TYPE_CHECKING:
    from kubegpu.defrag.plan import Plan
    from kubegpu.live.model import ClusterSnapshot


class DefragFormat(StrEnum):
    text = "text"
    json = "json"
    yaml = "yaml"


def _amount(text: str | None, what: str, cpu: bool) -> int | None:
    """A --cpu (millicores) or --memory (bytes) quantity."""
    if text is None:
        return None
    try:
        value = cpu_millis(text) if cpu else memory_bytes(text)
    except QuantityError as err:
        raise QuantityError(f"{what} {text!r}: {err}") from None
    if value < 0:
        raise QuantityError(f"{what} {text!r}: must not be negative")
    return value


def defrag_command(
    snapshot: Annotated[
        list[Path] | None, typer.Option("--snapshot", help="`kubectl get ... -o json` dumps (files or folders).")
    ] = None,
    cluster: Annotated[bool, typer.Option("--cluster", help="Read the cluster of the kubeconfig context.")] = False,
    for_pod: Annotated[
        str | None,
        typer.Option(
            "--for", help="The waiting pod (with the rest of its pod group) or Kueue Workload: NAMESPACE/NAME."
        ),
    ] = None,
    gang: Annotated[
        str | None, typer.Option("--gang", help="A gang to make room for: PODSxGPUS, e.g. 4x8 (four 8-GPU pods).")
    ] = None,
    cpu: Annotated[str | None, typer.Option(help="CPU of each --gang pod (default: as the typical GPU pod).")] = None,
    memory: Annotated[
        str | None, typer.Option(help="Memory of each --gang pod (default: as the typical GPU pod).")
    ] = None,
    gpu_product: Annotated[
        str | None, typer.Option(help="GPU product (nvidia.com/gpu.product) the --gang pods select.")
    ] = None,
    priority_class: Annotated[
        str | None, typer.Option(help="PriorityClass of the --gang pods (default: the cluster's default priority).")
    ] = None,
    output: Annotated[
        DefragFormat,
        typer.Option("--format", "-o", help="text, json, or yaml: the Eviction objects to review."),
    ] = DefragFormat.text,
    validate: Annotated[
        bool, typer.Option("--validate", help="Check every Eviction object against the Kubernetes schema.")
    ] = False,
    time_limit: Annotated[float, typer.Option(help="Seconds the search may take.", min=0.5, max=3600)] = 8.0,
    plot: Annotated[Path | None, typer.Option(help="Write a PNG map of the GPUs before and after the plan.")] = None,
    context: Annotated[str | None, typer.Option(help="Kubeconfig context (default: current).")] = None,
    kubeconfig: Annotated[
        Path | None, typer.Option(help="Kubeconfig file (default: $KUBECONFIG, ~/.kube/config).")
    ] = None,
    timeout: Annotated[
        float, typer.Option(help="Seconds each API request may take, from sending it to the last byte of its answer.")
    ] = 30.0,
    deadline: Annotated[float, typer.Option(help="Seconds the whole cluster read may take.")] = 300.0,
    block_label: Annotated[str, typer.Option(help="Node label naming the block, for --plot.")] = DEFAULT_BLOCK_LABEL,
    rack_label: Annotated[str, typer.Option(help="Node label naming the rack, for --plot.")] = DEFAULT_RACK_LABEL,
) -> None:
    """The fewest evictions that let a waiting GPU pod or gang run, where each evicted pod goes again, checked
    through the scheduler and kubelet models. Prints a plan; never evicts anything."""
    from kubegpu.defrag.plan import make_plan
    from kubegpu.defrag.render import eviction_documents, render_json, render_text, render_yaml
    from kubegpu.defrag.targets import GangRequest, gang_target, parse_gang, target_for
    from kubegpu.generate.validate import validate_object

    if cluster == bool(snapshot):
        raise fail("give exactly one of --cluster or --snapshot")
    if (for_pod is None) == (gang is None):
        raise fail("give exactly one of --for NAMESPACE/POD or --gang PODSxGPUS")
    try:
        snap = read_input(ClusterInput(snapshot, kubeconfig, context, timeout, deadline, disruption=True))
        if for_pod is not None:
            target = target_for(snap, for_pod)
        else:
            pods, gpus = parse_gang(gang or "")
            request = GangRequest(
                pods,
                gpus,
                cpu_millis=_amount(cpu, "--cpu", True),
                memory_bytes=_amount(memory, "--memory", False),
                gpu_product=gpu_product,
                priority_class=priority_class,
            )
            target = gang_target(snap, request)
        plan = make_plan(snap, target, time_limit)
        text = ""
        if output is DefragFormat.yaml:
            docs = eviction_documents(plan, {p.key: p.uid for p in snap.pods})
            if validate:
                for doc in docs:
                    validate_object(doc.obj)
            text = render_yaml(docs)
        elif output is DefragFormat.json:
            text = json_defused(render_json(plan))
        else:  # names from the snapshot, printed on a terminal or in a CI log
            text = "".join(printable(line) + "\n" for line in render_text(plan).splitlines())
        if plot is not None:
            _plot(snap, plan, plot, (block_label, rack_label))
    except KubegpuError as err:
        raise fail(err) from err
    typer.echo(text, nl=False)
    if not plan.found:
        raise typer.Exit(1)


def _plot(snap: ClusterSnapshot, plan: Plan, path: Path, labels: tuple[str, str]) -> None:
    """The GPU map before and after the plan."""
    from kubegpu.defrag.after import applied, arriving_gpus
    from kubegpu.live.audit import AuditOptions, audit
    from kubegpu.live.gpumap import columns, plot_map

    options = AuditOptions(domain_labels=labels)
    before = columns(audit(snap, options))
    after = columns(audit(applied(snap, plan), options), arriving_gpus(plan))
    count = len(plan.evictions)
    plot_map(
        [("before", before), (f"after the plan ({count} eviction{'s' if count != 1 else ''})", after)],
        path,
        f"GPUs before and after the plan ({plan.target.gpus} GPUs for {len(plan.target.pods)} waiting pods)",
    )


def register(app: typer.Typer, gen_app: typer.Typer) -> None:
    del gen_app
    app.command("defrag")(defrag_command)
