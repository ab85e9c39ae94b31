"""Webhook counters and a latency histogram in the Prometheus text exposition format (0.0.4).

One Metrics object per app (no module-level state); a lock keeps updates from threads consistent.
"""

from __future__ import annotations

import threading
from bisect import bisect_left
from dataclasses import dataclass, field

LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0)
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


@dataclass
class _Histogram:
    counts: list[int] = field(default_factory=lambda: [0] * (len(LATENCY_BUCKETS) + 1))
    total: float = 0.0
    n: int = 0


class Metrics:
    """Requests by endpoint and outcome, patches, denials, and request latency per endpoint."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._requests: dict[tuple[str, str], int] = {}
        self._patches = 0
        self._patch_ops = 0
        self._denials = 0
        self._latency: dict[str, _Histogram] = {}

    def observe(self, endpoint: str, outcome: str, seconds: float, patch_ops: int = 0,
                denied: bool = False) -> None:
        """Record a request; outcome: allowed, patched, denied, skipped, bad_request or error."""
        with self._lock:
            key = (endpoint, outcome)
            self._requests[key] = self._requests.get(key, 0) + 1
            if patch_ops:
                self._patches += 1
                self._patch_ops += patch_ops
            if denied:
                self._denials += 1
            hist = self._latency.setdefault(endpoint, _Histogram())
            hist.counts[bisect_left(LATENCY_BUCKETS, seconds)] += 1
            hist.total += seconds
            hist.n += 1

    def render(self) -> str:
        """The exposition text for GET /metrics."""
        with self._lock:
            lines = [
                "# HELP kubegpu_webhook_requests_total Admission requests by endpoint and outcome.",
                "# TYPE kubegpu_webhook_requests_total counter",
            ]
            for (endpoint, outcome), value in sorted(self._requests.items()):
                lines.append(f'kubegpu_webhook_requests_total{{endpoint="{endpoint}",'
                             f'outcome="{outcome}"}} {value}')
            lines += [
                "# HELP kubegpu_webhook_patches_total Pods mutated with a JSONPatch.",
                "# TYPE kubegpu_webhook_patches_total counter",
                f"kubegpu_webhook_patches_total {self._patches}",
                "# HELP kubegpu_webhook_patch_operations_total JSONPatch operations sent.",
                "# TYPE kubegpu_webhook_patch_operations_total counter",
                f"kubegpu_webhook_patch_operations_total {self._patch_ops}",
                "# HELP kubegpu_webhook_denials_total Pods denied by the validating endpoint.",
                "# TYPE kubegpu_webhook_denials_total counter",
                f"kubegpu_webhook_denials_total {self._denials}",
                "# HELP kubegpu_webhook_request_duration_seconds Time to answer a review.",
                "# TYPE kubegpu_webhook_request_duration_seconds histogram",
            ]
            for endpoint, hist in sorted(self._latency.items()):
                cumulative = 0
                for bound, count in zip((*LATENCY_BUCKETS, None), hist.counts, strict=True):
                    cumulative += count
                    le = "+Inf" if bound is None else repr(bound)
                    lines.append(f'kubegpu_webhook_request_duration_seconds_bucket{{'
                                 f'endpoint="{endpoint}",le="{le}"}} {cumulative}')
                lines.append(f'kubegpu_webhook_request_duration_seconds_sum{{endpoint="{endpoint}"}}'
                             f" {hist.total!r}")
                lines.append(f'kubegpu_webhook_request_duration_seconds_count{{'
                             f'endpoint="{endpoint}"}} {hist.n}')
            return "\n".join(lines) + "\n"
