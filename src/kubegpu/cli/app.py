"""Builds the typer app from the command modules; each module exposes `register(app, gen_app)`.

The console script builds only the modules its command needs, so `kubegpu lint` never imports the
simulator, the webhook server or the cluster client.
"""

from __future__ import annotations

import importlib

import typer

ALL_MODULES: tuple[str, ...] = ("lint", "nodes", "probe", "fix", "audit", "webhook", "admit", "gen", "simulate",
                                "loadbench", "coldstart")
# Top-level command -> the modules that register it (several modules add `gen` subcommands).
COMMAND_MODULES: dict[str, tuple[str, ...]] = {
    "lint": ("lint",),
    "rules": ("lint",),
    "explain": ("lint",),
    "fix": ("fix",),
    "admit": ("admit",),
    "nodes": ("nodes",),
    "probe": ("probe",),
    "audit": ("audit",),
    "webhook": ("webhook",),
    "simulate": ("simulate",),
    "loadbench": ("loadbench",),
    "coldstart": ("coldstart",),
    "gen": ("gen", "probe", "audit", "webhook", "loadbench"),
}


def build_app(modules: tuple[str, ...] = ALL_MODULES) -> typer.Typer:
    """A fresh app with the commands of the named modules of `kubegpu.cli`."""
    app = typer.Typer(
        name="kubegpu",
        help="Find, explain and fix what starves or strands GPUs on Kubernetes.",
        no_args_is_help=True,
        add_completion=True,
        pretty_exceptions_enable=False,
    )
    gen_app = typer.Typer(help="Generate node, scheduler, queueing, pre-pull and cache configuration.",
                          no_args_is_help=True)
    app.add_typer(gen_app, name="gen")
    for name in modules:
        importlib.import_module(f"kubegpu.cli.{name}").register(app, gen_app)
    return app


def modules_for(argv: list[str]) -> tuple[str, ...]:
    """The modules needed for a command line: those of its first word, or all of them (for --help)."""
    for word in argv:
        if not word.startswith("-"):
            return COMMAND_MODULES.get(word, ALL_MODULES)
    return ALL_MODULES
