"""The `kubegpu` (and `kubectl-gpu`) command: builds the typer app from one module per command.

Each command module exposes `register(app, gen_app)`; the CLI parses arguments and calls the library.
"""

from __future__ import annotations

import sys

import typer

from kubegpu.cli import common

app = typer.Typer(
    name="kubegpu",
    help="Find, explain and fix what starves or strands GPUs on Kubernetes.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
gen_app = typer.Typer(help="Generate node, scheduler, queueing, pre-pull and cache configuration.",
                      no_args_is_help=True)
app.add_typer(gen_app, name="gen")


def _register_commands() -> None:
    # One import per command module; each adds its commands to `app` or `gen_app`.
    from kubegpu.cli import admit, audit, fix, gen, lint, nodes, probe, simulate, webhook

    for module in (lint, nodes, probe, fix, audit, webhook, admit, gen, simulate):
        module.register(app, gen_app)


_register_commands()


def run() -> None:
    """Console-script entry point: user errors become one line and exit code 2."""
    prog = "kubectl gpu" if sys.argv and sys.argv[0].rsplit("/", 1)[-1].startswith("kubectl-") else "kubegpu"
    common.run_app(app, prog)


if __name__ == "__main__":
    run()
