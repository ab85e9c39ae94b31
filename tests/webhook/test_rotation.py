"""Certificate rotation under load over loopback TLS: no failed request, no half-written pair served.

cert-manager renews the Secret and the kubelet updates the mounted files; `webhook serve` must
serve the new pair to new connections within seconds while open connections finish.
"""

from __future__ import annotations

import os
import socket
import ssl
import threading
import time
from collections import Counter
from pathlib import Path

import httpx
from cryptography import x509

from kubegpu.webhook.limits import Limits
from tests.webhook.certs import issue_leaf, make_certs
from tests.webhook.running import running_server

REVIEWS = Path(__file__).parent / "reviews"
LIMITS = Limits(reload_interval=0.1)


def _write(path: Path, data: bytes) -> None:
    """Replace a file atomically, as the kubelet swaps a Secret volume's files."""
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _served_serial(url: str, ca: Path) -> int:
    context = ssl.create_default_context(cafile=str(ca))
    host, port = url.removeprefix("https://").split(":")
    with (
        socket.create_connection((host, int(port)), timeout=10) as raw,
        context.wrap_socket(raw, server_hostname=host) as sock,
    ):
        der = sock.getpeercert(binary_form=True)
    assert der is not None
    return x509.load_der_x509_certificate(der).serial_number


def _wait_for_serial(url: str, ca: Path, serial: int, seconds: float) -> float:
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        if _served_serial(url, ca) == serial:
            return time.monotonic() - start
        time.sleep(0.05)
    raise AssertionError(f"the new certificate was not served within {seconds}s")


def test_rotation_under_load_loses_no_request(tmp_path: Path) -> None:
    ca, cert, key = make_certs(tmp_path)
    body = (REVIEWS / "gpu-request-no-limit.json").read_bytes()
    results: Counter[str] = Counter()
    stop = threading.Event()
    lock = threading.Lock()

    def load(fresh_connections: bool) -> None:
        context = ssl.create_default_context(cafile=str(ca))
        client = httpx.Client(base_url=url, verify=context, timeout=10)
        try:
            while not stop.is_set():
                if fresh_connections:  # a new TLS handshake for every request
                    client.close()
                    client = httpx.Client(base_url=url, verify=context, timeout=10)
                try:
                    ok = client.post("/mutate", content=body).status_code == 200
                except httpx.HTTPError:
                    ok = False
                with lock:
                    results["ok" if ok else "failed"] += 1
        finally:
            client.close()

    with running_server(cert, key, LIMITS) as (url, server):
        first = x509.load_pem_x509_certificate(cert.read_bytes()).serial_number
        assert _served_serial(url, ca) == first
        threads = [
            threading.Thread(target=load, args=(fresh,), daemon=True) for fresh in (True, True, False)
        ]  # the keep-alive client spans the rotation
        for thread in threads:
            thread.start()
        try:
            time.sleep(0.5)
            # 1) half-written: the new certificate is there, its key is not yet
            new_cert, new_key = issue_leaf(tmp_path)
            _write(cert, new_cert)
            time.sleep(0.6)
            assert _served_serial(url, ca) == first  # the mismatched pair was never loaded
            assert server.metrics.reloads.labels("failure")._value.get() == 1
            # 2) the key follows: new connections get the new certificate within seconds
            _write(key, new_key)
            second = x509.load_pem_x509_certificate(new_cert).serial_number
            assert _wait_for_serial(url, ca, second, 5) < 5
            # 3) both files replaced at once (a Secret volume's atomic swap), several times
            for _ in range(3):
                new_cert, new_key = issue_leaf(tmp_path)
                _write(key, new_key)
                _write(cert, new_cert)
                serial = x509.load_pem_x509_certificate(new_cert).serial_number
                _wait_for_serial(url, ca, serial, 5)
            time.sleep(0.5)
        finally:
            stop.set()
            for thread in threads:
                thread.join(timeout=20)
        assert server.metrics.reloads.labels("success")._value.get() == 4
    assert results["failed"] == 0, results
    assert results["ok"] > 20
