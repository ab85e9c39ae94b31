"""The webhook under hostile clients on loopback: every phase of a connection has a deadline,
connections are capped below the file limit, bodies are bounded and reviews never block /healthz."""

from __future__ import annotations

import asyncio
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from kubegpu.errors import InputError
from kubegpu.webhook.app import Overloaded, ReviewPool, create_app
from kubegpu.webhook.limits import FILES_RESERVED, Limits, memory_budget, memory_limit_quantity
from kubegpu.webhook.metrics import Metrics
from tests.webhook.certs import make_certs
from tests.webhook.running import running_server

REVIEWS = Path(__file__).parent / "reviews"
FAST = Limits(handshake_timeout=0.5, header_timeout=0.5, body_timeout=0.8, keep_alive_timeout=1, max_connections=4)


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    return make_certs(tmp_path_factory.mktemp("tls"))


@pytest.fixture(scope="module")
def fast_server(tls: tuple[Path, Path, Path]) -> Iterator[tuple[str, object]]:
    _, cert, key = tls
    with running_server(cert, key, FAST) as running:
        yield running


def _port(url: str) -> int:
    return int(url.rsplit(":", 1)[1])


def _tls_socket(url: str, ca: Path) -> ssl.SSLSocket:
    context = ssl.create_default_context(cafile=str(ca))
    raw = socket.create_connection(("127.0.0.1", _port(url)), timeout=10)
    return context.wrap_socket(raw, server_hostname="127.0.0.1")


def _closed_within(sock: socket.socket, seconds: float) -> float:
    """Seconds until the server closes the connection; fails if it stays open longer."""
    start = time.monotonic()
    sock.settimeout(seconds)
    try:
        while sock.recv(4096):
            pass
    except (ConnectionError, ssl.SSLError):
        pass
    except TimeoutError:
        pytest.fail(f"the server kept the connection open for {seconds}s")
    return time.monotonic() - start


def _eventually(check: Callable[[], bool], seconds: float = 5) -> bool:
    """The server counts a close just after the client sees it: wait for the count."""
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def _closed(server: object, reason: str) -> float:
    metrics: Metrics = server.metrics  # type: ignore[attr-defined]
    return metrics.closed.labels(reason)._value.get()


def test_silent_tcp_client_is_closed_after_the_handshake_timeout(fast_server: tuple[str, object]) -> None:
    url, server = fast_server
    before = _closed(server, "handshake_timeout")
    with socket.create_connection(("127.0.0.1", _port(url)), timeout=10) as raw:
        assert _closed_within(raw, 5) >= 0.3
    assert _eventually(lambda: _closed(server, "handshake_timeout") == before + 1)


def test_idle_tls_client_is_closed_after_the_header_timeout(
    fast_server: tuple[str, object], tls: tuple[Path, Path, Path]
) -> None:
    url, server = fast_server
    with _tls_socket(url, tls[0]) as sock:
        assert _closed_within(sock, 5) >= 0.3
    assert _eventually(lambda: _closed(server, "header_timeout") >= 1)


def test_trickled_headers_are_cut_off(fast_server: tuple[str, object], tls: tuple[Path, Path, Path]) -> None:
    url, _ = fast_server
    with _tls_socket(url, tls[0]) as sock:
        start = time.monotonic()
        head = b"POST /mutate HTTP/1.1\r\nHost: x\r\n" + b"X-Slow: " + b"a" * 200
        with pytest.raises((ConnectionError, ssl.SSLError, BrokenPipeError)):
            for byte in head:  # one byte every 20 ms: the head never completes in time
                sock.sendall(bytes([byte]))
                time.sleep(0.02)
                if time.monotonic() - start > 5:
                    pytest.fail("trickled headers kept the connection open")
            sock.settimeout(5)
            if not sock.recv(1):
                raise ConnectionResetError
        assert time.monotonic() - start < 3


def test_trickled_body_is_cut_off(fast_server: tuple[str, object], tls: tuple[Path, Path, Path]) -> None:
    url, server = fast_server
    before = _closed(server, "body_timeout")
    with _tls_socket(url, tls[0]) as sock:
        sock.sendall(b"POST /mutate HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{")
        assert _closed_within(sock, 5) >= 0.5
    assert _eventually(lambda: _closed(server, "body_timeout") == before + 1)


def test_keep_alive_connection_is_closed_when_idle(
    fast_server: tuple[str, object], tls: tuple[Path, Path, Path]
) -> None:
    url, _ = fast_server
    with _tls_socket(url, tls[0]) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        sock.settimeout(5)
        assert sock.recv(4096).startswith(b"HTTP/1.1 200")
        assert _closed_within(sock, 5) >= 0.5  # keep-alive timeout 1 s


def _from(address: str, url: str) -> socket.socket:
    return socket.create_connection(("127.0.0.1", _port(url)), timeout=10, source_address=(address, 0))


def test_connection_caps_keep_room_for_every_client(tls: tuple[Path, Path, Path]) -> None:
    """A flood from one address gets half the slots; at the cap a new client evicts the flooder's
    longest-idle connection, so the API server and the kubelet's probes still get in."""
    ca, cert, key = tls
    with running_server(cert, key, Limits(max_connections=4)) as (url, server):
        assert (server.connection_cap, server.client_cap) == (4, 2)
        flood = [_from("127.0.0.2", url) for _ in range(10)]
        other = [_from("127.0.0.3", url) for _ in range(2)]
        try:
            deadline = time.monotonic() + 10
            while server.open_connections() < 4 and time.monotonic() < deadline:
                time.sleep(0.01)
            time.sleep(0.2)
            assert server.open_connections() == 4
            assert _closed(server, "refused") == 8 and _closed(server, "evicted") == 0
            assert sum(_is_closed(sock) for sock in flood) == 8
            context = ssl.create_default_context(cafile=str(ca))
            with httpx.Client(base_url=url, verify=context) as client:
                assert client.get("/healthz").text == "ok"  # a flooder's idle connection made room
            assert _closed(server, "evicted") == 1 and server.open_connections() <= 4
            assert _is_closed(flood[0])  # the longest-idle of the first client to reach the cap
            assert not any(_is_closed(sock) for sock in other)
            assert all(
                slot.sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) for slot in list(server._slots)
            )  # no 40 ms wait for a delayed ACK
        finally:
            for sock in flood + other:
                sock.close()


def _is_closed(sock: socket.socket) -> bool:
    sock.settimeout(0.5)
    try:
        return sock.recv(1) == b""
    except ConnectionError:
        return True
    except TimeoutError:
        return False


def test_connection_cap_stays_below_the_file_limit() -> None:
    assert Limits(max_connections=10_000).connection_cap(1024) == 1024 - FILES_RESERVED
    assert Limits(max_connections=100).connection_cap(1 << 20) == 100
    with pytest.raises(InputError, match="max-body-bytes"):
        Limits(max_body_bytes=10 * 1024 * 1024)


def test_memory_budget_grows_with_every_limit() -> None:
    base = memory_budget(Limits())
    assert memory_budget(Limits(max_connections=512)) > base
    assert memory_budget(Limits(max_body_bytes=1024 * 1024)) > base
    assert memory_budget(Limits(review_workers=4)) > base
    quantity = memory_limit_quantity(Limits())
    assert quantity.endswith("Mi") and int(quantity[:-2]) % 32 == 0
    assert int(quantity[:-2]) * 1024 * 1024 >= base


def test_a_review_that_waited_too_long_for_a_worker_is_not_run() -> None:
    async def scenario() -> None:
        pool = ReviewPool(workers=1, queue=4, metrics=Metrics(), max_wait=0.2)
        gate = threading.Event()
        ran: list[int] = []
        busy = asyncio.ensure_future(pool.run(lambda: gate.wait(10)))
        await asyncio.sleep(0.05)
        late = asyncio.ensure_future(pool.run(lambda: ran.append(1)))
        await asyncio.sleep(0.4)  # the worker is still busy: the queued review is now too old
        gate.set()
        try:
            assert await busy is True
            with pytest.raises(Overloaded):
                await late
            assert ran == []
            await pool.run(lambda: ran.append(2))  # a fresh one runs
            assert ran == [2]
        finally:
            pool.close()

    asyncio.run(scenario())


def test_reviews_wait_in_a_bounded_pool_and_health_checks_still_answer() -> None:
    async def scenario() -> None:
        metrics = Metrics()
        pool = ReviewPool(workers=1, queue=0, metrics=metrics)
        gate = threading.Event()
        app = create_app(metrics=metrics, pool=pool)
        busy = asyncio.ensure_future(pool.run(lambda: gate.wait(10)))
        await asyncio.sleep(0.05)
        try:
            with pytest.raises(Overloaded):
                await pool.run(lambda: None)
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
                body = (REVIEWS / "gpu-request-no-limit.json").read_bytes()
                full = await client.post("/mutate", content=body)
                assert full.status_code == 503 and full.headers["retry-after"] == "1"
                assert (await client.get("/healthz")).text == "ok"  # the loop is free
                gate.set()
                assert await busy is True
                assert (await client.post("/mutate", content=body)).status_code == 200
        finally:
            gate.set()
            pool.close()
        families = {f.name: f for f in text_string_to_metric_families(metrics.render().decode())}
        outcomes = {
            s.labels["outcome"]: s.value
            for s in families["kubegpu_webhook_requests"].samples
            if s.name.endswith("_total")
        }
        assert outcomes["overloaded"] == 1 and outcomes["patched"] == 1

    asyncio.run(scenario())


def test_stop_lets_a_request_in_progress_finish(tls: tuple[Path, Path, Path]) -> None:
    ca, cert, key = tls
    body = (REVIEWS / "gpu-request-no-limit.json").read_bytes()
    with running_server(cert, key) as (url, server):
        with _tls_socket(url, ca) as sock:
            sock.sendall(b"POST /mutate HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(body) + body[:100])
            time.sleep(0.2)
            server.stop()  # SIGTERM: no new connections, but this request is answered
            time.sleep(0.2)
            sock.sendall(body[100:])
            sock.settimeout(10)
            answer = b""
            while chunk := sock.recv(65536):
                answer += chunk
            assert answer.startswith(b"HTTP/1.1 200") and b'"patchType":"JSONPatch"' in answer
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", _port(url)), timeout=2).close()
