"""Run the webhook server in a thread on a free loopback port, for tests that need the real thing."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from kubegpu.webhook import WebhookConfig
from kubegpu.webhook.limits import Limits
from kubegpu.webhook.serve import build_server
from kubegpu.webhook.server import WebhookServer


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def running_server(
    cert: Path, key: Path, limits: Limits | None = None, config: WebhookConfig | None = None
) -> Iterator[tuple[str, WebhookServer]]:
    """Yield (base URL, server); stop the server and join its thread afterwards."""
    port = free_port()
    server = build_server(config or WebhookConfig(), cert, key, host="127.0.0.1", port=port, limits=limits)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    if not server.started.wait(20):
        raise RuntimeError("the webhook server did not start")
    try:
        yield f"https://127.0.0.1:{port}", server
    finally:
        server.stop()
        thread.join(timeout=20)
        if thread.is_alive():
            raise RuntimeError("the webhook server did not stop")
