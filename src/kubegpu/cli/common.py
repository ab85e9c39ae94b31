"""What every command shares: turning a KubegpuError into one line and exit 2, output helpers."""

from __future__ import annotations

import os
import sys

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
    """Run the app and exit; a KubegpuError escaping a command is reported without a traceback.

    The process ends with os._exit once output is flushed: tearing down the interpreter freed every
    parsed document object by object, which took longer than linting 2000 workloads.
    """
    code: int = EXIT_OK
    try:
        app(prog_name=prog, standalone_mode=True)
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else (0 if done.code is None else EXIT_USAGE)
        if isinstance(done.code, str):
            typer.echo(done.code, err=True)
    except KubegpuError as err:  # a command forgot to catch it: still one line, exit 2
        typer.echo(f"kubegpu: error: {err}", err=True)
        code = EXIT_USAGE
    except typer.Abort:
        code = 130
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (BrokenPipeError, OSError):  # `kubegpu lint … | head`: the reader left
        code = code or EXIT_OK
    os._exit(code)
