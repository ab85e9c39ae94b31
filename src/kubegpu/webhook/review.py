"""The admission decision as a pure function: AdmissionReview v1 in, AdmissionReview response out.

Follows admission.k8s.io/v1 (Kubernetes v1.35): JSONPatch responses, warnings, denial status. The safe fixes
and their JSON Patch come from the fix engine (kubegpu.fix.fix_object), which `kubegpu fix` uses too.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from kubegpu.errors import InputError
from kubegpu.fix.engine import fix_object
from kubegpu.fix.model import FixOptions
from kubegpu.fix.protocols import FindingLike
from kubegpu.manifests.loader import MAX_NESTING_DEPTH, NestingTooDeep, nesting_exceeds
from kubegpu.manifests.resources import GPU_SHARING_ANNOTATIONS, HAMI_RESOURCES
from kubegpu.rules import Finding, LintConfig, Severity, lint_text

ADMISSION_API = "admission.k8s.io/v1"
ALWAYS_EXCLUDED = frozenset({"kube-system"})
MAX_WARNINGS = 10
MAX_WARNING_CHARS = 250  # the API server may truncate warnings over 256 characters
Mode = Literal["mutate", "validate"]


class MalformedReview(InputError):
    """The request body is not an AdmissionReview v1 request (answered 400)."""


@dataclass(frozen=True)
class WebhookConfig:
    """What the webhook does: lint rules, excluded namespaces, and the severity that denies."""

    lint: LintConfig = field(default_factory=LintConfig)
    excluded_namespaces: frozenset[str] = ALWAYS_EXCLUDED
    deny_severity: Severity = Severity.ERROR
    max_fix_passes: int = 4

    def excluded(self, namespace: str) -> bool:
        return namespace in self.excluded_namespaces or namespace in ALWAYS_EXCLUDED


@dataclass(frozen=True)
class Decision:
    """The answer to one review plus what happened, for metrics and logs."""

    response: dict[str, Any]
    patched: bool = False
    denied: bool = False
    skipped: str = ""
    patch: tuple[dict[str, Any], ...] = ()
    rules: tuple[str, ...] = ()


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


def _lint(pod: Mapping[str, Any], config: WebhookConfig, text: str | None = None) -> tuple[list[Finding], bool]:
    if text is None:
        text = json.dumps(pod, ensure_ascii=False)
    result = lint_text("admission-request.json", text, config.lint)
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
    pod: Mapping[str, Any], config: WebhookConfig, findings: Sequence[Finding] | None = None
) -> tuple[dict[str, Any], Sequence[FindingLike], list[str], list[dict[str, Any]]]:
    """Apply every safe fix through the fix engine (its order, overlap deferral, parent creation and passes).

    `findings` are those of `pod` when the caller has them. Returns the fixed pod, the findings that remain,
    the rules whose fixes were applied, and the RFC 6902 operations that turn `pod` into the fixed pod.
    """
    outcome = fix_object(pod, lambda obj: _lint(obj, config)[0], FixOptions(max_passes=config.max_fix_passes), findings)
    return outcome.fixed, outcome.remaining, [a.code for a in outcome.applied], list(outcome.patch)


def _warnings(findings: Sequence[FindingLike]) -> list[str]:
    out = []
    for f in findings[:MAX_WARNINGS]:
        text = f"kubegpu {f.code} {f.name}: {f.message}"
        out.append(text if len(text) <= MAX_WARNING_CHARS else text[: MAX_WARNING_CHARS - 1] + "…")
    return out


def review(body: bytes | str | Mapping[str, Any], mode: Mode, config: WebhookConfig) -> Decision:
    """Answer one AdmissionReview; raise MalformedReview when the body is not one."""
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
    findings, is_gpu = _lint(pod, config, text)
    if not is_gpu:
        return Decision(_response(uid), skipped="no accelerators")
    if mode == "validate":
        return _validate(uid, namespace, pod, findings, config)
    _, remaining, applied, ops = apply_safe_fixes(pod, config, findings)
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
    meta = pod.get("metadata")
    if not isinstance(meta, Mapping):
        meta = {}
    name = meta.get("name") or meta.get("generateName") or "<unnamed>"
    rules = tuple(dict.fromkeys(f"{f.code} {f.name}" for f in failing))
    details = "; ".join(f"{f.code} {f.name}: {f.message}" for f in failing)
    message = (
        f"kubegpu denied pod {namespace}/{name}: {len(failing)} finding(s) at or above "
        f"{config.deny_severity.value} ({', '.join(rules)}): {details}"
    )
    response = _response(uid, allowed=False, status={"code": 403, "reason": "Forbidden", "message": message})
    return Decision(response, denied=True, rules=tuple(f.code for f in failing))
