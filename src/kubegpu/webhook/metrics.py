"""The webhook's Prometheus metrics, written by prometheus_client into a registry of their own.

One Metrics object per server (no process-wide registry), so tests and embedders can run several.
Names follow the Prometheus conventions: a `kubegpu_webhook_` prefix, base units, `_total` counters.
"""

from __future__ import annotations

from collections.abc import Iterable

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4

LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)
CONTENT_TYPE = CONTENT_TYPE_PLAIN_0_0_4
OUTCOMES = ("allowed", "patched", "denied", "skipped", "bad_request", "too_large", "overloaded", "error")
CLOSE_REASONS = ("handshake_failed", "handshake_timeout", "header_timeout", "body_timeout", "evicted", "refused")
ENDPOINTS = ("/mutate", "/validate")
UNFINISHED_REASONS = ("deadline", "containers")


class Metrics:
    """Requests, latency, patches and denials per rule, load, connections and certificate reloads."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        prefix = "kubegpu_webhook_"
        self.requests = Counter(
            f"{prefix}requests",
            "Requests answered, by endpoint and outcome.",
            ["endpoint", "outcome"],
            registry=self.registry,
        )
        self.latency = Histogram(
            f"{prefix}request_duration_seconds",
            "Time from the request head to the answer, by endpoint and outcome.",
            ["endpoint", "outcome"],
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.patches = Counter(
            f"{prefix}patches", "Safe fixes applied to pods, by rule.", ["rule"], registry=self.registry
        )
        self.patch_operations = Counter(
            f"{prefix}patch_operations", "JSONPatch operations sent.", registry=self.registry
        )
        self.denials = Counter(
            f"{prefix}denials", "Pods denied by /validate, by rule that denied.", ["rule"], registry=self.registry
        )
        self.in_flight = Gauge(
            f"{prefix}reviews_in_flight", "Reviews running or waiting for a worker.", registry=self.registry
        )
        self.connections = Gauge(
            f"{prefix}open_connections", "Open client connections, TLS handshakes included.", registry=self.registry
        )
        self.closed = Counter(
            f"{prefix}connections_closed",
            "Connections closed by the server's limits, by reason.",
            ["reason"],
            registry=self.registry,
        )
        self.reloads = Counter(
            f"{prefix}certificate_reloads",
            "Rotated serving certificates, by result (failure: the files did not load together).",
            ["result"],
            registry=self.registry,
        )
        self.unfinished = Counter(
            f"{prefix}unfinished_reviews",
            "Pods answered by the failure policy without a finished review, by endpoint and reason "
            "(deadline: the review ran out of time; containers: over the container limit).",
            ["endpoint", "reason"],
            registry=self.registry,
        )
        for reason in CLOSE_REASONS:
            self.closed.labels(reason)
        for endpoint in ENDPOINTS:
            for reason in UNFINISHED_REASONS:
                self.unfinished.labels(endpoint, reason)
        for result in ("success", "failure"):
            self.reloads.labels(result)

    def observe(
        self,
        endpoint: str,
        outcome: str,
        seconds: float,
        patch_ops: int = 0,
        patched_rules: Iterable[str] = (),
        denied_rules: Iterable[str] = (),
        unfinished: str = "",
    ) -> None:
        """Record one answered request; outcome is one of OUTCOMES, `unfinished` one of UNFINISHED_REASONS or ""."""
        self.requests.labels(endpoint, outcome).inc()
        if unfinished:
            self.unfinished.labels(endpoint, unfinished).inc()
        self.latency.labels(endpoint, outcome).observe(seconds)
        if patch_ops:
            self.patch_operations.inc(patch_ops)
        for rule in patched_rules:
            self.patches.labels(rule).inc()
        for rule in dict.fromkeys(denied_rules):
            self.denials.labels(rule).inc()

    def render(self) -> bytes:
        """The text exposition for GET /metrics."""
        return generate_latest(self.registry)
