"""Lint the GPU pods and kubelet configs of a snapshot with the kubegpu rules engine.

Each pod is linted as the object the API returned; a configz answer as a KubeletConfiguration.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from kubegpu.errors import InputError
from kubegpu.lint import Finding, LintConfig, lint_text
from kubegpu.live.audit import AuditReport, Issue
from kubegpu.live.model import ClusterSnapshot
from kubegpu.manifests.accelerators import AcceleratorRegistry
from kubegpu.manifests.pod import uses_accelerators

KUBELET_API = "kubelet.config.k8s.io/v1beta1"


def _text(obj: Mapping[str, Any], what: str, source: str) -> str:
    """The object as JSON for the linter; a lone UTF-16 surrogate escape is an input error."""
    text = json.dumps(obj, ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as err:
        raise InputError(f"{what} is not valid Unicode ({err.reason})", file=source or None) from err
    return text


def _issues(findings: list[Finding], target: str) -> list[Issue]:
    return [
        Issue(rule=f"{f.code} {f.name}", severity=f.severity.value, target=target, message=f.message) for f in findings
    ]


def lint_pods(snapshot: ClusterSnapshot, config: LintConfig, namespace: str | None = None) -> list[Issue]:
    """Findings on every live GPU pod (Succeeded/Failed pods are history, not state)."""
    issues: list[Issue] = []
    registry = AcceleratorRegistry(config.accelerator_resources)
    for pod in snapshot.pods:
        if pod.terminal or pod.spec is None or not uses_accelerators(pod.spec, registry):
            continue
        if namespace is not None and pod.namespace != namespace:
            continue
        obj: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", **dict(pod.raw)}
        result = lint_text(f"pod {pod.key}", _text(obj, f"pod {pod.key}", snapshot.source), config)
        issues += _issues(result.findings, pod.key)
    return issues


def lint_kubelet_configs(configs: Mapping[str, Mapping[str, Any]], config: LintConfig) -> list[Issue]:
    """Findings of the rules that read KubeletConfiguration, on each node's configz."""
    issues: list[Issue] = []
    for node, kubelet in sorted(configs.items()):
        doc = {"apiVersion": KUBELET_API, "kind": "KubeletConfiguration", **dict(kubelet)}
        result = lint_text(f"configz {node}", _text(doc, f"configz of {node}", ""), config)
        issues += _issues(result.findings, f"node/{node}")
    return issues


def with_checks(
    report: AuditReport, snapshot: ClusterSnapshot, config: LintConfig | None = None, namespace: str | None = None
) -> AuditReport:
    """The report with lint findings on GPU pods and kubelet configs attached."""
    config = config or LintConfig()
    skipped: list[str] = []
    if not snapshot.kubelet_configs:
        skipped.append("kubelet-config checks skipped: no configz was read")
    return replace(
        report,
        lint=tuple(lint_pods(snapshot, config, namespace)),
        kubelet=tuple(lint_kubelet_configs(snapshot.kubelet_configs, config)),
        checks_skipped=tuple(skipped),
    )
