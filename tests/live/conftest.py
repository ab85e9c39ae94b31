"""A recorded GPU cluster served over real HTTP (or HTTPS) on 127.0.0.1, with a kubeconfig pointing at it."""

from __future__ import annotations

import base64
import json
import ssl
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer

from tests.paths import REPO_ROOT
from tests.webhook.certs import make_certs

CLUSTER = REPO_ROOT / "tests" / "fixtures" / "cluster"
TOKEN = "test-token-0123456789"

# API path -> recorded response file
ROUTES = {
    "/api/v1/nodes": "nodes.json",
    "/api/v1/pods": "pods.json",
    "/apis/topology.node.k8s.io/v1alpha2/noderesourcetopologies": "noderesourcetopologies.json",
    "/apis/kueue.x-k8s.io/v1beta2/topologies": "kueue-topologies.json",
    "/apis/kueue.x-k8s.io/v1beta2/clusterqueues": "kueue-clusterqueues.json",
    "/apis/kueue.x-k8s.io/v1beta2/workloads": "kueue-workloads.json",
    "/apis/kueue.x-k8s.io/v1beta2/localqueues": "kueue-localqueues.json",
    "/api/v1/nodes/h100-b/proxy/configz": "configz-h100-b.json",
}


def status(code: int, reason: str, message: str) -> dict[str, object]:
    """A metav1.Status body as the API server sends with an error."""
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }


def recorded(name: str) -> object:
    return json.loads((CLUSTER / name).read_text())


def write_kubeconfig(path: Path, server: str, context: str = "gpu-test") -> Path:
    path.write_text(
        "apiVersion: v1\nkind: Config\n"
        f"current-context: {context}\n"
        "clusters:\n"
        f"- name: test\n  cluster:\n    server: {server}\n"
        "users:\n"
        f"- name: tester\n  user:\n    token: {TOKEN}\n"
        "contexts:\n"
        f"- name: {context}\n  context:\n    cluster: test\n    user: tester\n"
        "- name: other\n  context:\n    cluster: test\n    user: tester\n    namespace: infer\n"
    )
    return path


ServeFn = Callable[..., Path]


@pytest.fixture
def serve_cluster(httpserver: HTTPServer, tmp_path: Path) -> ServeFn:
    """Register the recorded routes (overrides first) and return a kubeconfig for the server."""

    def serve(overrides: dict[str, tuple[int, object]] | None = None, missing: tuple[str, ...] = ()) -> Path:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        for path, (code, body) in (overrides or {}).items():
            httpserver.expect_request(path, method="GET").respond_with_json(body, status=code)
        for path, name in ROUTES.items():
            if path in (overrides or {}) or path in missing:
                continue
            httpserver.expect_request(path, method="GET", headers=headers).respond_with_json(recorded(name))
        for path in missing:
            httpserver.expect_request(path, method="GET").respond_with_json(
                status(404, "NotFound", "the server could not find the requested resource"), status=404
            )
        # everything else: a 404 like an API server without that group/version or node proxy
        httpserver.no_handler_status_code = 404
        return write_kubeconfig(tmp_path / "kubeconfig", httpserver.url_for("/").rstrip("/"))

    return serve


@contextmanager
def https_api(folder: Path) -> Iterator[tuple[HTTPServer, Path]]:
    """An HTTPS server on 127.0.0.1 with a fresh CA made in `folder` (returned with it); anything not
    registered is answered 404, like an API server without that group, version or node proxy."""
    ca, cert, key = make_certs(folder)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(str(cert), str(key))
    server = HTTPServer(host="127.0.0.1", port=0, ssl_context=context)
    server.no_handler_status_code = 404
    server.start()
    try:
        yield server, ca
    finally:
        server.clear()
        server.stop()


def serve_recorded(server: HTTPServer) -> None:
    """The recorded cluster's answers, for requests with the test token (after the answers a test registered)."""
    for path, name in ROUTES.items():
        server.expect_request(path, headers={"Authorization": f"Bearer {TOKEN}"}).respond_with_json(recorded(name))


def tls_kubeconfig(path: Path, url: str, ca_pem: bytes | None, insecure: bool = False) -> Path:
    """A kubeconfig for `url` that trusts `ca_pem` (or, with `insecure`, skips TLS verification)."""
    trust = (
        "    insecure-skip-tls-verify: true\n"
        if insecure
        else f"    certificate-authority-data: {base64.b64encode(ca_pem or b'').decode()}\n"
    )
    path.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: tls\n"
        f"clusters:\n- name: tls\n  cluster:\n    server: {url}\n{trust}"
        f"users:\n- name: u\n  user:\n    token: {TOKEN}\n"
        "contexts:\n- name: tls\n  context:\n    cluster: tls\n    user: u\n"
    )
    return path
