"""Console-script entry point for `kubegpu` and `kubectl-gpu`: imports only what the command needs."""

from __future__ import annotations

import sys

from kubegpu.cli import common
from kubegpu.cli.app import build_app, modules_for


def run() -> None:
    """Run the command line; user errors (a missing optional extra too) become one line and exit code 2."""
    prog = "kubectl gpu" if sys.argv and sys.argv[0].rsplit("/", 1)[-1].startswith("kubectl-") else "kubegpu"
    args = sys.argv[1:]
    command = common.command_of(args)
    common.run_app(build_app(modules_for(args)), prog, fast_exit=command in common.FAST_EXIT_COMMANDS, command=command)


if __name__ == "__main__":
    run()
