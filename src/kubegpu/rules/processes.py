"""How many processes a lint run uses: one per CPU while each gets enough manifests to parse.

Kept apart from `parallel` so that deciding costs no multiprocessing import on small inputs.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from kubegpu.manifests import discover

MIN_BYTES_PER_PROCESS = 512 * 1024  # below this a second process costs more than it saves
MAX_PROCESSES = 8


def available_processes() -> int:
    """CPUs this process may run on (the affinity mask, not the machine's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def plan_processes(paths: Sequence[str], requested: int) -> int:
    """How many processes to use: `requested`, or (0) one per CPU while each gets enough bytes to parse."""
    if requested == 1 or not hasattr(os, "fork"):
        return 1
    if requested > 1:
        return min(requested, MAX_PROCESSES)
    total = 0
    for _name, path, _kind in discover(paths):
        if path is not None:
            try:
                total += path.stat().st_size
            except OSError:
                continue
    return max(1, min(available_processes(), MAX_PROCESSES, total // MIN_BYTES_PER_PROCESS))
