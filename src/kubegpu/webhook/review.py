"""The admission decision as a pure function: AdmissionReview v1 in, AdmissionReview response out.

Follows admission.k8s.io/v1 (Kubernetes v1.35): JSONPatch responses, warnings, denial status. The safe fixes
and their JSON Patch come from the fix engine (kubegpu.fix.fix_object), which `kubegpu fix` uses too.
A review that cannot be finished (past its deadline, or a pod over the container limit) is answered as the
webhook's failurePolicy would answer it: allowed unchanged with a warning (Ignore) or denied (Fail).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from kubegpu.deadline import Deadline, DeadlineExceeded
from kubegpu.errors import InputError
from kubegpu.fix.engine import fix_object
from kubegpu.fix.model import FixOptions
from kubegpu.fix.protocols import FindingLike
from kubegpu.lint import Finding, LintConfig, Severity, lint_object
from kubegpu.manifests.loader import MAX_NESTING_DEPTH, NestingTooDeep, nesting_exceeds
from kubegpu.manifests.resources import GPU_SHARING_ANNOTATIONS, HAMI_RESOURCES

ADMISSION_API = "admission.k8s.io/v1"
ALWAYS_EXCLUDED = frozenset({"kube-system"})
MAX_WARNINGS = 10
MAX_WARNING_CHARS = 250  # the API server may truncate warnings over 256 characters
MAX_DENY_FINDINGS = 10  # findings a denial spells out; the rest are counted
MAX_DENY_CHARS = 2048  # a denial's whole message, which kubectl prints and controllers repeat in their events
MAX_NAME_CHARS = 253  # a pod name as the denial shows it (the longest valid name; /mutate runs before validation)
# Containers, init containers and ephemeral containers a pod may have to be reviewed. Kubernetes sets no
# number (the API server's 3 MiB request bound is the only one); 256 is far above real pods (sidecars and
# Tekton steps: tens) and keeps a review well inside the deadline (bench/bench_webhook_attacks.py).
MAX_CONTAINERS = 256
FailurePolicy = Literal["Ignore", "Fail"]
FAILURE_POLICIES: tuple[FailurePolicy, ...] = ("Ignore", "Fail")
DEFAULT_FAILURE_POLICY: FailurePolicy = "Ignore"
Mode = Literal["mutate", "validate"]


class MalformedReview(InputError):
    """The request body is not an AdmissionReview v1 request (answered 400)."""


def failure_policy_named(value: str) -> FailurePolicy:
    """The failurePolicy called `value`; InputError when there is none."""
    for policy in FAILURE_POLICIES:
        if value == policy:
            return policy
    raise InputError(f"failurePolicy must be Ignore or Fail, not {value!r}")


@dataclass(frozen=True)
class WebhookConfig:
    """What the webhook does: lint rules, excluded namespaces, the severity that denies, and how a review that
    cannot be finished is answered (`failure_policy`, the one the webhook configurations are deployed with)."""

    lint: LintConfig = field(default_factory=LintConfig)
    excluded_namespaces: frozenset[str] = ALWAYS_EXCLUDED
    deny_severity: Severity = Severity.ERROR
    max_fix_passes: int = 4
    failure_policy: FailurePolicy = DEFAULT_FAILURE_POLICY
    max_containers: int = MAX_CONTAINERS

    def __post_init__(self) -> None:
        failure_policy_named(self.failure_policy)
        if not 1 <= self.max_containers <= 100_000:
            raise InputError("max-containers must be between 1 and 100000")

    def excluded(self, namespace: str) -> bool:
        return namespace in self.excluded_namespaces or namespace in ALWAYS_EXCLUDED


@dataclass(frozen=True)
class Decision:
    """The answer to one review plus what happened, for metrics and logs.

    `unfinished`: why the pod was not reviewed ("deadline", "containers"); it is then skipped or denied.
    """

    response: dict[str, Any]
    patched: bool = False
    denied: bool = False
    skipped: str = ""
    patch: tuple[dict[str, Any], ...] = ()
    rules: tuple[str, ...] = ()
    unfinished: str = ""


def parse_review(body: bytes | str | Mapping[str, Any]) -> dict[str, Any]:
    """Decode and check the envelope: apiVersion, kind, request.uid; raise MalformedReview."""
    if isinstance(body, Mapping):
        review: Any = body
    else:
        try:
            review = json.loads(body)
        except (ValueError, UnicodeDecodeError) as err:
            raise MalformedReview(f"body is not JSON: {err}") from err
        except RecursionError as err:
            raise MalformedReview(str(NestingTooDeep())) from err
    if nesting_exceeds(review, MAX_NESTING_DEPTH + 3):  # the pod sits at request.object
        raise MalformedReview(str(NestingTooDeep()))
    if not isinstance(review, Mapping):
        raise MalformedReview("body is not a JSON object")
    if review.get("kind") != "AdmissionReview" or review.get("apiVersion") != ADMISSION_API:
        raise MalformedReview(f"expected kind AdmissionReview, apiVersion {ADMISSION_API}")
    request = review.get("request")
    if not isinstance(request, Mapping):
        raise MalformedReview("AdmissionReview has no 'request' object")
    if not isinstance(request.get("uid"), str) or not request["uid"]:
        raise MalformedReview("AdmissionReview request has no 'uid'")
    return dict(review)


def _response(uid: str, **fields: Any) -> dict[str, Any]:
    return {"apiVersion": ADMISSION_API, "kind": "AdmissionReview", "response": {"uid": uid, "allowed": True, **fields}}


def _lint(
    pod: Mapping[str, Any], config: WebhookConfig, deadline: Deadline | None = None
) -> tuple[list[Finding], bool]:
    """The pod's findings and whether it is a GPU pod. The pod is linted as parsed: its JSON text is one line, so
    positions say nothing a response uses, and parsing it again was most of the time a large review took."""
    result = lint_object("admission-request.json", pod, config.lint, deadline=deadline)
    if result.internal_errors:  # never allow a pod unchecked: the server answers 500 (the failure policy decides)
        raise RuntimeError(result.internal_errors[0])
    return result.findings, result.gpu_templates > 0


def may_use_accelerators(text: str, config: WebhookConfig) -> bool:
    """A cheap, sound pre-check on the pod's JSON: False only if no accelerator marker appears.

    The lint engine counts a pod as a GPU pod only through an accelerator resource name, a DRA
    claim or a GPU-sharing annotation, so a pod whose text holds none of them is not one.
    """
    markers = (
        *config.lint.accelerator_resources,
        *HAMI_RESOURCES,
        *(a.split("/")[-1] for a in GPU_SHARING_ANNOTATIONS),
        "claims",
        "Claims",
    )
    return any(marker in text for marker in markers)


def apply_safe_fixes(
    pod: Mapping[str, Any],
    config: WebhookConfig,
    findings: Sequence[Finding] | None = None,
    deadline: Deadline | None = None,
) -> tuple[dict[str, Any], Sequence[FindingLike], list[str], list[dict[str, Any]]]:
    """Apply every safe fix through the fix engine (its order, overlap deferral, parent creation and passes).

    `findings` are those of `pod` when the caller has them. Returns the fixed pod, the findings that remain,
    the rules whose fixes were applied, and the RFC 6902 operations that turn `pod` into the fixed pod.
    `deadline` bounds every re-lint of a pass (DeadlineExceeded past it).
    """
    outcome = fix_object(
        pod,
        lambda obj: _lint(obj, config, deadline)[0],
        FixOptions(max_passes=config.max_fix_passes),
        findings,
    )
    return outcome.fixed, outcome.remaining, [a.code for a in outcome.applied], list(outcome.patch)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _warnings(findings: Sequence[FindingLike]) -> list[str]:
    return [_cut(f"kubegpu {f.code} {f.name}: {f.message}", MAX_WARNING_CHARS) for f in findings[:MAX_WARNINGS]]


def _pod_name(pod: Mapping[str, Any]) -> str:
    meta = pod.get("metadata")
    if not isinstance(meta, Mapping):
        meta = {}
    name = str(meta.get("name") or meta.get("generateName") or "<unnamed>")
    return _cut("".join(c if c.isprintable() else "?" for c in name[: MAX_NAME_CHARS + 1]), MAX_NAME_CHARS)


def review(
    body: bytes | str | Mapping[str, Any], mode: Mode, config: WebhookConfig, deadline: Deadline | None = None
) -> Decision:
    """Answer one AdmissionReview; raise MalformedReview when the body is not one.

    Work stops at `deadline` (checked per rule, pod template, finding and fix pass), and a pod over
    `config.max_containers` is not linted: both are answered by `config.failure_policy` (see `_unfinished`).
    """
    request = parse_review(body)["request"]
    uid = str(request["uid"])
    kind = request.get("kind")
    if not isinstance(kind, Mapping):
        kind = {}
    if (kind.get("group", ""), kind.get("kind")) != ("", "Pod") or request.get("subResource"):
        return Decision(_response(uid), skipped="not a pod")
    if request.get("operation") != "CREATE":
        return Decision(_response(uid), skipped="not a create")
    namespace = str(request.get("namespace") or "")
    pod = request.get("object")
    if not isinstance(pod, Mapping):
        raise MalformedReview("a pod CREATE review must carry the pod in request.object")
    if config.excluded(namespace):
        return Decision(_response(uid), skipped="namespace excluded")
    text = json.dumps(pod, ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as err:  # a lone \uD800-style escape: no API server sends one
        raise MalformedReview(f"request.object is not valid Unicode: {err.reason}") from err
    if not may_use_accelerators(text, config):
        return Decision(_response(uid), skipped="no accelerators")
    containers = container_count(pod)
    if containers > config.max_containers:
        return _unfinished(
            uid,
            namespace,
            pod,
            config,
            "containers",
            f"it has {containers} containers, over the limit of {config.max_containers} this webhook reviews",
        )
    try:
        return _decide(uid, namespace, pod, mode, config, deadline)
    except DeadlineExceeded:
        assert deadline is not None  # only a deadline raises it
        return _unfinished(
            uid, namespace, pod, config, "deadline", f"its review did not finish within {deadline.seconds:g} s"
        )


def container_count(pod: Mapping[str, Any]) -> int:
    """Containers, init containers and ephemeral containers of a pod (lists only; anything else counts 0)."""
    spec = pod.get("spec")
    if not isinstance(spec, Mapping):
        return 0
    return sum(
        len(spec[key])
        for key in ("containers", "initContainers", "ephemeralContainers")
        if isinstance(spec.get(key), list)
    )


def _unfinished(
    uid: str, namespace: str, pod: Mapping[str, Any], config: WebhookConfig, reason: str, why: str
) -> Decision:
    """The answer to a pod that was not reviewed: what failurePolicy would have the API server do had the
    webhook not answered, but at once and saying why (Ignore: allowed unchanged; Fail: denied)."""
    if config.failure_policy == "Ignore":
        warning = f"kubegpu did not review this pod: {why}; admitted unchanged (failurePolicy Ignore)"
        return Decision(_response(uid, warnings=[_cut(warning, MAX_WARNING_CHARS)]), skipped=reason, unfinished=reason)
    message = _cut(
        f"kubegpu denied pod {namespace}/{_pod_name(pod)} unreviewed: {why}, and the webhook's failurePolicy "
        "is Fail, so pods it cannot check are not admitted",
        MAX_DENY_CHARS,
    )
    code, status_reason = (403, "Forbidden") if reason == "containers" else (503, "ServiceUnavailable")
    status = {"code": code, "reason": status_reason, "message": message}
    return Decision(_response(uid, allowed=False, status=status), denied=True, unfinished=reason)


def _decide(
    uid: str,
    namespace: str,
    pod: Mapping[str, Any],
    mode: Mode,
    config: WebhookConfig,
    deadline: Deadline | None,
) -> Decision:
    findings, is_gpu = _lint(pod, config, deadline)
    if not is_gpu:
        return Decision(_response(uid), skipped="no accelerators")
    if mode == "validate":
        return _validate(uid, namespace, pod, findings, config)
    _, remaining, applied, ops = apply_safe_fixes(pod, config, findings, deadline)
    extra: dict[str, Any] = {}
    if ops:
        encoded = base64.b64encode(json.dumps(ops, separators=(",", ":")).encode()).decode()
        extra = {"patchType": "JSONPatch", "patch": encoded}
    warnings = _warnings(remaining)
    if warnings:
        extra["warnings"] = warnings
    return Decision(_response(uid, **extra), patched=bool(ops), patch=tuple(ops), rules=tuple(applied))


def _validate(
    uid: str, namespace: str, pod: Mapping[str, Any], findings: Sequence[Finding], config: WebhookConfig
) -> Decision:
    failing = [f for f in findings if f.severity.rank >= config.deny_severity.rank]
    if not failing:
        warnings = _warnings(findings)
        return Decision(_response(uid, **({"warnings": warnings} if warnings else {})))
    message = _deny_message(f"{namespace}/{_pod_name(pod)}", failing, config.deny_severity)
    response = _response(uid, allowed=False, status={"code": 403, "reason": "Forbidden", "message": message})
    return Decision(response, denied=True, rules=tuple(f.code for f in failing))


def _deny_message(pod: str, failing: Sequence[Finding], severity: Severity) -> str:
    """Every rule that denied (with its count when it found more than once), the first MAX_DENY_FINDINGS
    findings spelled out (each cut like a warning), the rest counted; MAX_DENY_CHARS at most in all."""
    counts: dict[str, int] = {}
    for f in failing:
        key = f"{f.code} {f.name}"
        counts[key] = counts.get(key, 0) + 1
    rules = ", ".join(key if n == 1 else f"{key} x{n}" for key, n in counts.items())
    details = "; ".join(_cut(f"{f.code} {f.name}: {f.message}", MAX_WARNING_CHARS) for f in failing[:MAX_DENY_FINDINGS])
    more = len(failing) - MAX_DENY_FINDINGS
    if more > 0:
        details += f"; and {more} more"
    return _cut(
        f"kubegpu denied pod {pod}: {len(failing)} finding(s) at or above {severity.value} ({rules}): {details}",
        MAX_DENY_CHARS,
    )
