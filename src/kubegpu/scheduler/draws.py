"""Where the scheduler model's random choices come from: one integer in [0, n) per draw.

kube-scheduler and the FGD simulator draw from Go's math/rand (`kubegpu.sim.gorand` replays its stream);
elsewhere a seeded numpy generator does. The framework and the plugins take either through `Draws`.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np


class Draws(Protocol):
    """A source of uniform integer draws (Go's rand.Intn)."""

    def intn(self, n: int) -> int:
        """A uniform integer in [0, n); n > 0."""
        ...


class NumpyDraws:
    """Draws from a seeded numpy generator (one `integers(n)` call per draw)."""

    def __init__(self, seed: int) -> None:
        self._generator = np.random.default_rng(seed)

    def intn(self, n: int) -> int:
        """A uniform integer in [0, n)."""
        return int(self._generator.integers(n))
