"""What every command shares: turning a KubegpuError into one line and exit 2, output helpers."""

from __future__ import annotations

import sys

import click
import typer

from kubegpu.errors import KubegpuError

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2


def fail(error: KubegpuError | str) -> typer.Exit:
    """Print a user error as one line on stderr and return the Exit to raise (code 2)."""
    typer.echo(f"kubegpu: error: {error}", err=True)
    return typer.Exit(EXIT_USAGE)


def run_app(app: typer.Typer, prog: str) -> None:
    """Run the app; a KubegpuError escaping a command is reported without a traceback."""
    try:
        app(prog_name=prog, standalone_mode=True)
    except KubegpuError as err:  # a command forgot to catch it: still one line, exit 2
        typer.echo(f"kubegpu: error: {err}", err=True)
        sys.exit(EXIT_USAGE)
    except click.exceptions.Abort:
        sys.exit(130)
