"""The webhook over real HTTPS on 127.0.0.1: uvicorn in a thread, a test CA, an httpx client."""

from __future__ import annotations

import base64
import json
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import uvicorn

from kubegpu.errors import InputError
from kubegpu.webhook import WebhookConfig
from kubegpu.webhook.serve import check_tls, uvicorn_config
from tests.webhook.certs import make_certs

REVIEWS = Path(__file__).parent / "reviews"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    folder = tmp_path_factory.mktemp("tls")
    ca, cert, key = make_certs(folder)
    port = _free_port()
    srv = uvicorn.Server(uvicorn_config(WebhookConfig(), cert, key, host="127.0.0.1", port=port))
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not srv.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            pytest.fail("uvicorn did not start")
        time.sleep(0.02)
    try:
        yield f"https://127.0.0.1:{port}", ca
    finally:
        srv.should_exit = True
        thread.join(timeout=10)


def test_https_round_trip(server: tuple[str, Path]) -> None:
    url, ca = server
    with httpx.Client(base_url=url, verify=ssl.create_default_context(cafile=str(ca))) as client:
        assert client.get("/healthz").text == "ok"
        assert client.get("/readyz").status_code == 200
        body = (REVIEWS / "gpu-request-no-limit.json").read_bytes()
        answer = client.post("/mutate", content=body,
                             headers={"Content-Type": "application/json"})
        assert answer.status_code == 200
        inner = answer.json()["response"]
        assert inner["uid"] == "0b9e1c6a-0001" and inner["patchType"] == "JSONPatch"
        ops = json.loads(base64.b64decode(inner["patch"]))
        assert {op["path"] for op in ops} >= {"/spec/volumes"}
        denied = client.post("/validate", content=body).json()["response"]
        assert denied["allowed"] is False and "KG104" in denied["status"]["message"]
        untouched = client.post("/mutate", content=(REVIEWS / "cpu-only.json").read_bytes())
        assert "patch" not in untouched.json()["response"]
        # malformed bodies: 400 with a reason, and the server keeps serving
        for bad in (b"{", b"[]", b'{"kind": "AdmissionReview"}', b""):
            reply = client.post("/mutate", content=bad)
            assert reply.status_code == 400 and reply.text.startswith("malformed AdmissionReview")
        assert client.get("/mutate").status_code == 405
        # over 3 MiB, announced or streamed (chunked, no Content-Length): 413, not read into memory
        huge = b"x" * (3 * 1024 * 1024 + 1)
        assert client.post("/validate", content=huge).status_code == 413

        def chunks() -> Iterator[bytes]:
            for _ in range(4):
                yield b"y" * (1024 * 1024)

        assert client.post("/validate", content=chunks()).status_code == 413
        assert client.get("/healthz").text == "ok"
        metrics = client.get("/metrics")
        assert metrics.headers["content-type"].startswith("text/plain; version=0.0.4")
        text = metrics.text
        assert 'kubegpu_webhook_requests_total{endpoint="/mutate",outcome="patched"} 1' in text
        assert 'kubegpu_webhook_requests_total{endpoint="/mutate",outcome="bad_request"} 4' in text
        assert 'kubegpu_webhook_requests_total{endpoint="/mutate",outcome="skipped"} 1' in text
        assert "kubegpu_webhook_denials_total 1" in text
        assert "kubegpu_webhook_patches_total 1" in text
        assert ('kubegpu_webhook_request_duration_seconds_count{endpoint="/mutate"} 6'
                in text)
        assert 'le="+Inf"} 6' in text


def test_plain_http_is_refused(server: tuple[str, Path]) -> None:
    url, _ = server
    client = httpx.Client(base_url=url.replace("https", "http"))
    with client, pytest.raises(httpx.HTTPError):
        client.get("/healthz")


def test_untrusted_client_fails_verification(server: tuple[str, Path]) -> None:
    url, _ = server
    client = httpx.Client(base_url=url)  # the system trust store: our CA is not in it
    with client, pytest.raises(httpx.ConnectError):
        client.get("/healthz")


def test_bad_tls_files_are_one_clear_error(tmp_path: Path) -> None:
    ca, _cert, key = make_certs(tmp_path)
    with pytest.raises(InputError, match="does not exist"):
        check_tls(tmp_path / "missing.crt", key)
    with pytest.raises(InputError, match="do not load together"):
        check_tls(ca, key)  # the CA certificate does not match the serving key
