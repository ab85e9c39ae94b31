"""`kubegpu gen webhook` and `gen audit-rbac`: core objects pass strict Kubernetes 1.35 schemas."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml
from typer.testing import CliRunner

from kubegpu import DEFAULT_IMAGE
from kubegpu.cli.main import app
from kubegpu.live.rbac import RbacOptions, audit_rules, rbac_objects
from kubegpu.webhook.deploy import DeployOptions, webhook_objects
from kubegpu.webhook.limits import Limits, memory_budget, memory_limit_quantity
from tests.webhook.certs import make_certs

K8S = "1.35.0"
IMAGE = "registry.example.com/platform/kubegpu:0.1.0"
CERT_MANAGER = "cert-manager.io/v1"


def _validate_core(objects: list[dict[str, Any]]) -> None:
    for obj in objects:
        if obj["apiVersion"] == CERT_MANAGER:
            continue  # a CRD: kubernetes-validate ships only built-in kinds; checked below
        kubernetes_validate.validate(obj, K8S, strict=True)


def test_cert_manager_install_is_valid() -> None:
    objects = webhook_objects(DeployOptions(image=IMAGE))
    kinds = [o["kind"] for o in objects]
    assert kinds == [
        "Namespace",
        "ServiceAccount",
        "Issuer",
        "Certificate",
        "Deployment",
        "Service",
        "PodDisruptionBudget",
        "NetworkPolicy",
        "MutatingWebhookConfiguration",
        "ValidatingWebhookConfiguration",
    ]
    _validate_core(objects)
    objects = objects[1:]
    cert = objects[2]["spec"]
    assert cert["secretName"] == "kubegpu-webhook-tls"
    assert cert["dnsNames"][0] == "kubegpu-webhook.kubegpu-system.svc"
    mutating = objects[7]
    assert mutating["metadata"]["annotations"] == {"cert-manager.io/inject-ca-from": "kubegpu-system/kubegpu-webhook"}
    hook = mutating["webhooks"][0]
    assert hook["failurePolicy"] == "Ignore" and hook["sideEffects"] == "None"
    assert hook["clientConfig"]["service"]["path"] == "/mutate"
    assert hook["rules"][0]["operations"] == ["CREATE"]
    assert hook["rules"][0]["resources"] == ["pods"]
    excluded = hook["namespaceSelector"]["matchExpressions"][0]
    assert excluded["values"] == ["kube-system", "kubegpu-system"]
    assert hook["objectSelector"]["matchExpressions"] == [
        {"key": "kubegpu.io/webhook", "operator": "NotIn", "values": ["disabled"]}
    ]
    deployment = objects[3]["spec"]["template"]["spec"]["containers"][0]
    assert deployment["image"] == IMAGE and deployment["command"] == ["kubegpu"]
    assert deployment["args"][:2] == ["webhook", "serve"]
    assert deployment["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert deployment["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert deployment["resources"]["requests"] == {"cpu": "100m", "memory": "128Mi"}
    limit = deployment["resources"]["limits"]["memory"]
    assert limit == memory_limit_quantity(Limits())
    assert int(limit.removesuffix("Mi")) * 1024 * 1024 >= memory_budget(Limits())
    args = deployment["args"]
    for flag, value in (
        ("--max-connections", 256),
        ("--max-body-bytes", 512 * 1024),
        ("--review-workers", 2),
        ("--review-queue", 64),
    ):
        assert args[args.index(flag) + 1] == str(value)
    policy = objects[6]["spec"]
    assert policy["policyTypes"] == ["Ingress", "Egress"] and policy["egress"] == []
    assert policy["ingress"] == [{"ports": [{"protocol": "TCP", "port": 8443}]}]


def test_memory_limit_follows_the_limits() -> None:
    small = webhook_objects(DeployOptions(image=IMAGE, limits=Limits(max_connections=64)))
    big = webhook_objects(DeployOptions(image=IMAGE, limits=Limits(max_body_bytes=2 * 1024 * 1024)))

    def limit(objects: list[dict[str, Any]]) -> int:
        deployment = next(o for o in objects if o["kind"] == "Deployment")
        container = deployment["spec"]["template"]["spec"]["containers"][0]
        return int(container["resources"]["limits"]["memory"].removesuffix("Mi"))

    assert limit(small) < limit(webhook_objects(DeployOptions(image=IMAGE))) < limit(big)


def test_ca_bundle_install_is_valid(tmp_path: Path) -> None:
    ca, _, _ = make_certs(tmp_path)
    result = CliRunner().invoke(
        app, ["gen", "webhook", "--image", IMAGE, "--ca-bundle", str(ca), "--failure-policy", "Fail", "--no-validating"]
    )
    assert result.exit_code == 0, result.output
    assert "failurePolicy Fail: fail-closed: if the webhook is down" in result.output
    objects = [d for d in yaml.safe_load_all(result.output) if d]
    assert [o["kind"] for o in objects] == [
        "Namespace",
        "ServiceAccount",
        "Deployment",
        "Service",
        "PodDisruptionBudget",
        "NetworkPolicy",
        "MutatingWebhookConfiguration",
    ]
    _validate_core(objects)
    bundle = objects[-1]["webhooks"][0]["clientConfig"]["caBundle"]
    assert base64.b64decode(bundle) == ca.read_bytes()


def test_bad_options_are_one_line_errors(tmp_path: Path) -> None:
    runner = CliRunner()
    bad = runner.invoke(app, ["gen", "webhook", "--image", IMAGE, "--failure-policy", "Sometimes"])
    assert bad.exit_code == 2 and "failurePolicy must be Ignore or Fail" in bad.output
    for args, message in (
        (["--no-mutating", "--no-validating"], "would do nothing"),
        (["--allow-from", "10.0.0.0/33"], "--allow-from"),
        (["--select", "KG9999"], "names unknown rule 'KG9999'"),
    ):
        bad = runner.invoke(app, ["gen", "webhook", "--image", IMAGE, *args])
        assert bad.exit_code == 2 and message in bad.output, args
    zero = runner.invoke(app, ["gen", "webhook", "--image", IMAGE, "--review-workers", "0"])
    assert zero.exit_code == 2 and "review-workers must be at least 1" in zero.output
    default = runner.invoke(app, ["gen", "webhook"])  # no --image: this version's release image
    assert default.exit_code == 0 and f"image: {DEFAULT_IMAGE}\n" in default.output
    empty = runner.invoke(app, ["gen", "webhook", "--image", " "])
    assert empty.exit_code == 2 and "image" in empty.output
    not_pem = tmp_path / "ca.pem"
    not_pem.write_text("hello")
    bad = runner.invoke(app, ["gen", "webhook", "--image", IMAGE, "--ca-bundle", str(not_pem)])
    assert bad.exit_code == 2 and "not a PEM certificate" in bad.output


@pytest.mark.parametrize("configz", [True, False])
def test_audit_rbac_is_valid_and_read_only(configz: bool) -> None:
    objects = rbac_objects(RbacOptions(configz=configz))
    _validate_core(objects)
    verbs = {v for rule in audit_rules(configz) for v in rule["verbs"]}
    assert verbs == ({"list", "get"} if configz else {"list"})
    resources = {r for rule in audit_rules(configz) for r in rule["resources"]}
    assert ("nodes/proxy" in resources) is configz
    assert resources - {"nodes/proxy"} == {
        "nodes",
        "pods",
        "noderesourcetopologies",
        "topologies",
        "clusterqueues",
        "workloads",
        "poddisruptionbudgets",
        "priorityclasses",
        "persistentvolumeclaims",
        "persistentvolumes",
        "localqueues",
    }


def test_gen_audit_rbac_cli() -> None:
    result = CliRunner().invoke(app, ["gen", "audit-rbac", "-n", "ops"])
    assert result.exit_code == 0
    objects = [d for d in yaml.safe_load_all(result.output) if d]
    binding = objects[2]
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "kubegpu-audit", "namespace": "ops"}]
    _validate_core(objects)


def test_rule_selection_is_a_mounted_config() -> None:
    result = CliRunner().invoke(
        app, ["gen", "webhook", "--image", IMAGE, "--select", "KG2", "--ignore", "KG201", "--no-namespace-object"]
    )
    assert result.exit_code == 0, result.output
    objects = [d for d in yaml.safe_load_all(result.output) if d]
    _validate_core(objects)
    config = next(o for o in objects if o["kind"] == "ConfigMap")
    assert config["data"]["kubegpu.toml"] == 'select = ["KG2"]\nignore = ["KG201"]\n'
    deployment = next(o for o in objects if o["kind"] == "Deployment")
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert container["args"][-2:] == ["--config", "/etc/kubegpu/config/kubegpu.toml"]
    assert {"name": "config", "mountPath": "/etc/kubegpu/config", "readOnly": True} in container["volumeMounts"]
