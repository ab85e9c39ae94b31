"""Console-script entry point for `kubegpu` and `kubectl-gpu`: imports only what the command needs."""

from __future__ import annotations

import sys

from kubegpu.cli import common
from kubegpu.cli.app import build_app, modules_for


def run() -> None:
    """Run the command line; user errors become one line and exit code 2."""
    prog = "kubectl gpu" if sys.argv and sys.argv[0].rsplit("/", 1)[-1].startswith("kubectl-") else "kubegpu"
    common.run_app(build_app(modules_for(sys.argv[1:])), prog)


if __name__ == "__main__":
    run()
