"""Console-script entry point for `kubegpu` and `kubectl-gpu`: imports only what the command needs."""

from __future__ import annotations

import sys

from kubegpu.collector import gc_paused


def run() -> None:
    """Run the command line; user errors (a missing optional extra too) become one line and exit code 2."""
    prog = "kubectl gpu" if sys.argv and sys.argv[0].rsplit("/", 1)[-1].startswith("kubectl-") else "kubegpu"
    args = sys.argv[1:]
    # Importing typer and the command's modules makes tens of thousands of objects that live as long as the process
    # and no garbage; the cyclic collector's passes over them were 3 % of the instructions of a one-file lint.
    with gc_paused():
        from kubegpu.cli import common
        from kubegpu.cli.app import build_app, modules_for

        command = common.command_of(args)
        app = build_app(modules_for(args))
    common.run_app(app, prog, fast_exit=command in common.FAST_EXIT_COMMANDS, command=command)


if __name__ == "__main__":
    run()
