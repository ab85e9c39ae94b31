"""The RBAC the live audit needs, and nothing more: `list` on what it lists; configz only as an opt-in role;
and a Job that runs the audit in the cluster with it.

`get` on nodes/proxy reaches the kubelet's whole API (a websocket GET on /exec runs commands in any
container), so the default role leaves it out; `--with-configz` adds it as a separate, named role.

Verbs match what kubegpu.live.client sends (rbac.authorization.k8s.io/v1, batch/v1, Kubernetes v1.35).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml

from kubegpu import DEFAULT_IMAGE
from kubegpu.errors import InputError


@dataclass(frozen=True)
class RbacOptions:
    """Who gets the role: a ServiceAccount (namespace/name); `configz` adds the nodes/proxy role; `job` adds a
    Job that runs `kubegpu audit --cluster` as that ServiceAccount from `image`."""

    service_account: str = "kubegpu-audit"
    namespace: str = "kubegpu-system"
    name: str = "kubegpu-audit"
    configz: bool = False
    job: bool = False
    image: str = DEFAULT_IMAGE


CONFIGZ_RULES: tuple[dict[str, Any], ...] = ({"apiGroups": [""], "resources": ["nodes/proxy"], "verbs": ["get"]},)


def audit_rules(configz: bool = False) -> list[dict[str, Any]]:
    """PolicyRules for every request the audit makes (see ClusterReader); `configz`: the opt-in role's too."""
    rules: list[dict[str, Any]] = [
        {"apiGroups": [""], "resources": ["nodes", "pods"], "verbs": ["list"]},
        {"apiGroups": ["topology.node.k8s.io"], "resources": ["noderesourcetopologies"], "verbs": ["list"]},
        {
            "apiGroups": ["kueue.x-k8s.io"],
            "resources": ["topologies", "clusterqueues", "workloads", "localqueues"],
            "verbs": ["list"],
        },
        # what `kubegpu defrag --cluster` reads besides: which pods may be evicted, and where they may run again
        {"apiGroups": ["policy"], "resources": ["poddisruptionbudgets"], "verbs": ["list"]},
        {"apiGroups": ["scheduling.k8s.io"], "resources": ["priorityclasses"], "verbs": ["list"]},
        {"apiGroups": [""], "resources": ["persistentvolumeclaims", "persistentvolumes"], "verbs": ["list"]},
    ]
    if configz:
        rules.extend(dict(rule) for rule in CONFIGZ_RULES)
    return rules


def _role_and_binding(
    name: str, rules: list[dict[str, Any]], options: RbacOptions, labels: dict[str, str]
) -> list[dict[str, Any]]:
    return [
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": name, "labels": labels},
            "rules": rules,
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": name, "labels": labels},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
            "subjects": [{"kind": "ServiceAccount", "name": options.service_account, "namespace": options.namespace}],
        },
    ]


def rbac_objects(options: RbacOptions) -> list[dict[str, Any]]:
    """ServiceAccount, the read-only ClusterRole and its binding; with `configz`, the configz role and binding."""
    labels = {"app.kubernetes.io/name": options.name, "app.kubernetes.io/part-of": "kubegpu"}
    extra = (
        _role_and_binding(f"{options.name}-configz", [dict(r) for r in CONFIGZ_RULES], options, labels)
        if options.configz
        else []
    )
    return [
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": options.service_account, "namespace": options.namespace, "labels": labels},
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": options.name, "labels": labels},
            "rules": audit_rules(),
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": options.name, "labels": labels},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": options.name},
            "subjects": [{"kind": "ServiceAccount", "name": options.service_account, "namespace": options.namespace}],
        },
        *extra,
    ]


def audit_job(options: RbacOptions) -> dict[str, Any]:
    """A Job that prints the audit of its own cluster as JSON (`kubectl logs job/NAME`)."""
    if not options.image.strip() or any(ch.isspace() for ch in options.image):
        raise InputError(f"--image must be a container image reference, not {options.image!r}")
    labels = {"app.kubernetes.io/name": options.name, "app.kubernetes.io/part-of": "kubegpu"}
    args = ["audit", "--cluster", "-o", "json"] + ([] if options.configz else ["--no-configz"])
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": options.name, "namespace": options.namespace, "labels": labels},
        "spec": {
            "backoffLimit": 0,
            "ttlSecondsAfterFinished": 86400,
            "template": {
                "metadata": {"labels": dict(labels)},
                "spec": {
                    "serviceAccountName": options.service_account,
                    "automountServiceAccountToken": True,  # the in-cluster credentials the audit reads with
                    "restartPolicy": "Never",
                    "securityContext": {
                        "runAsNonRoot": True,
                        "runAsUser": 65532,
                        "runAsGroup": 65532,
                        "seccompProfile": {"type": "RuntimeDefault"},
                    },
                    "containers": [
                        {
                            "name": "audit",
                            "image": options.image,
                            "command": ["kubegpu"],
                            "args": args,
                            "resources": {"requests": {"cpu": "100m", "memory": "256Mi"}, "limits": {"memory": "1Gi"}},
                            "securityContext": {
                                "allowPrivilegeEscalation": False,
                                "readOnlyRootFilesystem": True,
                                "capabilities": {"drop": ["ALL"]},
                            },
                        }
                    ],
                },
            },
        },
    }


def render_rbac(options: RbacOptions) -> str:
    header = (
        "# Read-only access for `kubegpu audit --cluster` and `kubegpu defrag --cluster`: list nodes,\n"
        "# pods, NodeResourceTopologies, Kueue Topologies/ClusterQueues/Workloads/LocalQueues, and for defrag\n"
        "# PodDisruptionBudgets, PriorityClasses, PersistentVolumeClaims and PersistentVolumes\n"
        "# (a missing CRD is fine: the audit notes it).\n"
    )
    if options.configz:
        header += (
            "# The separate -configz role grants nodes/proxy get, to read each kubelet's /configz\n"
            "# through the API server. It is NOT read-only: it reaches the kubelet's whole API,\n"
            "# including exec into any container on the node. Delete that role and binding after\n"
            "# the audit; without it the audit notes the 403 and skips the kubelet-config checks.\n"
        )
    else:
        header += (
            "# Kubelet configurations (/configz) are not readable with this role; the audit notes\n"
            "# it and skips the kubelet-config checks (see --with-configz, or audit --snapshot\n"
            "# with configz files).\n"
        )
    objects = rbac_objects(options)
    if options.job:
        header += (
            f"# The Job runs the audit once as {options.service_account}: kubectl logs -n {options.namespace} "
            f"job/{options.name}\n"
        )
        objects.append(audit_job(options))
    return header + "---\n" + "---\n".join(yaml.safe_dump(o, sort_keys=False, width=100) for o in objects)
