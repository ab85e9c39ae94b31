"""How many processes a lint run uses: one per CPU while each gets enough manifests to parse.

Kept apart from `parallel` so that deciding costs no multiprocessing import on small inputs.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

# One input as `manifests.discover` finds it: display name, path (None for stdin) and kind.
Input = tuple[str, Path | None, str]
MIN_BYTES_PER_PROCESS = 512 * 1024  # below this a second process costs more than it saves
MAX_PROCESSES = 8


def available_processes() -> int:
    """CPUs this process may run on (the affinity mask, not the machine's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def input_sizes(inputs: Sequence[Input]) -> list[int]:
    """Bytes of each discovered input (0 for standard input and for what cannot be read)."""
    sizes = []
    for _name, path, _kind in inputs:
        try:
            sizes.append(path.stat().st_size if path is not None else 0)
        except OSError:
            sizes.append(0)
    return sizes


def plan_processes(sizes: Sequence[int], requested: int) -> int:
    """How many processes to use: `requested`, or (0) one per CPU while each gets enough bytes to parse."""
    if requested == 1 or not hasattr(os, "fork"):
        return 1
    if requested > 1:
        return min(requested, MAX_PROCESSES)
    return max(1, min(available_processes(), MAX_PROCESSES, sum(sizes) // MIN_BYTES_PER_PROCESS))
