"""Serve the webhook over HTTPS with uvicorn (the API server only calls webhooks over TLS).

Certificate problems are reported as one InputError naming the file, before the server starts.
"""

from __future__ import annotations

import gc
import ssl
from pathlib import Path

import uvicorn

from kubegpu.errors import InputError
from kubegpu.webhook.app import create_app
from kubegpu.webhook.review import WebhookConfig


def check_tls(cert: Path, key: Path) -> None:
    """Load the pair once so a wrong path or mismatched key is a clear error, not a traceback."""
    for path in (cert, key):
        if not path.is_file():
            raise InputError("TLS file does not exist", file=str(path))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    try:
        context.load_cert_chain(str(cert), str(key))
    except ssl.SSLError as err:
        raise InputError(f"certificate and key do not load together: {err.reason or err}",
                         file=str(cert)) from err


def uvicorn_config(config: WebhookConfig, cert: Path, key: Path, host: str = "0.0.0.0",
                   port: int = 8443, log_level: str = "warning") -> uvicorn.Config:
    """The uvicorn configuration for the webhook app (also used by tests to run it in a thread)."""
    check_tls(cert, key)
    return uvicorn.Config(create_app(config), host=host, port=port, ssl_certfile=str(cert),
                          ssl_keyfile=str(key), log_level=log_level, access_log=False,
                          lifespan="off")


def serve(config: WebhookConfig, cert: Path, key: Path, host: str = "0.0.0.0",
          port: int = 8443) -> None:
    """Run until interrupted (SIGINT/SIGTERM stop uvicorn gracefully).

    Everything loaded at start-up (rules, schemas, the app) is frozen out of the garbage collector's
    reach, and full collections are rare: a review's cycles die young and are freed by the cheap
    young collections, while full collections over the heap were the p99 tail (22 ms -> 5 ms).
    """
    server = uvicorn.Server(uvicorn_config(config, cert, key, host, port))
    gc.collect()
    gc.freeze()
    gc.set_threshold(700, 10, 1000)
    server.run()
