"""The default audit role is read-only: no verb or resource that writes, reads a secret or reaches a container."""

from __future__ import annotations

from typing import Any

import yaml
from typer.testing import CliRunner

from kubegpu.cli.main import app

READ_VERBS = {"get", "list", "watch"}
# subresources that reach a container or the kubelet (exec, attach, port-forward, proxies, ephemeral containers)
REACHING = {
    "pods/exec",
    "pods/attach",
    "pods/portforward",
    "pods/proxy",
    "nodes/proxy",
    "services/proxy",
    "pods/ephemeralcontainers",
    "serviceaccounts/token",
    "secrets",
    "configmaps",
    "tokenreviews",
    "certificatesigningrequests",
}


def _roles(args: list[str]) -> list[dict[str, Any]]:
    result = CliRunner().invoke(app, ["gen", "audit-rbac", *args])
    assert result.exit_code == 0, result.output
    return [d for d in yaml.safe_load_all(result.output) if d and d["kind"] in ("ClusterRole", "Role")]


def _granted(role: dict[str, Any]) -> tuple[set[str], set[str], set[str]]:
    rules = role["rules"]
    verbs = {v for r in rules for v in r.get("verbs", [])}
    resources = {res for r in rules for res in r.get("resources", [])}
    groups = {g for r in rules for g in r.get("apiGroups", [])}
    assert not any(r.get("nonResourceURLs") or r.get("resourceNames") for r in rules)
    return verbs, resources, groups


def test_the_default_role_is_read_only() -> None:
    roles = _roles([])
    assert [r["metadata"]["name"] for r in roles] == ["kubegpu-audit"]
    verbs, resources, groups = _granted(roles[0])
    assert verbs <= READ_VERBS and "*" not in verbs
    assert "*" not in resources and "*" not in groups
    assert not {r for r in resources if "/" in r}, "no subresource at all"
    assert not resources & REACHING


def test_configz_is_an_explicit_separate_role() -> None:
    roles = _roles(["--with-configz"])
    names = [r["metadata"]["name"] for r in roles]
    assert names == ["kubegpu-audit", "kubegpu-audit-configz"]
    assert _granted(roles[0])[1].isdisjoint(REACHING)
    assert _granted(roles[1]) == ({"get"}, {"nodes/proxy"}, {""})
    text = CliRunner().invoke(app, ["gen", "audit-rbac", "--with-configz"]).output
    assert "exec into any container" in text
