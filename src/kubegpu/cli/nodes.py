"""`kubegpu nodes` (list node presets) and `kubegpu nodes show NAME` (a preset or profile file)."""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Annotated

import typer
import yaml

from kubegpu.cli.common import fail
from kubegpu.errors import KubegpuError
from kubegpu.topology.presets import load_node, load_preset, preset_names
from kubegpu.topology.summary import render_text, summarize, summary_table


class Format(StrEnum):
    text = "text"
    json = "json"
    yaml = "yaml"


nodes_app = typer.Typer(
    help="List the bundled node presets, or show one (a preset name or a profile file).",
    invoke_without_command=True,
)


@nodes_app.callback()
def nodes(
    ctx: typer.Context,
    output: Annotated[Format, typer.Option("--output", "-o", help="text or json.")] = Format.text,
) -> None:
    """List the node presets: name, CPUs, cores, sockets, NUMA nodes, GPUs and GPU model."""
    if ctx.invoked_subcommand is not None:
        return
    try:
        rows = [summarize(load_preset(name)) for name in preset_names()]
    except KubegpuError as err:
        raise fail(err) from err
    if output is Format.json:
        typer.echo(json.dumps([r.as_dict() for r in rows], indent=2))
    elif output is Format.yaml:
        typer.echo(yaml.safe_dump([r.as_dict() for r in rows], sort_keys=False), nl=False)
    else:
        typer.echo(summary_table(rows))


@nodes_app.command("show")
def show(
    name: Annotated[str, typer.Argument(help="A preset name (see `kubegpu nodes`) or a profile file.")],
    output: Annotated[Format, typer.Option("--output", "-o", help="text, json or yaml.")] = Format.text,
) -> None:
    """Print one node profile: text for people, JSON/YAML in the node-profile schema."""
    try:
        topo = load_node(name)
    except KubegpuError as err:
        raise fail(err) from err
    if output is Format.json:
        typer.echo(json.dumps(topo.to_dict(), indent=2))
    elif output is Format.yaml:
        typer.echo(yaml.safe_dump(topo.to_dict(), sort_keys=False), nl=False)
    else:
        typer.echo(render_text(topo))


def register(app: typer.Typer, gen_app: typer.Typer) -> None:
    """Add `kubegpu nodes` and `kubegpu nodes show`."""
    del gen_app
    app.add_typer(nodes_app, name="nodes")
