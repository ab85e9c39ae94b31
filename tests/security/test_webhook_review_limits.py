"""The webhook's review as an attacker shapes it: a pod built to take long, a pod of thousands of
containers, and findings and names built to make the denial huge. Each review stops at its deadline
and is answered as the configured failurePolicy would have it, and every answer is bounded."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from kubegpu.deadline import Deadline, DeadlineExceeded
from kubegpu.errors import InputError
from kubegpu.webhook import WebhookConfig, review
from kubegpu.webhook.review import (
    MAX_CONTAINERS,
    MAX_DENY_CHARS,
    MAX_DENY_FINDINGS,
    MAX_NAME_CHARS,
    MAX_WARNING_CHARS,
    Decision,
    Mode,
)

REVIEWS = Path(__file__).parents[1] / "webhook" / "reviews"


def gpu_review(containers: int = 1, init: int = 0, name: str = "trainer") -> dict[str, Any]:
    """The recorded GPU pod review with `containers` GPU containers that break KG104 (request, no limit)."""
    data: dict[str, Any] = json.loads((REVIEWS / "gpu-request-no-limit.json").read_text())
    pod = data["request"]["object"]
    pod["metadata"]["name"] = name

    def container(prefix: str, i: int) -> dict[str, Any]:
        return {"name": f"{prefix}{i}", "image": "nvidia/cuda:12.4", "resources": {"requests": {"nvidia.com/gpu": "1"}}}

    pod["spec"]["containers"] = [container("c", i) for i in range(containers)]
    if init:
        pod["spec"]["initContainers"] = [container("i", i) for i in range(init)]
    return data


@dataclass(frozen=True)
class ChecksThenExpires(Deadline):
    """A deadline that passes at its `allowed`+1-th check: where the review checks, deterministically."""

    allowed: int = 0
    calls: list[int] = field(default_factory=list)

    def check(self, what: str = "the work") -> None:
        self.calls.append(1)
        if len(self.calls) > self.allowed:
            raise DeadlineExceeded(f"{what} did not finish within {self.seconds:g} s")


def expiring(allowed: int) -> ChecksThenExpires:
    return ChecksThenExpires(at=float("inf"), seconds=4.0, allowed=allowed)


def inner(decision: Decision) -> dict[str, Any]:
    response: dict[str, Any] = decision.response["response"]
    return response


@pytest.mark.parametrize("mode", ["mutate", "validate"])
def test_a_review_past_its_deadline_is_admitted_with_a_warning_under_ignore(mode: Mode) -> None:
    decision = review(gpu_review(3), mode, WebhookConfig(), Deadline.after(0.0))
    answer = inner(decision)
    assert answer["allowed"] is True and "patch" not in answer and "status" not in answer
    assert decision.unfinished == "deadline" and decision.skipped == "deadline" and not decision.denied
    (warning,) = answer["warnings"]
    assert "did not finish within 0 s" in warning and "admitted unchanged (failurePolicy Ignore)" in warning


@pytest.mark.parametrize("mode", ["mutate", "validate"])
def test_a_review_past_its_deadline_is_denied_under_fail(mode: Mode) -> None:
    config = WebhookConfig(failure_policy="Fail")
    decision = review(gpu_review(3), mode, config, Deadline.after(0.0))
    answer = inner(decision)
    assert answer["allowed"] is False and decision.denied and decision.unfinished == "deadline"
    assert answer["status"]["code"] == 503 and answer["status"]["reason"] == "ServiceUnavailable"
    assert answer["status"]["message"].startswith("kubegpu denied pod ml/trainer unreviewed: its review did not finish")
    assert "failurePolicy is Fail" in answer["status"]["message"]


def test_the_deadline_is_checked_for_every_container() -> None:
    """A rule's findings come one container at a time and each is a check: a long pod gives many chances."""
    deadline = expiring(10**9)
    review(gpu_review(40), "validate", WebhookConfig(), deadline)
    assert len(deadline.calls) >= 40


def test_mutate_stops_at_any_check_and_sends_no_partial_patch() -> None:
    """Wherever the deadline passes (in the first lint, between fix passes, in a re-lint) nothing half-done is sent."""
    body = gpu_review(20)
    counted = expiring(10**9)
    whole = review(body, "mutate", WebhookConfig(), counted)
    checks = len(counted.calls)
    assert whole.patched and whole.unfinished == "" and checks > 40  # the first lint and at least one re-lint
    for allowed in sorted({0, 1, checks // 4, checks // 2, checks - 1}):
        decision = review(body, "mutate", WebhookConfig(), expiring(allowed))
        answer = inner(decision)
        assert decision.unfinished == "deadline" and answer["allowed"] is True, allowed
        assert "patch" not in answer and not decision.patch


def test_a_deadline_that_is_not_reached_changes_nothing() -> None:
    body = gpu_review(3)
    assert review(body, "mutate", WebhookConfig(), Deadline.after(600)) == review(body, "mutate", WebhookConfig())


@pytest.mark.parametrize("mode", ["mutate", "validate"])
def test_too_many_containers_is_not_reviewed(mode: Mode) -> None:
    over = gpu_review(MAX_CONTAINERS - 9, init=10)  # init containers count too
    decision = review(over, mode, WebhookConfig())
    (warning,) = inner(decision)["warnings"]
    assert decision.unfinished == "containers" and inner(decision)["allowed"] is True and "patch" not in inner(decision)
    assert f"it has {MAX_CONTAINERS + 1} containers, over the limit of {MAX_CONTAINERS}" in warning
    denied = review(over, mode, WebhookConfig(failure_policy="Fail"))
    status = inner(denied)["status"]
    assert inner(denied)["allowed"] is False and status["code"] == 403 and status["reason"] == "Forbidden"
    assert f"over the limit of {MAX_CONTAINERS}" in status["message"]
    at_limit = review(gpu_review(MAX_CONTAINERS), mode, WebhookConfig(failure_policy="Fail"))
    assert at_limit.unfinished == ""  # reviewed: denied or patched for its findings, not for its size


def test_the_container_limit_leaves_pods_without_accelerators_alone() -> None:
    body = gpu_review(MAX_CONTAINERS * 4)
    for c in body["request"]["object"]["spec"]["containers"]:
        c["resources"] = {"requests": {"cpu": "1"}}
    decision = review(body, "validate", WebhookConfig(failure_policy="Fail"))
    assert decision.skipped == "no accelerators" and inner(decision)["allowed"] is True


def test_a_denial_lists_a_bounded_number_of_findings() -> None:
    decision = review(gpu_review(200), "validate", WebhookConfig())
    message: str = inner(decision)["status"]["message"]
    assert decision.denied and len(message) <= MAX_DENY_CHARS
    assert message.startswith("kubegpu denied pod ml/trainer: 200 finding(s) at or above error (")
    assert "KG104 gpu-request-limit-mismatch x200" in message
    assert message.count("KG104 gpu-request-limit-mismatch:") <= MAX_DENY_FINDINGS
    assert f"and {200 - MAX_DENY_FINDINGS} more" in message
    assert len(decision.rules) == 200  # the metrics still count every finding


def test_a_hostile_pod_name_is_cut_and_printable() -> None:
    name = "x" * 10_000 + "\n::error::\x1b[31m"
    for config in (WebhookConfig(), WebhookConfig(failure_policy="Fail")):
        for deadline in (None, Deadline.after(0.0)):
            decision = review(gpu_review(2, name=name), "validate", config, deadline)
            message: str = inner(decision).get("status", {}).get("message", "")
            if not message:
                continue  # allowed with a warning, which names no pod
            assert len(message) <= MAX_DENY_CHARS and "\n" not in message and "\x1b" not in message
            assert "x" * (MAX_NAME_CHARS + 1) not in message


def test_every_warning_is_bounded() -> None:
    body = gpu_review(MAX_CONTAINERS + 1, name="n" * 5000)
    for config in (WebhookConfig(failure_policy="Ignore"), WebhookConfig(failure_policy="Fail")):
        decision = review(body, "mutate", config)
        assert all(len(w) <= MAX_WARNING_CHARS for w in inner(decision).get("warnings", []))


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"failure_policy": "Sometimes"}, "failurePolicy must be Ignore or Fail"),
        ({"max_containers": 0}, "max-containers"),
    ],
)
def test_bad_settings_are_one_line_errors(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(InputError, match=message):
        WebhookConfig(**kwargs)
