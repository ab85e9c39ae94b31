"""Manifests that run the webhook: Namespace, Deployment, Service, PDB, NetworkPolicy, webhook
configurations and TLS.

Fields follow admissionregistration.k8s.io/v1, apps/v1 and networking.k8s.io/v1 (Kubernetes v1.35),
cert-manager v1. The memory limit is the budget of the server's limits (limits.memory_budget); the server is
told the timeoutSeconds and failurePolicy the configurations are written with, so it answers in time and
as that policy would.
"""

from __future__ import annotations

import base64
import ipaddress
import json
from dataclasses import dataclass, field
from typing import Any

import yaml

from kubegpu import DEFAULT_IMAGE
from kubegpu.errors import InputError
from kubegpu.lint import all_rules
from kubegpu.lint.config import parse_config
from kubegpu.webhook.limits import Limits, memory_limit_quantity
from kubegpu.webhook.review import DEFAULT_FAILURE_POLICY, MAX_CONTAINERS, FailurePolicy, WebhookConfig

OPT_OUT_LABEL = "kubegpu.io/webhook"
TLS_MOUNT = "/etc/kubegpu/tls"
CONFIG_MOUNT = "/etc/kubegpu/config"
PORT = 8443


@dataclass(frozen=True)
class DeployOptions:
    """Where and how to run the webhook; `ca_bundle` (PEM) replaces cert-manager when given.

    `image` is an image with kubegpu installed (`kubegpu` on PATH): by default the release image of this
    version, built from the repository's Dockerfile. timeoutSeconds is `limits.timeout_seconds`.
    """

    image: str = DEFAULT_IMAGE
    namespace: str = "kubegpu-system"
    name: str = "kubegpu-webhook"
    replicas: int = 2
    failure_policy: FailurePolicy = DEFAULT_FAILURE_POLICY
    validating: bool = True
    deny_severity: str = "error"
    ca_bundle: str | None = None
    limits: Limits = field(default_factory=Limits)
    max_containers: int = MAX_CONTAINERS
    namespace_object: bool = True
    mutating: bool = True
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    allow_from: tuple[str, ...] = ()  # CIDRs the NetworkPolicy admits (empty: any source)

    def rules_config(self) -> str | None:
        """The kubegpu.toml that selects the rules, None when every rule applies."""
        if not self.select and not self.ignore:
            return None
        lines = [
            f"{key} = {json.dumps(list(value), separators=(',', ':'))}"
            for key, value in (("select", self.select), ("ignore", self.ignore))
            if value
        ]
        return "\n".join(lines) + "\n"


HEADER = """\
# kubegpu admission webhook: applies the safe fixes of the lint rules to GPU pods at creation
# (/mutate) and denies GPU pods with findings at or above --deny-severity (/validate).
#
# failurePolicy {failure}: {failure_why}
# namespaceSelector: kube-system and {namespace} (the webhook's own pods) are never sent to the
#   webhook, so it can never block its own restart or the control plane's pods; label a namespace
#   or a pod {opt_out}=disabled to opt it out (namespaceSelector, objectSelector).
#   Pods without accelerators are sent but left untouched.
# limits: at most {connections} connections, {body} KiB request bodies, {workers} reviews at once and
#   {queue} waiting (then 503, a webhook failure that failurePolicy {failure} governs); memory limit
#   {memory} is what these limits can use. NetworkPolicy: only TCP {port} in, nothing out.
# rules: only Pod CREATE (pod specs are immutable after creation; UPDATEs are not sent).
# sideEffects None and a {timeout}s timeout: the webhook only reads the review it is sent. A review
#   not finished {deadline:g}s after it arrived, or of a GPU pod of more than {containers_cap} containers, is answered
#   as failurePolicy {failure} would have it: {unfinished}.
# reinvocationPolicy IfNeeded: if a later mutating webhook adds a container, the pod is sent again
#   so the new container gets its /dev/shm mount too.
# TLS: {tls}
"""

FAILURE_WHY = {
    "Ignore": "fail-open: if the webhook is down, slow or overloaded, pods are admitted\n#   "
    "unchanged and unchecked (the fixes are a convenience; an outage must not stop every\n#   "
    "pod in the cluster).",
    "Fail": "fail-closed: if the webhook is down, slow or overloaded, every pod CREATE in the\n#   "
    "selected namespaces is rejected (enforcement wins over availability: keep replicas\n#   "
    ">= 2 and the PodDisruptionBudget).",
}


UNFINISHED_ANSWER = {
    "Ignore": "admitted unchanged, with a warning",
    "Fail": "denied, saying why",
}


def _labels(options: DeployOptions) -> dict[str, str]:
    return {"app.kubernetes.io/name": options.name, "app.kubernetes.io/part-of": "kubegpu"}


def _meta(options: DeployOptions, namespaced: bool = True, **extra: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": options.name, "labels": _labels(options), **extra}
    if namespaced:
        meta["namespace"] = options.namespace
    return meta


def _deployment(options: DeployOptions) -> dict[str, Any]:
    probe = {"scheme": "HTTPS", "port": PORT}
    limits = options.limits
    args = [
        "webhook",
        "serve",
        "--tls-cert",
        f"{TLS_MOUNT}/tls.crt",
        "--tls-key",
        f"{TLS_MOUNT}/tls.key",
        "--port",
        str(PORT),
        "--deny-severity",
        options.deny_severity,
        "--exclude-namespace",
        options.namespace,
        "--max-connections",
        str(limits.max_connections),
        "--max-body-bytes",
        str(limits.max_body_bytes),
        "--review-workers",
        str(limits.review_workers),
        "--review-queue",
        str(limits.review_queue),
        "--timeout-seconds",
        str(limits.timeout_seconds),
        "--failure-policy",
        options.failure_policy,
        "--max-containers",
        str(options.max_containers),
    ]
    mounts = [{"name": "tls", "mountPath": TLS_MOUNT, "readOnly": True}]
    volumes: list[dict[str, Any]] = [{"name": "tls", "secret": {"secretName": f"{options.name}-tls"}}]
    if options.rules_config() is not None:
        args += ["--config", f"{CONFIG_MOUNT}/kubegpu.toml"]
        mounts.append({"name": "config", "mountPath": CONFIG_MOUNT, "readOnly": True})
        volumes.append({"name": "config", "configMap": {"name": f"{options.name}-config"}})
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": _meta(options),
        "spec": {
            "replicas": options.replicas,
            "selector": {"matchLabels": _labels(options)},
            "template": {
                "metadata": {"labels": _labels(options)},
                "spec": {
                    "serviceAccountName": options.name,
                    "automountServiceAccountToken": False,
                    "securityContext": {
                        "runAsNonRoot": True,
                        "runAsUser": 65532,
                        "seccompProfile": {"type": "RuntimeDefault"},
                    },
                    "affinity": {
                        "podAntiAffinity": {
                            "preferredDuringSchedulingIgnoredDuringExecution": [
                                {
                                    "weight": 100,
                                    "podAffinityTerm": {
                                        "labelSelector": {"matchLabels": _labels(options)},
                                        "topologyKey": "kubernetes.io/hostname",
                                    },
                                }
                            ]
                        }
                    },
                    "containers": [
                        {
                            "name": "webhook",
                            "image": options.image,
                            "imagePullPolicy": "IfNotPresent",
                            "command": ["kubegpu"],
                            "args": args,
                            "ports": [{"name": "https", "containerPort": PORT, "protocol": "TCP"}],
                            "readinessProbe": {
                                "httpGet": {"path": "/readyz", **probe},
                                "periodSeconds": 5,
                                "failureThreshold": 2,
                            },
                            "livenessProbe": {
                                "httpGet": {"path": "/healthz", **probe},
                                "initialDelaySeconds": 5,
                                "periodSeconds": 10,
                                "failureThreshold": 3,
                            },
                            "resources": {
                                "requests": {"cpu": "100m", "memory": "128Mi"},
                                "limits": {"memory": memory_limit_quantity(limits)},
                            },
                            "securityContext": {
                                "allowPrivilegeEscalation": False,
                                "readOnlyRootFilesystem": True,
                                "capabilities": {"drop": ["ALL"]},
                            },
                            "volumeMounts": mounts,
                        }
                    ],
                    "volumes": volumes,
                },
            },
        },
    }


def _webhook(options: DeployOptions, kind: str, path: str, ca: str | None) -> dict[str, Any]:
    client: dict[str, Any] = {
        "service": {"name": options.name, "namespace": options.namespace, "path": path, "port": 443}
    }
    if ca is not None:
        client["caBundle"] = ca
    hook: dict[str, Any] = {
        "name": f"{path.strip('/')}.{options.name}.kubegpu.io",
        "admissionReviewVersions": ["v1"],
        "clientConfig": client,
        "failurePolicy": options.failure_policy,
        "matchPolicy": "Equivalent",
        "sideEffects": "None",
        "timeoutSeconds": options.limits.timeout_seconds,
        "namespaceSelector": {
            "matchExpressions": [
                {
                    "key": "kubernetes.io/metadata.name",
                    "operator": "NotIn",
                    "values": sorted({"kube-system", options.namespace}),
                },
                {"key": OPT_OUT_LABEL, "operator": "NotIn", "values": ["disabled"]},
            ]
        },
        "objectSelector": {
            "matchExpressions": [
                {"key": OPT_OUT_LABEL, "operator": "NotIn", "values": ["disabled"]},
            ]
        },
        "rules": [
            {
                "apiGroups": [""],
                "apiVersions": ["v1"],
                "operations": ["CREATE"],
                "resources": ["pods"],
                "scope": "Namespaced",
            }
        ],
    }
    if kind == "MutatingWebhookConfiguration":
        hook["reinvocationPolicy"] = "IfNeeded"
    annotations = {} if ca is not None else {"cert-manager.io/inject-ca-from": f"{options.namespace}/{options.name}"}
    meta = _meta(options, namespaced=False)
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind, "metadata": meta, "webhooks": [hook]}


def _cert_manager(options: DeployOptions) -> list[dict[str, Any]]:
    service = f"{options.name}.{options.namespace}.svc"
    return [
        {
            "apiVersion": "cert-manager.io/v1",
            "kind": "Issuer",
            "metadata": _meta(options, name=f"{options.name}-selfsigned"),
            "spec": {"selfSigned": {}},
        },
        {
            "apiVersion": "cert-manager.io/v1",
            "kind": "Certificate",
            "metadata": _meta(options),
            "spec": {
                "secretName": f"{options.name}-tls",
                "dnsNames": [service, f"{service}.cluster.local"],
                "issuerRef": {"name": f"{options.name}-selfsigned", "kind": "Issuer"},
                "privateKey": {"algorithm": "ECDSA", "size": 256, "rotationPolicy": "Always"},
                "duration": "2160h",
                "renewBefore": "360h",
            },
        },
    ]


def _network_policy(options: DeployOptions) -> dict[str, Any]:
    """Only the webhook port in (the API server, probes, metrics scrapes); nothing out."""
    ingress: dict[str, Any] = {"ports": [{"protocol": "TCP", "port": PORT}]}
    if options.allow_from:
        ingress["from"] = [{"ipBlock": {"cidr": cidr}} for cidr in options.allow_from]
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": _meta(options),
        "spec": {
            "podSelector": {"matchLabels": _labels(options)},
            "policyTypes": ["Ingress", "Egress"],
            "ingress": [ingress],
            "egress": [],
        },
    }


def _namespace(options: DeployOptions) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {
            "name": options.namespace,
            "labels": {"app.kubernetes.io/part-of": "kubegpu", "pod-security.kubernetes.io/enforce": "restricted"},
        },
    }


def encode_ca_bundle(pem: str, source: str) -> str:
    """A PEM CA certificate as the base64 `caBundle` field; InputError if it is not PEM."""
    if "-----BEGIN CERTIFICATE-----" not in pem:
        raise InputError("not a PEM certificate (expected -----BEGIN CERTIFICATE-----)", file=source)
    return base64.b64encode(pem.encode()).decode()


def webhook_objects(options: DeployOptions) -> list[dict[str, Any]]:
    """Every object of the webhook install, in apply order."""
    WebhookConfig(failure_policy=options.failure_policy, max_containers=options.max_containers)  # as the server checks
    if not options.image.strip():
        raise InputError("an image is required (an image with kubegpu installed)")
    if options.replicas < 1:
        raise InputError("replicas must be at least 1")
    if not options.mutating and not options.validating:
        raise InputError("neither mutating nor validating: the webhook would do nothing")
    for cidr in options.allow_from:
        try:
            ipaddress.ip_network(cidr)
        except ValueError as err:
            raise InputError(f"--allow-from: {err}") from err
    parse_config(
        {"select": list(options.select), "ignore": list(options.ignore)}, "--select/--ignore", all_rules()
    )  # unknown rule names are errors here
    objects: list[dict[str, Any]] = [_namespace(options)] if options.namespace_object else []
    objects.append(
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": _meta(options),
            "automountServiceAccountToken": False,
        }
    )
    if options.ca_bundle is None:
        objects += _cert_manager(options)
    config = options.rules_config()
    if config is not None:
        objects.append(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": _meta(options, name=f"{options.name}-config"),
                "data": {"kubegpu.toml": config},
            }
        )
    objects += [
        _deployment(options),
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": _meta(options),
            "spec": {
                "selector": _labels(options),
                "ports": [{"name": "https", "port": 443, "targetPort": "https", "protocol": "TCP"}],
            },
        },
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": _meta(options),
            "spec": {"minAvailable": 1, "selector": {"matchLabels": _labels(options)}},
        },
        _network_policy(options),
    ]
    if options.mutating:
        objects.append(_webhook(options, "MutatingWebhookConfiguration", "/mutate", options.ca_bundle))
    if options.validating:
        objects.append(_webhook(options, "ValidatingWebhookConfiguration", "/validate", options.ca_bundle))
    return objects


class _Dumper(yaml.SafeDumper):
    """Multi-line strings (the rules' kubegpu.toml) as literal blocks."""


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)


def render_webhook(options: DeployOptions) -> str:
    """The objects as one YAML stream with a header explaining each choice."""
    objects = webhook_objects(options)  # checks the options first
    tls = (
        f"cert-manager issues the {options.name}-tls Secret and injects the CA into both configurations."
        if options.ca_bundle is None
        else f"caBundle is the CA you gave; create the Secret {options.name}-tls (tls.crt, tls.key)"
        f"\n#   in {options.namespace} for the serving certificate it signed."
    )
    header = HEADER.format(
        failure=options.failure_policy,
        failure_why=FAILURE_WHY[options.failure_policy],
        namespace=options.namespace,
        opt_out=OPT_OUT_LABEL,
        timeout=options.limits.timeout_seconds,
        deadline=options.limits.deadline_seconds,
        containers_cap=options.max_containers,
        unfinished=UNFINISHED_ANSWER[options.failure_policy],
        tls=tls,
        connections=options.limits.max_connections,
        body=options.limits.max_body_bytes // 1024,
        workers=options.limits.review_workers,
        queue=options.limits.review_queue,
        memory=memory_limit_quantity(options.limits),
        port=PORT,
    )
    body = "---\n".join(yaml.dump(o, Dumper=_Dumper, sort_keys=False, width=100) for o in objects)
    return header + "---\n" + body
