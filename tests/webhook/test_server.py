"""The webhook over real HTTPS on 127.0.0.1: uvicorn in a thread, a test CA, an httpx client."""

from __future__ import annotations

import base64
import json
import ssl
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from kubegpu.errors import InputError
from kubegpu.webhook.serve import check_tls
from tests.webhook.certs import make_certs
from tests.webhook.running import running_server

REVIEWS = Path(__file__).parent / "reviews"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    folder = tmp_path_factory.mktemp("tls")
    ca, cert, key = make_certs(folder)
    with running_server(cert, key) as (url, _):
        yield url, ca


def test_https_round_trip(server: tuple[str, Path]) -> None:
    url, ca = server
    with httpx.Client(base_url=url, verify=ssl.create_default_context(cafile=str(ca))) as client:
        assert client.get("/healthz").text == "ok"
        assert client.get("/readyz").status_code == 200
        body = (REVIEWS / "gpu-request-no-limit.json").read_bytes()
        answer = client.post("/mutate", content=body, headers={"Content-Type": "application/json"})
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
        # over the body limit, announced or streamed (chunked, no Content-Length): 413, not read
        huge = b"x" * (512 * 1024 + 1)
        assert client.post("/validate", content=huge).status_code == 413

        def chunks() -> Iterator[bytes]:
            for _ in range(4):
                yield b"y" * (256 * 1024)

        assert client.post("/validate", content=chunks()).status_code == 413
        assert client.get("/healthz").text == "ok"
        metrics = client.get("/metrics")
        assert metrics.headers["content-type"].startswith("text/plain; version=0.0.4")
        samples = {
            (s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(metrics.text)
            for s in family.samples
        }

        def value(name: str, **labels: str) -> float:
            return samples.get((name, tuple(sorted(labels.items()))), 0.0)

        requests = "kubegpu_webhook_requests_total"
        assert value(requests, endpoint="/mutate", outcome="patched") == 1
        assert value(requests, endpoint="/mutate", outcome="bad_request") == 4
        assert value(requests, endpoint="/mutate", outcome="skipped") == 1
        assert value(requests, endpoint="/validate", outcome="denied") == 1
        assert value(requests, endpoint="/validate", outcome="too_large") == 2
        assert value("kubegpu_webhook_denials_total", rule="KG104") == 1
        patched = {dict(k[1])["rule"] for k, v in samples.items() if k[0] == "kubegpu_webhook_patches_total" and v}
        assert patched and all(rule.startswith("KG") for rule in patched)
        assert value("kubegpu_webhook_request_duration_seconds_count", endpoint="/mutate", outcome="bad_request") == 4
        assert (
            value("kubegpu_webhook_request_duration_seconds_bucket", endpoint="/mutate", outcome="patched", le="+Inf")
            == 1
        )
        assert value("kubegpu_webhook_reviews_in_flight") == 0
        assert value("kubegpu_webhook_open_connections") >= 1


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
