"""Run the webhook over HTTPS (the API server only calls webhooks over TLS).

Certificate problems are reported as one InputError naming the file, before the server starts;
afterwards a rotated pair is picked up without a restart (see tls.py).
"""

from __future__ import annotations

import gc
from pathlib import Path

from kubegpu.webhook.limits import Limits
from kubegpu.webhook.review import WebhookConfig
from kubegpu.webhook.server import WebhookServer
from kubegpu.webhook.tls import CertificateReloader, check_tls

__all__ = ["build_server", "check_tls", "serve"]


def build_server(
    config: WebhookConfig,
    cert: Path,
    key: Path,
    host: str = "0.0.0.0",
    port: int = 8443,
    limits: Limits | None = None,
    log_level: str = "warning",
) -> WebhookServer:
    """The server, certificate loaded and checked (also used by tests to run it in a thread)."""
    return WebhookServer(
        config, CertificateReloader(cert, key), host=host, port=port, limits=limits, log_level=log_level
    )


def serve(
    config: WebhookConfig, cert: Path, key: Path, host: str = "0.0.0.0", port: int = 8443, limits: Limits | None = None
) -> None:
    """Run until SIGTERM/SIGINT, which finish the requests in progress before exiting.

    Everything loaded at start-up (rules, schemas, the app) is frozen out of the garbage collector's
    reach, so full collections only walk what reviews left behind (they were the p99 tail over the
    whole heap: 22 ms -> 5 ms). The collection thresholds stay at Python's defaults: making full
    collections rarer (700, 10, 1000) let the cyclic garbage of large reviews pile up, and 66
    reviews of 512 KiB took the server from 72 MiB to 1 GiB.
    """
    server = build_server(config, cert, key, host, port, limits)
    gc.collect()
    gc.freeze()
    server.run()
