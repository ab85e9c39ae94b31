"""The cyclic garbage collector paused for work that makes many long-lived objects and almost no cycles.

Start-up (importing typer and the commands) and a lint run (nodes kept for positions, templates, findings)
both made the collector's passes walk every object they had made, for garbage that was not there.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic collector for the block; what the block made then joins the oldest generation unwalked."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        # Promote what was made to the oldest generation without walking it (freeze, then unfreeze), so that
        # re-enabling does not start with one young collection over everything the block made.
        gc.freeze()
        gc.unfreeze()
        if was_enabled:
            gc.enable()
