"""`kubegpu webhook serve` as users run it: a real process, HTTPS on 127.0.0.1, then SIGTERM."""

from __future__ import annotations

import signal
import socket
import ssl
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.webhook.certs import make_certs

REVIEWS = Path(__file__).parent / "reviews"


def _serve_argv(cert: Path, key: Path, port: int, *extra: str) -> list[str]:
    """The `kubegpu webhook serve` command line on loopback with the given key pair and port."""
    return [
        sys.executable,
        "-m",
        "kubegpu.cli.main",
        "webhook",
        "serve",
        "--tls-cert",
        str(cert),
        "--tls-key",
        str(key),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        *extra,
    ]


def test_serve_command_end_to_end(tmp_path: Path) -> None:
    ca, cert, key = make_certs(tmp_path)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    cmd = _serve_argv(cert, key, port, "--exclude-namespace", "ml", "--deny-severity", "warning")
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    context = ssl.create_default_context(cafile=str(ca))
    try:
        deadline = time.monotonic() + 60
        with httpx.Client(base_url=f"https://127.0.0.1:{port}", verify=context) as client:
            while True:
                assert proc.poll() is None, "webhook serve exited early"
                try:
                    if client.get("/readyz").status_code == 200:
                        break
                except httpx.TransportError:
                    if time.monotonic() > deadline:
                        pytest.fail("webhook serve did not become ready")
                    time.sleep(0.1)
            # --exclude-namespace ml: the GPU pod in namespace ml is left alone
            body = (REVIEWS / "gpu-request-no-limit.json").read_bytes()
            assert "patch" not in client.post("/mutate", content=body).json()["response"]
            assert client.post("/validate", content=body).json()["response"]["allowed"] is True
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=15)
    # uvicorn shuts down gracefully, then re-raises the captured SIGTERM (exit status -15)
    assert proc.returncode in (0, -signal.SIGTERM), stderr.decode()
    assert b"Traceback" not in stderr


def test_serve_with_bad_certificate_exits_2(tmp_path: Path) -> None:
    ca, _cert, key = make_certs(tmp_path)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "kubegpu.cli.main",
            "webhook",
            "serve",
            "--tls-cert",
            str(ca),
            "--tls-key",
            str(key),
            "--port",
            "1",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert result.stderr.startswith("kubegpu: error: ") and "Traceback" not in result.stderr


def test_serve_with_bad_limit_exits_2(tmp_path: Path) -> None:
    _ca, cert, key = make_certs(tmp_path)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "kubegpu.cli.main",
            "webhook",
            "serve",
            "--tls-cert",
            str(cert),
            "--tls-key",
            str(key),
            "--port",
            "1",
            "--max-body-bytes",
            "10",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2 and "max-body-bytes must be between" in result.stderr
    assert "Traceback" not in result.stderr


def test_serve_on_a_busy_port_exits_2(tmp_path: Path) -> None:
    _ca, cert, key = make_certs(tmp_path)
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        result = subprocess.run(
            _serve_argv(cert, key, port),
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert result.returncode == 2 and f"cannot listen on 127.0.0.1:{port}" in result.stderr
    assert "Traceback" not in result.stderr
