"""The webhook's HTTP transport: a thin Starlette app around the pure review function.

Routes: POST /mutate, POST /validate, GET /healthz, /readyz, /metrics; bad bodies get 400.
"""

from __future__ import annotations

import time

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from kubegpu.rules import all_rules
from kubegpu.webhook.metrics import CONTENT_TYPE, Metrics
from kubegpu.webhook.review import MalformedReview, Mode, WebhookConfig, review

MAX_BODY_BYTES = 3 * 1024 * 1024  # the API server caps request bodies at 3 MiB


def create_app(config: WebhookConfig | None = None, metrics: Metrics | None = None) -> Starlette:
    """Build the ASGI app; `metrics` may be shared with a caller that wants to read it."""
    config = config or WebhookConfig()
    metrics = metrics or Metrics()
    ready = bool(all_rules())  # rules register at import: ready once they are loaded

    async def handle(request: Request, mode: Mode) -> Response:
        start = time.perf_counter()
        endpoint = f"/{mode}"
        length = request.headers.get("content-length")
        if length is not None and length.isdigit() and int(length) > MAX_BODY_BYTES:
            metrics.observe(endpoint, "bad_request", time.perf_counter() - start)
            return PlainTextResponse("request body too large", status_code=413)
        chunks: list[bytes] = []
        size = 0
        async for chunk in request.stream():  # capped even without a Content-Length header
            size += len(chunk)
            if size > MAX_BODY_BYTES:
                metrics.observe(endpoint, "bad_request", time.perf_counter() - start)
                return PlainTextResponse("request body too large", status_code=413)
            chunks.append(chunk)
        body = b"".join(chunks)
        try:
            decision = review(body, mode, config)
        except MalformedReview as err:
            metrics.observe(endpoint, "bad_request", time.perf_counter() - start)
            return PlainTextResponse(f"malformed AdmissionReview: {err.message}", status_code=400)
        except Exception as err:  # the server must answer, never crash
            metrics.observe(endpoint, "error", time.perf_counter() - start)
            return PlainTextResponse(f"internal error: {type(err).__name__}", status_code=500)
        outcome = ("patched" if decision.patched else "denied" if decision.denied
                   else "skipped" if decision.skipped else "allowed")
        metrics.observe(endpoint, outcome, time.perf_counter() - start,
                        patch_ops=len(decision.patch), denied=decision.denied)
        return JSONResponse(decision.response)

    async def mutate(request: Request) -> Response:
        return await handle(request, "mutate")

    async def validate(request: Request) -> Response:
        return await handle(request, "validate")

    async def healthz(request: Request) -> Response:
        return PlainTextResponse("ok")

    async def readyz(request: Request) -> Response:
        return PlainTextResponse("ok" if ready else "rules not loaded",
                                 status_code=200 if ready else 503)

    async def metrics_endpoint(request: Request) -> Response:
        return Response(metrics.render(), media_type=CONTENT_TYPE)

    return Starlette(routes=[
        Route("/mutate", mutate, methods=["POST"]),
        Route("/validate", validate, methods=["POST"]),
        Route("/healthz", healthz, methods=["GET"]),
        Route("/readyz", readyz, methods=["GET"]),
        Route("/metrics", metrics_endpoint, methods=["GET"]),
    ])
