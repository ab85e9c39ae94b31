"""`audit --cluster` against a hostile API server over real HTTPS on loopback: one that trickles its
answer a byte at a time (in the head or in the body), one whose lists never end, and one whose answer
never ends. Each read stops at its configured deadline or cap with one clear line and exit 2, never a
traceback or a hang; a kubeconfig that turns TLS verification off is warned about."""

from __future__ import annotations

import functools
import json
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from pytest_httpserver import HTTPServer
from typer.testing import CliRunner
from werkzeug import Request, Response

from kubegpu.cli.main import app
from kubegpu.errors import InputError
from kubegpu.live import client
from kubegpu.live.client import LIST_CHUNK, ClusterOptions, read_cluster
from tests.live.conftest import CLUSTER, https_api, recorded, serve_recorded, tls_kubeconfig
from tests.webhook.certs import make_certs

TRICKLE_BYTES = 300  # a trickling answer ends by itself after this many bytes (60 s): a test never waits longer


@pytest.fixture
def api(tmp_path: Path) -> Iterator[tuple[HTTPServer, Path]]:
    """The HTTPS API server with a kubeconfig that trusts it; register hostile answers before the recorded ones."""
    with https_api(tmp_path) as (server, ca):
        kubeconfig = tls_kubeconfig(tmp_path / "kubeconfig", server.url_for("/").rstrip("/"), ca.read_bytes())
        yield server, kubeconfig


def audit(kubeconfig: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["audit", "--cluster", "--kubeconfig", str(kubeconfig), "-o", "json", *args])
    return result.exit_code, result.stdout, result.stderr


def one_line_error(code: int, stderr: str, *expected: str) -> None:
    assert code == 2, stderr
    assert stderr.startswith("kubegpu: error: ") and stderr.count("\n") == 1, stderr
    assert "Traceback" not in stderr and "internal error" not in stderr
    for part in expected:
        assert part in stderr, stderr


def trickle(first: bytes) -> Response:
    """An answer whose body comes one byte every 0.2 s (what a server under an attacker's control can do)."""

    def body() -> Iterator[bytes]:
        for byte in (first * TRICKLE_BYTES)[:TRICKLE_BYTES]:
            yield bytes([byte])
            time.sleep(0.2)

    return Response(body(), status=200, content_type="application/json")


def test_a_body_trickled_a_byte_at_a_time_ends_at_the_request_deadline(api: tuple[HTTPServer, Path]) -> None:
    server, kubeconfig = api
    server.expect_request("/api/v1/nodes").respond_with_handler(lambda _: trickle(b'{"kind": "NodeList", '))
    code, _, stderr = audit(kubeconfig, "--timeout", "1")
    one_line_error(code, stderr, "did not answer GET /api/v1/nodes within 1 s (--timeout, the whole request)")


@contextmanager
def trickling_head_server(folder: Path) -> Iterator[tuple[str, Path]]:
    """A TLS server that answers every request with its status line and headers one byte every 0.2 s."""
    ca, cert, key = make_certs(folder)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(str(cert), str(key))
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    stop = threading.Event()

    def serve_one(raw: socket.socket) -> None:
        head = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Padding: " + b"a" * 1000)[:TRICKLE_BYTES]
        with raw:
            try:
                with context.wrap_socket(raw, server_side=True) as conn:
                    conn.recv(65536)
                    for byte in head:
                        if stop.is_set():
                            return
                        conn.sendall(bytes([byte]))
                        time.sleep(0.2)
            except OSError:
                return

    def accept() -> None:
        while not stop.is_set():
            try:
                raw, _ = listener.accept()
            except TimeoutError:
                continue
            threading.Thread(target=serve_one, args=(raw,), daemon=True).start()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{listener.getsockname()[1]}", ca
    finally:
        stop.set()
        thread.join(5)
        listener.close()


def test_a_head_trickled_a_byte_at_a_time_ends_at_the_request_deadline(tmp_path: Path) -> None:
    with trickling_head_server(tmp_path) as (url, ca):
        kubeconfig = tls_kubeconfig(tmp_path / "kubeconfig", url, ca.read_bytes())
        code, _, stderr = audit(kubeconfig, "--timeout", "1")
    one_line_error(code, stderr, "did not answer GET /api/v1/nodes within 1 s")


class EndlessPages:
    """Node list pages that never end: each carries a new continue token (after `delay` seconds)."""

    def __init__(self, delay: float = 0.0) -> None:
        self.delay = delay
        self.served = 0
        self.limits: set[str] = set()

    def __call__(self, request: Request) -> Response:
        self.served += 1
        self.limits.add(request.args.get("limit", ""))
        time.sleep(self.delay)
        page = {"kind": "NodeList", "metadata": {"continue": f"token-{self.served}"}, "items": []}
        return Response(json.dumps(page), content_type="application/json")


def test_the_whole_read_ends_at_its_deadline(api: tuple[HTTPServer, Path]) -> None:
    """Every answer comes in time, but they never stop coming: the run's deadline ends it."""
    server, kubeconfig = api
    server.expect_request("/api/v1/nodes").respond_with_handler(EndlessPages(delay=0.2))
    code, _, stderr = audit(kubeconfig, "--timeout", "5", "--deadline", "1")
    one_line_error(code, stderr, "did not finish within 1 s (--deadline)")


def test_an_endless_continue_token_stops_at_the_page_cap(api: tuple[HTTPServer, Path]) -> None:
    server, kubeconfig = api
    pages = EndlessPages()
    server.expect_request("/api/v1/nodes").respond_with_handler(pages)
    with pytest.raises(InputError, match=r"GET /api/v1/nodes at .* did not end after 20 pages"):
        read_cluster(ClusterOptions(kubeconfig=kubeconfig, max_pages=20))
    assert pages.served == 20 and pages.limits == {str(LIST_CHUNK)}


def test_a_continue_token_given_twice_is_a_loop(api: tuple[HTTPServer, Path]) -> None:
    server, kubeconfig = api
    page = {"kind": "NodeList", "metadata": {"continue": "again"}, "items": []}
    server.expect_request("/api/v1/nodes").respond_with_json(page)
    code, _, stderr = audit(kubeconfig)
    one_line_error(code, stderr, "gave a continue token it had given before: a loop")
    assert len([r for r, _ in server.log if r.path == "/api/v1/nodes"]) == 2


def test_a_list_of_too_many_objects_stops(api: tuple[HTTPServer, Path]) -> None:
    server, kubeconfig = api
    serve_recorded(server)
    with pytest.raises(InputError, match="GET /api/v1/pods listed more than 5 objects"):
        read_cluster(ClusterOptions(kubeconfig=kubeconfig, max_objects=5))  # the five nodes pass


def endless(chunk: bytes) -> Response:
    """An answer that never ends (bounded here at 64 MiB so a broken test cannot run for ever)."""

    def body() -> Iterator[bytes]:
        yield b'{"kind": "NodeList", "items": ['
        for _ in range(64 * 1024 * 1024 // len(chunk)):
            yield chunk

    return Response(body(), status=200, content_type="application/json")


def test_an_answer_over_the_byte_cap_stops_being_read(
    api: tuple[HTTPServer, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    server, kubeconfig = api
    node = json.dumps(recorded("nodes.json")["items"][0]).encode() + b","  # type: ignore[index]
    server.expect_request("/api/v1/nodes").respond_with_handler(lambda _: endless(node * 32))
    with pytest.raises(InputError, match=r"sent more than 1 MiB for GET /api/v1/nodes"):
        read_cluster(ClusterOptions(kubeconfig=kubeconfig, max_response_bytes=1024 * 1024))
    # the command: the same cap (made small here) ends the read with one line
    monkeypatch.setattr(client, "ClusterOptions", functools.partial(ClusterOptions, max_response_bytes=1024 * 1024))
    code, _, stderr = audit(kubeconfig)
    one_line_error(code, stderr, "sent more than 1 MiB for GET /api/v1/nodes")


def test_all_answers_together_are_capped(api: tuple[HTTPServer, Path]) -> None:
    server, kubeconfig = api
    serve_recorded(server)
    size = (CLUSTER / "nodes.json").stat().st_size
    with pytest.raises(InputError, match=f"sent more than {size} bytes in all"):
        read_cluster(ClusterOptions(kubeconfig=kubeconfig, max_total_bytes=size))


def test_node_names_never_reach_a_request_path_unchecked(api: tuple[HTTPServer, Path]) -> None:
    server, kubeconfig = api
    nodes: dict[str, Any] = recorded("nodes.json")  # type: ignore[assignment]
    nodes["items"][0]["metadata"]["name"] = "../../../api/v1/secrets?x="
    server.expect_request("/api/v1/nodes").respond_with_json(nodes)
    serve_recorded(server)
    snapshot = read_cluster(ClusterOptions(kubeconfig=kubeconfig))
    assert any("(not a valid node name)" in note for note in snapshot.notes)
    assert not any("secrets" in r.path or ".." in r.url for r, _ in server.log)


def test_a_kubeconfig_without_tls_verification_is_warned_about(tmp_path: Path) -> None:
    with https_api(tmp_path) as (server, _):
        serve_recorded(server)
        kubeconfig = tls_kubeconfig(tmp_path / "kubeconfig", server.url_for("/").rstrip("/"), None, insecure=True)
        code, stdout, stderr = audit(kubeconfig)
    assert code == 0, stderr
    assert stderr.startswith("kubegpu: warning: the kubeconfig turns TLS verification off for this cluster")
    assert "insecure-skip-tls-verify: true" in stderr and stderr.count("\n") == 1
    assert any("insecure-skip-tls-verify" in note for note in json.loads(stdout)["notes"])


def test_a_verified_kubeconfig_gives_no_warning(api: tuple[HTTPServer, Path]) -> None:
    server, kubeconfig = api
    serve_recorded(server)
    code, stdout, stderr = audit(kubeconfig)
    assert code == 0 and stderr == ""
    assert json.loads(stdout)["free_gpus"] == 15


@pytest.mark.parametrize("flags", [("--timeout", "0"), ("--deadline", "-1")])
def test_bad_deadlines_are_one_line(api: tuple[HTTPServer, Path], flags: tuple[str, str]) -> None:
    _, kubeconfig = api
    code, _, stderr = audit(kubeconfig, *flags)
    one_line_error(code, stderr, "--timeout must be")
