"""`gen loadbench-job`: run `kubegpu loadbench` on one node against the model cache its servers read.

A batch/v1 Job (Kubernetes v1.35) pinned by the node's `kubernetes.io/hostname` label (or any node selector),
mounting the cache PVC or hostPath read-only, printing the loadbench JSON to its log. It goes through the
scheduler (no `nodeName`), so taints and capacity are honoured; requests equal limits (Guaranteed QoS) so the
CPU manager can give it whole cores.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from kubegpu import DEFAULT_IMAGE  # the kubegpu image the Job runs; `--image` overrides it
from kubegpu.errors import InputError
from kubegpu.generate.output import Generated, Note, OutFile, YamlDoc
from kubegpu.manifests.podsecurity import read_only_mount, restricted_context
from kubegpu.units.quantity import parse_quantity

HOSTNAME_LABEL = "kubernetes.io/hostname"
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_LABEL_KEY = re.compile(r"^([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
_LABEL_VALUE = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$")
_TOLERATIONS = (
    {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "amd.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
)


@dataclass(frozen=True)
class LoadbenchJobOptions:
    """What `gen loadbench-job` was asked for."""

    pvc: str | None = None
    host_path: str | None = None
    node: str | None = None
    node_selector: tuple[tuple[str, str], ...] = ()
    model_path: str = ""  # below the mount; empty: the whole cache
    mount_path: str = "/models"
    image: str = DEFAULT_IMAGE
    namespace: str = "default"
    name: str = "kubegpu-loadbench"
    threads: str = "1,4,16"
    budget_seconds: int = 600
    cpus: str = "8"
    memory: str = "16Gi"
    gpus: int = 0
    gpu_resource: str = "nvidia.com/gpu"


def _check(options: LoadbenchJobOptions) -> None:
    if (options.pvc is None) == (options.host_path is None):
        raise InputError("give the model cache as exactly one of --pvc NAME or --host-path PATH")
    if (
        options.pvc is not None
        and not _DNS_LABEL.match(options.pvc)
        and not re.match(r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$", options.pvc)
    ):
        raise InputError(f"--pvc must be a claim name (lower-case DNS name), not {options.pvc!r}")
    if options.host_path is not None and not options.host_path.startswith("/"):
        raise InputError(f"--host-path must be an absolute path, not {options.host_path!r}")
    if options.node is None and not options.node_selector:
        raise InputError("pin the Job with --node NAME or --node-selector KEY=VALUE: a load rate is a node's")
    for key, value in options.node_selector:
        if not _LABEL_KEY.match(key) or not _LABEL_VALUE.match(value) or len(value) > 63:
            raise InputError(f"--node-selector {key}={value}: not a valid label key and value")
    if not options.mount_path.startswith("/"):
        raise InputError(f"--mount-path must be absolute, not {options.mount_path!r}")
    if ".." in options.model_path.split("/") or options.model_path.startswith("/"):
        raise InputError(f"--model-path must be relative to the mount, not {options.model_path!r}")
    if not _DNS_LABEL.match(options.name) or len(options.name) > 52:
        raise InputError(f"--name must be a DNS label of at most 52 characters, not {options.name!r}")
    if not _DNS_LABEL.match(options.namespace):
        raise InputError(f"--namespace must be a DNS label, not {options.namespace!r}")
    if not options.image or any(ch.isspace() for ch in options.image):
        raise InputError(f"--image must be a container image reference, not {options.image!r}")
    if not re.match(r"^\d+(,\d+)*$", options.threads) or "0" in options.threads.split(","):
        raise InputError(f"--threads must be comma-separated whole numbers of at least 1, not {options.threads!r}")
    if options.budget_seconds < 10:
        raise InputError(f"--budget-seconds must be at least 10, not {options.budget_seconds}")
    if options.gpus < 0:
        raise InputError(f"--gpus must not be negative, not {options.gpus}")
    for label, value in (("--cpus", options.cpus), ("--memory", options.memory)):
        try:
            parse_quantity(value)
        except InputError as err:
            raise InputError(f"{label}: {err.message}") from err


def generate(options: LoadbenchJobOptions) -> Generated:
    """The Job, with comments on the choices a reader should check."""
    _check(options)
    selector = dict(options.node_selector)
    if options.node is not None:
        selector[HOSTNAME_LABEL] = options.node
    target = options.mount_path.rstrip("/") or "/"
    if options.model_path:
        target = f"{target.rstrip('/')}/{options.model_path.strip('/')}"
    limits: dict[str, str] = {"cpu": options.cpus, "memory": options.memory}
    if options.gpus:
        limits[options.gpu_resource] = str(options.gpus)
    command = [
        "kubegpu",
        "loadbench",
        target,
        "--output",
        "json",
        "--no-progress",
        "--threads",
        options.threads,
        "--budget-seconds",
        str(options.budget_seconds),
    ]
    if not options.gpus:
        command.append("--no-gpu")
    volume: dict[str, Any] = {"name": "model-cache"}
    if options.pvc is not None:
        volume["persistentVolumeClaim"] = {"claimName": options.pvc, "readOnly": True}
    else:
        volume["hostPath"] = {"path": options.host_path, "type": "Directory"}
    labels = {"app.kubernetes.io/name": "kubegpu-loadbench", "app.kubernetes.io/component": "load-benchmark"}
    container: dict[str, Any] = {
        "name": "loadbench",
        "image": options.image,
        "imagePullPolicy": "IfNotPresent",
        "command": command,
        "resources": {"requests": dict(limits), "limits": dict(limits)},
        "securityContext": restricted_context(),
        "volumeMounts": [read_only_mount("model-cache", options.mount_path, host=options.host_path is not None)],
    }
    volumes = [volume]
    if options.gpus:  # what every GPU pod gets (the container runtime's /dev/shm is 64 MiB)
        container["volumeMounts"].append({"name": "dshm", "mountPath": "/dev/shm"})
        volumes.append({"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "1Gi"}})
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": options.name, "namespace": options.namespace, "labels": dict(labels)},
        "spec": {
            "backoffLimit": 0,
            "activeDeadlineSeconds": options.budget_seconds * 2 + 300,
            "ttlSecondsAfterFinished": 86400,
            "template": {
                "metadata": {"labels": dict(labels)},
                "spec": {
                    "restartPolicy": "Never",
                    "automountServiceAccountToken": False,
                    "nodeSelector": selector,
                    "tolerations": [dict(t) for t in _TOLERATIONS],
                    "containers": [container],
                    "volumes": volumes,
                },
            },
        },
    }
    pod = ("spec", "template", "spec")
    notes = (
        Note((*pod, "nodeSelector"), "a load rate belongs to one node: its disk, its mount, its page cache"),
        Note(
            (*pod, "containers", 0, "command"),
            "the result is the pod's log: kubectl logs job/"
            + options.name
            + " > loadbench.json, then kubegpu coldstart POD.yaml --loadbench loadbench.json",
        ),
        Note(
            (*pod, "containers", 0, "resources"),
            "the loaders run up to the largest --threads count; give them "
            "the CPUs a server would have. Page cache counts against the memory limit",
        ),
        Note((*pod, "volumes", 0), "mounted read-only: the benchmark reads the cache, it never writes to it"),
    )
    header = (
        "kubegpu loadbench on one node against its model cache (generated by kubegpu gen loadbench-job).",
        "It drops the cache files' pages from the node's page cache before cold runs (posix_fadvise):",
        "servers on the node that read the same files will read them from storage again.",
    )
    return Generated(files=(OutFile("loadbench-job.yaml", (YamlDoc(job, header, notes),)),))
