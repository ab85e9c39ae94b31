"""A point in time by which work must stop, checked cooperatively by loops that untrusted input can lengthen.

The webhook's reviews and the cluster reader's requests take one; a check is a single monotonic clock read.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from kubegpu.errors import KubegpuError


class DeadlineExceeded(KubegpuError):
    """The work ran past its deadline; callers turn this into their own answer (a response, an error line)."""


@dataclass(frozen=True)
class Deadline:
    """`at` is a `time.monotonic()` reading; `seconds` the budget it was given, for messages."""

    at: float
    seconds: float

    @classmethod
    def after(cls, seconds: float, start: float | None = None) -> Deadline:
        """The deadline `seconds` after `start` (default: now)."""
        return cls((time.monotonic() if start is None else start) + seconds, seconds)

    def remaining(self) -> float:
        """Seconds left (negative once past)."""
        return self.at - time.monotonic()

    def expired(self) -> bool:
        return time.monotonic() >= self.at

    def check(self, what: str = "the work") -> None:
        """Raise DeadlineExceeded once past the deadline."""
        if time.monotonic() >= self.at:
            raise DeadlineExceeded(f"{what} did not finish within {self.seconds:g} s")

    def earlier(self, other: Deadline | None) -> Deadline:
        """Whichever of the two comes first."""
        return self if other is None or self.at <= other.at else other
