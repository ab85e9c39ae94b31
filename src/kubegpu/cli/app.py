"""Builds the typer app from the command modules; each module exposes `register(app, gen_app)`.

The console script builds only the modules its command needs, so `kubegpu lint` never imports the
simulator, the webhook server or the cluster client.
"""

# No `from __future__ import annotations`: typer would compile and evaluate the callback's string annotations at
# every start (see cli/lint.py).

import importlib
from typing import Annotated

import typer

from kubegpu import __version__

ALL_MODULES: tuple[str, ...] = (
    "lint",
    "nodes",
    "probe",
    "fix",
    "audit",
    "defrag",
    "webhook",
    "admit",
    "gen",
    "simulate",
    "loadbench",
    "coldstart",
)
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
    "defrag": ("defrag",),
    "webhook": ("webhook",),
    "simulate": ("simulate",),
    "loadbench": ("loadbench",),
    "coldstart": ("coldstart",),
    "gen": ("gen", "probe", "audit", "webhook", "loadbench"),
}


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"kubegpu {__version__}")
        raise typer.Exit()


def _main(
    version: Annotated[
        bool, typer.Option("--version", callback=_print_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """Find, explain and fix what starves or strands GPUs on Kubernetes."""


def build_app(modules: tuple[str, ...] = ALL_MODULES) -> typer.Typer:
    """A fresh app with the commands of the named modules of `kubegpu.cli`."""
    app = typer.Typer(
        name="kubegpu",
        help="Find, explain and fix what starves or strands GPUs on Kubernetes.",
        no_args_is_help=True,
        add_completion=True,
        pretty_exceptions_enable=False,
    )
    app.callback()(_main)
    gen_app = typer.Typer(
        help="Generate node, scheduler, queueing, pre-pull and cache configuration.", no_args_is_help=True
    )
    app.add_typer(gen_app, name="gen")
    for name in modules:
        try:
            module = importlib.import_module(f"kubegpu.cli.{name}")
        except ModuleNotFoundError as err:  # an optional extra is not installed: its commands say which
            from kubegpu.cli.extras import missing_extra, register_unavailable

            own = [command for command, names in COMMAND_MODULES.items() if names == (name,)]
            problems = [(command, missing_extra(err, command)) for command in own]
            if not own or any(problem is None for _, problem in problems):
                raise
            for command, problem in problems:
                if problem is not None:
                    register_unavailable(app, command, problem)
            continue
        module.register(app, gen_app)
    return app


def modules_for(argv: list[str]) -> tuple[str, ...]:
    """The modules needed for a command line: those of its first word, none for `--version` (it prints and
    exits before any command is read), or all of them (for --help)."""
    for word in argv:
        if word == "--version" and "--help" not in argv:
            return ()
        if not word.startswith("-"):
            return COMMAND_MODULES.get(word, ALL_MODULES)
    return ALL_MODULES
