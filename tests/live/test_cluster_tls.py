"""The audit against an API server that speaks HTTPS, verified with the kubeconfig's CA data."""

from __future__ import annotations

import base64
import ssl
from collections.abc import Iterator
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer

from kubegpu.errors import InputError
from kubegpu.live.audit import audit
from kubegpu.live.client import ClusterOptions, read_cluster
from tests.live.conftest import ROUTES, TOKEN, recorded
from tests.webhook.certs import make_certs


@pytest.fixture
def tls_api(tmp_path: Path) -> Iterator[tuple[HTTPServer, Path]]:
    ca, cert, key = make_certs(tmp_path)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(str(cert), str(key))
    server = HTTPServer(host="127.0.0.1", port=0, ssl_context=context)
    for path, name in ROUTES.items():
        server.expect_request(path, headers={"Authorization": f"Bearer {TOKEN}"}).respond_with_json(recorded(name))
    server.no_handler_status_code = 404
    server.start()
    try:
        yield server, ca
    finally:
        server.clear()
        server.stop()


def _kubeconfig(path: Path, url: str, ca_pem: bytes) -> Path:
    data = base64.b64encode(ca_pem).decode()
    path.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: tls\n"
        f"clusters:\n- name: tls\n  cluster:\n    server: {url}\n"
        f"    certificate-authority-data: {data}\n"
        f"users:\n- name: u\n  user:\n    token: {TOKEN}\n"
        "contexts:\n- name: tls\n  context:\n    cluster: tls\n    user: u\n"
    )
    return path


def test_https_api_server_with_ca_data(tls_api: tuple[HTTPServer, Path], tmp_path: Path) -> None:
    server, ca = tls_api
    url = server.url_for("/").rstrip("/")
    assert url.startswith("https://127.0.0.1:")
    kubeconfig = _kubeconfig(tmp_path / "kubeconfig", url, ca.read_bytes())
    report = audit(read_cluster(ClusterOptions(kubeconfig=kubeconfig)))
    assert (report.free_gpus, report.stranded_gpus) == (15, 8)


def test_wrong_ca_is_refused(tls_api: tuple[HTTPServer, Path], tmp_path: Path) -> None:
    server, _ = tls_api
    other = tmp_path / "other"
    other.mkdir()
    other_ca, _, _ = make_certs(other)
    kubeconfig = _kubeconfig(tmp_path / "kubeconfig", server.url_for("/").rstrip("/"), other_ca.read_bytes())
    with pytest.raises(InputError, match="cannot reach the API server"):
        read_cluster(ClusterOptions(kubeconfig=kubeconfig))
