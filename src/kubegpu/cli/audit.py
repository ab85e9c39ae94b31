"""`kubegpu audit` and `kubegpu gen audit-rbac`: argument parsing only; the work is in live/."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from kubegpu import DEFAULT_IMAGE
from kubegpu.cli.cluster_input import ClusterInput, read_input
from kubegpu.cli.common import fail
from kubegpu.errors import KubegpuError
from kubegpu.lint import LintConfig, all_rules, load_config
from kubegpu.live.model import DEFAULT_BLOCK_LABEL, DEFAULT_RACK_LABEL
from kubegpu.live.rbac import RbacOptions, render_rbac
from kubegpu.manifests.accelerators import AcceleratorRegistry


class AuditFormat(StrEnum):
    text = "text"
    json = "json"
    markdown = "markdown"


def audit_command(
    cluster: Annotated[
        bool,
        typer.Option("--cluster", help="Read the cluster of the kubeconfig context."),
    ] = False,
    snapshot: Annotated[
        list[Path] | None, typer.Option("--snapshot", help="`kubectl get ... -o json` dumps (files or folders).")
    ] = None,
    context: Annotated[
        str | None,
        typer.Option(help="Kubeconfig context (default: current)."),
    ] = None,
    namespace: Annotated[
        str | None,
        typer.Option("--namespace", "-n", help="Report pods of this namespace only."),
    ] = None,
    kubeconfig: Annotated[
        Path | None,
        typer.Option(help="Kubeconfig file (default: $KUBECONFIG, ~/.kube/config)."),
    ] = None,
    output: Annotated[
        AuditFormat,
        typer.Option("--format", "-o", help="Report format."),
    ] = AuditFormat.text,
    block_label: Annotated[
        str,
        typer.Option(help="Node label naming the block (a Kueue Topology wins)."),
    ] = DEFAULT_BLOCK_LABEL,
    rack_label: Annotated[
        str,
        typer.Option(help="Node label naming the rack (a Kueue Topology wins)."),
    ] = DEFAULT_RACK_LABEL,
    configz: Annotated[
        bool,
        typer.Option("--configz/--no-configz", help="Read each kubelet's /configz."),
    ] = True,
    config_file: Annotated[
        Path | None,
        typer.Option("--config", help="kubegpu.toml for the lint rules."),
    ] = None,
    timeout: Annotated[
        float, typer.Option(help="Seconds each API request may take, from sending it to the last byte of its answer.")
    ] = 30.0,
    deadline: Annotated[float, typer.Option(help="Seconds the whole cluster read may take.")] = 300.0,
    plot: Annotated[
        Path | None,
        typer.Option(
            help="Write a PNG map of the GPUs node by node (used, free, stranded), grouped by block and rack."
        ),
    ] = None,
    why: Annotated[
        bool,
        typer.Option(
            "--why",
            help=(
                "Explain every pending GPU pod, pod group and Kueue workload instead: kube-scheduler's reasons per "
                "node, then the cause in GPU terms (text or JSON)."
            ),
        ),
    ] = False,
) -> None:
    """Show free, stranded and fragmented GPUs, and the GPU pods and kubelets at fault."""
    # the analysis needs numpy and the cluster reader lightkube (the `cluster` extra): loaded here, not
    # when the app is built, so `kubegpu gen audit-rbac` works without them
    from kubegpu.live.audit import AuditOptions, audit
    from kubegpu.live.checks import with_checks
    from kubegpu.live.render import render_json, render_markdown, render_text

    if cluster == bool(snapshot):
        raise fail("give exactly one of --cluster or --snapshot")
    if why and output is AuditFormat.markdown:
        raise fail("--why prints text or JSON (-o text, -o json)")
    try:
        lint_config = load_config(config_file, all_rules()) if config_file else LintConfig()  # before a cluster read
        snap = read_input(ClusterInput(snapshot, kubeconfig, context, timeout, deadline, namespace, configz))
        options = AuditOptions(
            domain_labels=(block_label, rack_label),
            namespace=namespace,
            accelerators=AcceleratorRegistry(lint_config.accelerator_resources),
        )
        if why:
            from kubegpu.live.why import explain_snapshot
            from kubegpu.report.why import why_json, why_text

            reasons = explain_snapshot(snap, options)
            typer.echo(
                why_json(reasons) if output is AuditFormat.json else why_text(reasons), nl=output is AuditFormat.json
            )
            return
        report = audit(snap, options)
        report = with_checks(report, snap, lint_config, namespace)
        if plot is not None:
            from kubegpu.live.gpumap import columns, plot_map

            plot_map([("GPUs node by node", columns(report))], plot, f"GPU map of {snap.source or 'the cluster'}")
    except KubegpuError as err:
        raise fail(err) from err
    if output is AuditFormat.json:
        typer.echo(render_json(report))
    elif output is AuditFormat.markdown:
        typer.echo(render_markdown(report), nl=False)
    else:
        typer.echo(render_text(report), nl=False)


def gen_audit_rbac(
    service_account: Annotated[
        str,
        typer.Option(help="ServiceAccount that runs the audit."),
    ] = "kubegpu-audit",
    namespace: Annotated[
        str,
        typer.Option("--namespace", "-n", help="Namespace of the ServiceAccount."),
    ] = "kubegpu-system",
    with_configz: Annotated[
        bool,
        typer.Option(
            "--with-configz/--without-configz",
            help=(
                "Also a separate role with nodes/proxy get, to read kubelet configurations: it reaches "
                "the whole kubelet API, exec into containers included (not read-only)."
            ),
        ),
    ] = False,
    job: Annotated[
        bool,
        typer.Option("--job", help="Add a Job that runs `kubegpu audit --cluster` with this access."),
    ] = False,
    image: Annotated[
        str,
        typer.Option(help="Image of the Job; default: this version's release image."),
    ] = DEFAULT_IMAGE,
) -> None:
    """A read-only ClusterRole and binding with exactly the list verbs `kubegpu audit --cluster` uses (and a Job)."""
    try:
        text = render_rbac(
            RbacOptions(
                service_account=service_account, namespace=namespace, configz=with_configz, job=job, image=image
            )
        )
    except KubegpuError as err:
        raise fail(err) from err
    typer.echo(text, nl=False)


def register(app: typer.Typer, gen_app: typer.Typer) -> None:
    app.command("audit")(audit_command)
    gen_app.command("audit-rbac")(gen_audit_rbac)
