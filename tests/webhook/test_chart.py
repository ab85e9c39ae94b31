"""The Helm chart charts/kubegpu-webhook: `helm lint --strict`, `helm template` in every TLS mode,
every object valid (Kubernetes 1.35 schemas, cert-manager objects against a minimal schema), and
the same objects as `kubegpu gen webhook` for the same settings."""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import pytest
import yaml
from cryptography import x509
from cryptography.x509.oid import ExtensionOID

from kubegpu import DEFAULT_IMAGE
from kubegpu.webhook.deploy import DeployOptions, webhook_objects
from kubegpu.webhook.limits import Limits
from tests.webhook.certs import make_certs

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "charts" / "kubegpu-webhook"
CERT_MANAGER_SCHEMA = json.loads((Path(__file__).parent / "schemas" / "cert-manager-v1.json").read_text())
HELM = shutil.which("helm")
K8S = "1.35.0"
REPOSITORY = "registry.example.com/platform/kubegpu"
HELM_ONLY_LABELS = ("app.kubernetes.io/managed-by", "helm.sh/chart")

pytestmark = pytest.mark.skipif(HELM is None, reason="helm is not installed (.ci/run installs it)")


def _helm(*args: str) -> subprocess.CompletedProcess[str]:
    assert HELM is not None
    return subprocess.run([HELM, *args], capture_output=True, text=True, timeout=120, check=False)


def _template(namespace: str = "kubegpu-system", *sets: str) -> list[dict[str, Any]]:
    args = [
        "template",
        "kubegpu-webhook",
        str(CHART),
        "--namespace",
        namespace,
        "--set",
        f"image.repository={REPOSITORY}",
    ]
    for item in sets:
        args += ["--set", item]
    result = _helm(*args)
    assert result.returncode == 0, result.stderr
    return [d for d in yaml.safe_load_all(result.stdout) if d]


def _validate(objects: list[dict[str, Any]]) -> None:
    for obj in objects:
        if obj["apiVersion"] == "cert-manager.io/v1":
            jsonschema.validate(obj, CERT_MANAGER_SCHEMA)
        else:
            kubernetes_validate.validate(obj, K8S, strict=True)


def _by_key(objects: list[dict[str, Any]], helm: bool) -> dict[tuple[str, str], dict[str, Any]]:
    out = {}
    for obj in objects:
        if helm:
            for label in HELM_ONLY_LABELS:
                obj["metadata"]["labels"].pop(label)
        out[(obj["kind"], obj["metadata"]["name"])] = obj
    return out


def test_helm_lint_strict() -> None:
    result = _helm("lint", "--strict", str(CHART), "--set", f"image.repository={REPOSITORY}")
    assert result.returncode == 0, result.stdout + result.stderr


def test_values_schema_rejects_bad_values() -> None:
    for bad in (
        "webhook.failurePolicy=Sometimes",
        "limits.maxBodyBytes=99999999",
        "tls.mode=acme",
        "replicaCount=0",
        "unknownKey=1",
    ):
        result = _helm("template", "x", str(CHART), "--set", f"image.repository={REPOSITORY}", "--set", bad)
        assert result.returncode != 0 and "values don't meet the specifications" in result.stderr, bad
    missing = _helm("template", "x", str(CHART), "--set", "image.repository=")
    assert missing.returncode != 0 and "image.repository is required" in missing.stderr


def test_the_chart_defaults_to_the_release_image() -> None:
    result = _helm("template", "x", str(CHART))
    assert result.returncode == 0, result.stderr
    images = {
        c["image"]
        for obj in yaml.safe_load_all(result.stdout)
        if obj and obj["kind"] == "Deployment"
        for c in obj["spec"]["template"]["spec"]["containers"]
    }
    assert images == {DEFAULT_IMAGE}


CA_PEM_B64 = base64.b64encode(b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n").decode()
CASES: dict[str, tuple[dict[str, Any], str, tuple[str, ...]]] = {
    "defaults (cert-manager)": ({}, "kubegpu-system", ()),
    "fail-closed, provided CA, mutate only": (
        {"failure_policy": "Fail", "validating": False, "ca_bundle": CA_PEM_B64},
        "kubegpu-system",
        ("webhook.failurePolicy=Fail", "webhook.validating=false", "tls.mode=provided", f"tls.caBundle={CA_PEM_B64}"),
    ),
    "rules, limits, validate only, own namespace": (
        {
            "replicas": 3,
            "deny_severity": "warning",
            "mutating": False,
            "select": ("KG2", "dshm-missing"),
            "ignore": ("KG201",),
            "allow_from": ("10.0.0.0/8", "192.168.1.0/24"),
            "limits": Limits(
                max_connections=512, max_body_bytes=1024 * 1024, review_workers=4, review_queue=32, timeout_seconds=10
            ),
            "max_containers": 64,
        },
        "gpu-ops",
        (
            "replicaCount=3",
            "webhook.denySeverity=warning",
            "webhook.mutating=false",
            "rules.select={KG2,dshm-missing}",
            "rules.ignore={KG201}",
            "webhook.timeoutSeconds=10",
            "networkPolicy.ingressFrom={10.0.0.0/8,192.168.1.0/24}",
            "limits.maxConnections=512",
            "limits.maxBodyBytes=1048576",
            "limits.reviewWorkers=4",
            "limits.reviewQueue=32",
            "limits.maxContainers=64",
        ),
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_chart_and_gen_webhook_write_the_same_objects(case: str) -> None:
    options, namespace, sets = CASES[case]
    chart = _template(namespace, *sets)
    _validate(chart)
    gen = webhook_objects(DeployOptions(image=f"{REPOSITORY}:0.1.0", namespace=namespace, **options))
    assert gen[0]["kind"] == "Namespace"  # the one object helm leaves to `--create-namespace`
    ours, theirs = _by_key(gen[1:], helm=False), _by_key(chart, helm=True)
    assert sorted(ours) == sorted(theirs)
    for key in ours:
        assert ours[key] == theirs[key], key


def test_self_signed_bootstrap_is_a_working_pair() -> None:
    objects = _template("kubegpu-system", "tls.mode=selfSigned")
    _validate(objects)
    kinds = sorted(o["kind"] for o in objects)
    assert "Certificate" not in kinds and "Issuer" not in kinds
    secret = next(o for o in objects if o["kind"] == "Secret")
    assert secret["type"] == "kubernetes.io/tls" and secret["metadata"]["name"] == "kubegpu-webhook-tls"
    ca = x509.load_pem_x509_certificate(base64.b64decode(secret["data"]["ca.crt"]))
    leaf = x509.load_pem_x509_certificate(base64.b64decode(secret["data"]["tls.crt"]))
    leaf.verify_directly_issued_by(ca)
    names = leaf.extensions.get_extension_for_oid(ExtensionOID.SUBJECT_ALTERNATIVE_NAME).value
    assert "kubegpu-webhook.kubegpu-system.svc" in names.get_values_for_type(x509.DNSName)
    for kind in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"):
        hook = next(o for o in objects if o["kind"] == kind)
        assert hook["webhooks"][0]["clientConfig"]["caBundle"] == secret["data"]["ca.crt"]
        assert "annotations" not in hook["metadata"]


def test_existing_issuer_is_referenced_not_created() -> None:
    objects = _template(
        "kubegpu-system", "tls.certManager.issuerRef.name=corp-ca", "tls.certManager.issuerRef.kind=ClusterIssuer"
    )
    _validate(objects)
    assert not any(o["kind"] == "Issuer" for o in objects)
    cert = next(o for o in objects if o["kind"] == "Certificate")
    assert cert["spec"]["issuerRef"] == {"name": "corp-ca", "kind": "ClusterIssuer"}


def test_gen_webhook_cert_manager_objects_pass_the_cert_manager_schema(tmp_path: Path) -> None:
    objects = webhook_objects(DeployOptions(image=f"{REPOSITORY}:0.1.0"))
    _validate(objects)
    ca, _, _ = make_certs(tmp_path)
    provided = webhook_objects(
        DeployOptions(image=f"{REPOSITORY}:0.1.0", ca_bundle=base64.b64encode(ca.read_bytes()).decode())
    )
    _validate(provided)
