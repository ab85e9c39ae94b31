"""The audit against an API server that speaks HTTPS, verified with the kubeconfig's CA data."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer

from kubegpu.errors import InputError
from kubegpu.live.audit import audit
from kubegpu.live.client import ClusterOptions, read_cluster
from tests.live.conftest import https_api, serve_recorded, tls_kubeconfig
from tests.webhook.certs import make_certs


@pytest.fixture
def tls_api(tmp_path: Path) -> Iterator[tuple[HTTPServer, Path]]:
    with https_api(tmp_path) as (server, ca):
        serve_recorded(server)
        yield server, ca


def test_https_api_server_with_ca_data(tls_api: tuple[HTTPServer, Path], tmp_path: Path) -> None:
    server, ca = tls_api
    url = server.url_for("/").rstrip("/")
    assert url.startswith("https://127.0.0.1:")
    kubeconfig = tls_kubeconfig(tmp_path / "kubeconfig", url, ca.read_bytes())
    report = audit(read_cluster(ClusterOptions(kubeconfig=kubeconfig)))
    assert (report.free_gpus, report.stranded_gpus) == (15, 8)


def test_wrong_ca_is_refused(tls_api: tuple[HTTPServer, Path], tmp_path: Path) -> None:
    server, _ = tls_api
    other = tmp_path / "other"
    other.mkdir()
    other_ca, _, _ = make_certs(other)
    kubeconfig = tls_kubeconfig(tmp_path / "kubeconfig", server.url_for("/").rstrip("/"), other_ca.read_bytes())
    with pytest.raises(InputError, match="cannot reach the API server"):
        read_cluster(ClusterOptions(kubeconfig=kubeconfig))
