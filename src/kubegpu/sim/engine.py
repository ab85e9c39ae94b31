"""A small deterministic discrete-event loop: a heap of (time, priority, sequence, event), no wall clock.

Modelled on simpy's core: events at the same time run by priority, then in the order they were
scheduled, so a run depends only on its inputs and its seeded random generator.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass, field

from kubegpu.errors import ModelError

COMPLETION = 0  # completions first, so freed capacity is seen by arrivals at the same instant
ARRIVAL = 1
RETRY = 2


@dataclass(order=True)
class _Entry:
    time: float
    priority: int
    sequence: int
    action: Callable[[], None] = field(compare=False)


class EventLoop:
    """Schedule callables at simulated times and run them in order."""

    def __init__(self) -> None:
        self._heap: list[_Entry] = []
        self._sequence = 0
        self.now = 0.0
        self.processed = 0

    def at(self, time: float, priority: int, action: Callable[[], None]) -> None:
        """Run `action` at `time` (never in the past)."""
        if time < self.now:
            raise ModelError(f"cannot schedule an event at {time} before now ({self.now})")
        heapq.heappush(self._heap, _Entry(time, priority, self._sequence, action))
        self._sequence += 1

    def __len__(self) -> int:
        return len(self._heap)

    def run(self, until: float | None = None, max_events: int | None = None) -> None:
        """Process events in (time, priority, sequence) order until none is left (or a limit)."""
        while self._heap:
            if until is not None and self._heap[0].time > until:
                self.now = until
                return
            if max_events is not None and self.processed >= max_events:
                return
            entry = heapq.heappop(self._heap)
            self.now = entry.time
            self.processed += 1
            entry.action()
