"""The webhook's resource limits and the memory budget they add up to.

Every limit bounds what one in-cluster client can make the server hold: time per connection phase,
open connections, request bytes, reviews in progress and the time a review may take; `memory_budget` turns
them into the container memory limit that `gen webhook` and the Helm chart write. A review's time comes from
`timeout_seconds`, the webhook configurations' timeoutSeconds: this dataclass is the one place it is set.
"""

from __future__ import annotations

from dataclasses import dataclass

from kubegpu.errors import InputError

MIB = 1024 * 1024
# From measurements (bench/bench_webhook_attacks.py, docs/commands/webhook.md "Limits"): an idle
# `kubegpu webhook serve` is about 72 MiB resident (96 MiB leaves room for the heap reviews leave
# behind); one open TLS connection about 270 KiB (asyncio keeps a 256 KiB read buffer per TLS
# connection, plus the SSL object and the HTTP parser); one review of a pod of thousands of small
# fields raised the resident size by about 200 bytes per byte of request body (104 MiB for 512 KiB;
# tracemalloc sees 80), one long string by 4.
BASE_RSS_BYTES = 96 * MIB
CONNECTION_BYTES = 320 * 1024
REVIEW_BYTES_PER_BODY_BYTE = 200
HEADROOM = 1.25
FILES_RESERVED = 64  # listening socket, TLS files, logs, the interpreter's own
# The answer must reach the API server before its timeoutSeconds: the review stops this long before it
# (time for the response to travel and for the request head, read before the clock starts here).
DEADLINE_MARGIN = 1.0
MAX_TIMEOUT_SECONDS = 30  # admissionregistration.k8s.io/v1 allows timeoutSeconds 1-30


@dataclass(frozen=True)
class Limits:
    """Per-phase timeouts (seconds), connection cap, body limit, review concurrency and review time.

    `timeout_seconds` is the API server's timeout for a call (the webhook configurations' timeoutSeconds).
    `review_deadline`: seconds from a review's arrival until it is answered without being finished (by the
    failure policy); None: DEADLINE_MARGIN before `timeout_seconds`, and never less than half of it.
    `queue_timeout`: seconds from arrival a review may wait for a worker before it is answered 503; None:
    half the review deadline, so a review that gets a worker has at least the other half.
    """

    handshake_timeout: float = 5.0
    header_timeout: float = 5.0
    body_timeout: float = 10.0
    keep_alive_timeout: float = 5.0
    max_connections: int = 256
    client_share_percent: int = 50  # one client address holds at most this share of them
    max_body_bytes: int = 512 * 1024
    review_workers: int = 2
    review_queue: int = 64
    queue_timeout: float | None = None
    reload_interval: float = 1.0
    timeout_seconds: int = 5
    review_deadline: float | None = None

    def __post_init__(self) -> None:
        for name in (
            "handshake_timeout",
            "header_timeout",
            "body_timeout",
            "keep_alive_timeout",
            "reload_interval",
        ):
            if not 0 < getattr(self, name) <= 3600:
                raise InputError(f"{name.replace('_', '-')} must be between 0 and 3600 seconds")
        if self.max_connections < 1:
            raise InputError("max-connections must be at least 1")
        if not 1 <= self.client_share_percent <= 100:
            raise InputError("the share of connections one client may hold must be 1-100 %")
        if not 1024 <= self.max_body_bytes <= 3 * MIB:
            raise InputError("max-body-bytes must be between 1024 and 3 MiB (the API server's cap)")
        if self.review_workers < 1 or self.review_queue < 0:
            raise InputError("review-workers must be at least 1 and review-queue at least 0")
        if not 1 <= self.timeout_seconds <= MAX_TIMEOUT_SECONDS:
            raise InputError(f"timeout-seconds must be between 1 and {MAX_TIMEOUT_SECONDS} (the API server's range)")
        if self.review_deadline is not None and not 0 < self.review_deadline < self.timeout_seconds:
            raise InputError(
                f"review-deadline must be above 0 and below timeout-seconds ({self.timeout_seconds} s): "
                "the answer has to reach the API server before it gives up"
            )
        if self.queue_timeout is not None and not 0 < self.queue_timeout <= self.deadline_seconds:
            raise InputError(
                f"queue-timeout must be above 0 and at most the review deadline ({self.deadline_seconds:g} s)"
            )

    @property
    def deadline_seconds(self) -> float:
        """Seconds from a review's arrival to its answer, finished or not."""
        if self.review_deadline is not None:
            return self.review_deadline
        return max(self.timeout_seconds - DEADLINE_MARGIN, self.timeout_seconds / 2)

    @property
    def queue_wait_seconds(self) -> float:
        """Seconds from a review's arrival it may wait for a worker (then 503)."""
        return self.queue_timeout if self.queue_timeout is not None else self.deadline_seconds / 2

    def connection_cap(self, open_files_limit: int) -> int:
        """Connections to hold at once: `max_connections`, kept below the process's file limit."""
        return max(1, min(self.max_connections, open_files_limit - FILES_RESERVED))


def memory_budget(limits: Limits) -> int:
    """Bytes the server can reach under these limits (with headroom): the container memory limit.

    Every connection at once, every worker reviewing a body of the largest size, and the queued
    bodies waiting for a worker.
    """
    reviews = limits.review_workers * limits.max_body_bytes * REVIEW_BYTES_PER_BODY_BYTE
    queued = limits.review_queue * limits.max_body_bytes
    total = BASE_RSS_BYTES + limits.max_connections * CONNECTION_BYTES + reviews + queued
    return int(total * HEADROOM)


def memory_limit_quantity(limits: Limits) -> str:
    """The budget as a Kubernetes quantity, rounded up to a multiple of 32 Mi."""
    mib = -(-memory_budget(limits) // MIB)
    return f"{-(-mib // 32) * 32}Mi"
