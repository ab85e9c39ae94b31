"""The webhook's HTTP transport: a thin Starlette app around the pure review function.

Routes: POST /mutate, POST /validate, GET /healthz, /readyz, /metrics. Reviews run in a small
thread pool with a bounded queue (503 when full, and when a review has waited its queue budget since it
arrived), so the event loop always answers health checks; each review stops at its deadline.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Generic, TypeVar

from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from kubegpu.deadline import Deadline
from kubegpu.lint import all_rules
from kubegpu.webhook.limits import Limits
from kubegpu.webhook.metrics import CONTENT_TYPE, Metrics
from kubegpu.webhook.review import Decision, MalformedReview, Mode, WebhookConfig, review

T = TypeVar("T")


class Overloaded(Exception):
    """Every worker is busy and the queue is full."""


@dataclass(eq=False)
class _Job(Generic[T]):
    """A review waiting for a worker (mutable hand-over state between the loop and a worker thread)."""

    work: Callable[[], T] | None
    started: bool = False


class ReviewPool:
    """A few worker threads and a bounded queue; `run` is called from the event loop thread only."""

    def __init__(self, workers: int, queue: int, metrics: Metrics, max_wait: float = 2.0) -> None:
        self._executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="kubegpu-review")
        self._capacity = workers + queue
        self._pending = 0
        self._metrics = metrics
        self._max_wait = max_wait
        self._lock = threading.Lock()  # a job is either started by a worker or given up by the loop, never both

    async def run(self, fn: Callable[[], T], wait_until: float | None = None) -> T:
        """Run `fn` on a worker; Overloaded at once when `workers + queue` are already taken, and at
        `wait_until` (a `time.monotonic()` reading; default `max_wait` from now) if no worker has taken it
        by then: the wait is bounded from the request's arrival, not checked when a worker frees up."""
        if self._pending >= self._capacity:
            raise Overloaded
        if wait_until is None:
            wait_until = time.monotonic() + self._max_wait
        job = _Job(fn)

        def start() -> T:
            with self._lock:
                work, job.work = job.work, None
                job.started = work is not None
            if work is None:  # given up while it waited
                raise Overloaded
            return work()

        self._pending += 1
        self._metrics.in_flight.inc()
        try:
            future = asyncio.get_running_loop().run_in_executor(self._executor, start)
            done, _ = await asyncio.wait({future}, timeout=max(0.0, wait_until - time.monotonic()))
            if not done:
                with self._lock:
                    given_up = not job.started
                    job.work = None  # the queued entry no longer holds the request body
                if given_up:
                    future.cancel()
                    raise Overloaded
            return await future
        finally:
            self._pending -= 1
            self._metrics.in_flight.dec()

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)


def _outcome(decision: Decision) -> str:
    return (
        "patched" if decision.patched else "denied" if decision.denied else "skipped" if decision.skipped else "allowed"
    )


def create_app(
    config: WebhookConfig | None = None,
    metrics: Metrics | None = None,
    limits: Limits | None = None,
    pool: ReviewPool | None = None,
) -> Starlette:
    """Build the ASGI app; `metrics` and `pool` may be shared with the server that runs it."""
    config = config or WebhookConfig()
    metrics = metrics or Metrics()
    limits = limits or Limits()
    pool = pool or ReviewPool(limits.review_workers, limits.review_queue, metrics, limits.queue_wait_seconds)
    ready = bool(all_rules())  # rules register at import: ready once they are loaded
    max_body = limits.max_body_bytes

    def too_large(endpoint: str, start: float) -> Response:
        metrics.observe(endpoint, "too_large", time.perf_counter() - start)
        return PlainTextResponse(f"request body over {max_body} bytes", status_code=413)

    async def handle(request: Request, mode: Mode) -> Response:
        start = time.perf_counter()
        arrived = time.monotonic()  # the review's budgets run from here: the API server's clock is already running
        endpoint = f"/{mode}"
        length = request.headers.get("content-length")
        if length is not None and length.isdigit() and int(length) > max_body:
            return too_large(endpoint, start)
        chunks: list[bytes] = []
        size = 0
        try:
            async for chunk in request.stream():  # capped even without a Content-Length header
                size += len(chunk)
                if size > max_body:
                    return too_large(endpoint, start)
                chunks.append(chunk)
        except ClientDisconnect:  # the client left or the body timeout closed the connection
            metrics.observe(endpoint, "bad_request", time.perf_counter() - start)
            return PlainTextResponse("client disconnected", status_code=400)
        body = b"".join(chunks)
        del chunks
        deadline = Deadline.after(limits.deadline_seconds, arrived)
        try:
            decision = await pool.run(
                lambda: review(body, mode, config, deadline), wait_until=arrived + limits.queue_wait_seconds
            )
        except Overloaded:
            metrics.observe(endpoint, "overloaded", time.perf_counter() - start)
            return PlainTextResponse("too many reviews in progress", status_code=503, headers={"Retry-After": "1"})
        except MalformedReview as err:
            metrics.observe(endpoint, "bad_request", time.perf_counter() - start)
            return PlainTextResponse(f"malformed AdmissionReview: {err.message}", status_code=400)
        except Exception as err:  # the server must answer, never crash
            metrics.observe(endpoint, "error", time.perf_counter() - start)
            return PlainTextResponse(f"internal error: {type(err).__name__}", status_code=500)
        metrics.observe(
            endpoint,
            _outcome(decision),
            time.perf_counter() - start,
            patch_ops=len(decision.patch),
            patched_rules=decision.rules if decision.patched else (),
            denied_rules=decision.rules if decision.denied else (),
            unfinished=decision.unfinished,
        )
        return JSONResponse(decision.response)

    async def mutate(request: Request) -> Response:
        return await handle(request, "mutate")

    async def validate(request: Request) -> Response:
        return await handle(request, "validate")

    async def healthz(request: Request) -> Response:
        return PlainTextResponse("ok")

    async def readyz(request: Request) -> Response:
        return PlainTextResponse("ok" if ready else "rules not loaded", status_code=200 if ready else 503)

    async def metrics_endpoint(request: Request) -> Response:
        return Response(metrics.render(), media_type=CONTENT_TYPE)

    return Starlette(
        routes=[
            Route("/mutate", mutate, methods=["POST"]),
            Route("/validate", validate, methods=["POST"]),
            Route("/healthz", healthz, methods=["GET"]),
            Route("/readyz", readyz, methods=["GET"]),
            Route("/metrics", metrics_endpoint, methods=["GET"]),
        ]
    )
