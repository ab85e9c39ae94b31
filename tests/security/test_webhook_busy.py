"""The webhook kept busy, over real HTTPS on loopback: a review that holds the only worker must not
make the next pod wait for it (its queue wait runs from its arrival and ends in a 503 at once), and a
review that runs past its deadline is answered as the failure policy says, with its reason counted."""

from __future__ import annotations

import asyncio
import itertools
import json
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from typer.testing import CliRunner

import kubegpu.webhook.app as webhook_app
from kubegpu.cli.main import app
from kubegpu.errors import InputError
from kubegpu.webhook import WebhookConfig, review
from kubegpu.webhook.app import Overloaded, ReviewPool
from kubegpu.webhook.deploy import DeployOptions, webhook_objects
from kubegpu.webhook.limits import Limits
from kubegpu.webhook.metrics import Metrics
from tests.security.test_webhook_review_limits import gpu_review
from tests.webhook.certs import make_certs
from tests.webhook.running import running_server

WAIT = 30.0  # how long a test waits for something that must happen; never a measured figure


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    return make_certs(tmp_path_factory.mktemp("tls"))


def _client(ca: Path) -> httpx.Client:
    return httpx.Client(verify=ssl.create_default_context(cafile=str(ca)), timeout=WAIT)


def _unfinished(url: str, ca: Path) -> dict[tuple[str, str], float]:
    with _client(ca) as client:
        text = client.get(f"{url}/metrics").text
    family = next(f for f in text_string_to_metric_families(text) if f.name == "kubegpu_webhook_unfinished_reviews")
    return {(s.labels["endpoint"], s.labels["reason"]): s.value for s in family.samples if s.name.endswith("_total")}


def test_a_queued_review_is_given_up_at_its_budget_while_the_worker_is_still_busy() -> None:
    async def scenario() -> None:
        pool = ReviewPool(workers=1, queue=4, metrics=Metrics())
        gate = threading.Event()
        ran: list[str] = []
        busy = asyncio.ensure_future(pool.run(lambda: gate.wait(WAIT)))
        await asyncio.sleep(0.05)
        loop = asyncio.get_running_loop()
        try:
            with pytest.raises(Overloaded):
                await pool.run(lambda: ran.append("late"), wait_until=loop.time() + 0.2)
            assert not gate.is_set() and not busy.done()  # answered while the worker was still busy
        finally:
            gate.set()
        assert await busy is True
        await pool.run(lambda: ran.append("fresh"))
        assert ran == ["fresh"]  # the given-up review never ran once a worker was free
        pool.close()

    asyncio.run(scenario())


def test_a_normal_pod_behind_a_busy_worker_gets_a_503_at_its_queue_budget(
    tls: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    ca, cert, key = tls
    started, gate = threading.Event(), threading.Event()

    def held(body: Any, mode: Any, config: Any, deadline: Any = None) -> Any:
        if not started.is_set():  # the first review holds the only worker until the test lets it go
            started.set()
            gate.wait(WAIT)
        return review(body, mode, config, deadline)

    monkeypatch.setattr(webhook_app, "review", held)
    limits = Limits(review_workers=1, review_queue=4, timeout_seconds=5, queue_timeout=0.3)
    body = json.dumps(gpu_review(1)).encode()
    with running_server(cert, key, limits) as (url, _):
        answers: list[int] = []

        def send_first() -> None:
            with _client(ca) as client:
                answers.append(client.post(f"{url}/mutate", content=body).status_code)

        first = threading.Thread(target=send_first)
        first.start()
        try:
            assert started.wait(WAIT)
            with _client(ca) as client:
                second = client.post(f"{url}/mutate", content=body)
            assert second.status_code == 503 and second.headers["retry-after"] == "1"
            assert second.text == "too many reviews in progress"
            assert not gate.is_set()  # answered before the worker was free, not when it picked the review up
        finally:
            gate.set()
            first.join(WAIT)
        assert answers == [200]


def test_a_review_past_its_deadline_is_answered_by_the_policy_over_https(tls: tuple[Path, Path, Path]) -> None:
    ca, cert, key = tls
    # A pod of 4,800 GPU containers, with the container limit lifted so that only the deadline stops it.
    body = json.dumps(gpu_review(4800)).encode()
    limits = Limits(timeout_seconds=1, review_deadline=0.05)
    config = WebhookConfig(max_containers=100_000, failure_policy="Fail")
    with running_server(cert, key, limits, config) as (url, _):
        with _client(ca) as client:
            answer = client.post(f"{url}/validate", content=body)
        assert answer.status_code == 200
        response = answer.json()["response"]
        assert response["allowed"] is False and response["status"]["code"] == 503
        assert "its review did not finish within 0.05 s" in response["status"]["message"]
        assert _unfinished(url, ca)[("/validate", "deadline")] == 1


def test_a_pod_over_the_container_limit_is_counted(tls: tuple[Path, Path, Path]) -> None:
    ca, cert, key = tls
    body = json.dumps(gpu_review(4800)).encode()
    with running_server(cert, key) as (url, _):
        with _client(ca) as client:
            answer = client.post(f"{url}/mutate", content=body)
        response = answer.json()["response"]
        assert response["allowed"] is True and "patch" not in response
        assert "4800 containers, over the limit of 256" in response["warnings"][0]
        counts = _unfinished(url, ca)
        assert counts[("/mutate", "containers")] == 1 and counts[("/mutate", "deadline")] == 0


def test_the_review_deadline_comes_from_the_configured_timeout() -> None:
    assert (Limits().timeout_seconds, Limits().deadline_seconds, Limits().queue_wait_seconds) == (5, 4.0, 2.0)
    assert Limits(timeout_seconds=1).deadline_seconds == 0.5  # never less than half the timeout
    assert Limits(timeout_seconds=10).deadline_seconds == 9.0
    assert Limits(timeout_seconds=10, review_deadline=3).queue_wait_seconds == 1.5
    for bad in (
        {"timeout_seconds": 0},
        {"timeout_seconds": 31},
        {"timeout_seconds": 5, "review_deadline": 5},
        {"review_deadline": 0},
        {"queue_timeout": 4.5},
    ):
        with pytest.raises(InputError):
            Limits(**bad)


def _server_and_hooks(options: DeployOptions) -> Iterator[tuple[list[str], dict[str, Any]]]:
    objects = webhook_objects(options)
    deployment = next(o for o in objects if o["kind"] == "Deployment")
    args: list[str] = deployment["spec"]["template"]["spec"]["containers"][0]["args"]
    for obj in objects:
        if obj["kind"].endswith("WebhookConfiguration"):
            yield args, obj["webhooks"][0]


@pytest.mark.parametrize(
    "options",
    [
        DeployOptions(),
        DeployOptions(failure_policy="Fail", limits=Limits(timeout_seconds=12), max_containers=64),
    ],
)
def test_the_server_is_told_the_timeout_and_policy_it_is_registered_with(
    options: DeployOptions, tmp_path: Path
) -> None:
    for args, hook in _server_and_hooks(options):
        flags = dict(itertools.pairwise(args))
        assert flags["--timeout-seconds"] == str(hook["timeoutSeconds"]) == str(options.limits.timeout_seconds)
        assert flags["--failure-policy"] == hook["failurePolicy"] == options.failure_policy
        assert flags["--max-containers"] == str(options.max_containers)
    # `webhook serve` takes every argument it is deployed with: it gets as far as the missing certificate
    missing = str(tmp_path / "absent.crt")
    argv = [missing if a.endswith(("tls.crt", "tls.key")) else a for a in args]
    result = CliRunner().invoke(app, argv)
    assert result.exit_code == 2 and "absent.crt" in result.output, result.output
