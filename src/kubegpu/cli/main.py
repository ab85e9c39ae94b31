"""The whole `kubegpu` app with every command, for tests and `python -m kubegpu.cli.main`.

The console scripts go through `kubegpu.cli.entry`, which builds only the commands a call needs.
"""

from __future__ import annotations

from kubegpu.cli.app import build_app
from kubegpu.cli.entry import run

app = build_app()

__all__ = ["app", "run"]

if __name__ == "__main__":
    run()
