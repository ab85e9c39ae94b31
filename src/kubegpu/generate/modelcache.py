"""`gen model-cache`: stage weights next to the GPUs and mount them read-only into inference pods.

Two model-loading layouts: a node-local cache (a DaemonSet stages weights into a hostPath on
every GPU node's disk) or one shared PVC filled by a Job; plus the patch that mounts the cache
read-only into an inference workload and keeps a warm minimum of replicas.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kubegpu.errors import InputError
from kubegpu.generate.output import Generated, Note, OutFile, YamlDoc
from kubegpu.generate.patches import PatchBuilder, bundle
from kubegpu.generate.workload import Workload, containers, gpu_count
from kubegpu.manifests.podsecurity import RUNTIME_DEFAULT_SECCOMP, read_only_mount, restricted_context
from kubegpu.units.quantity import parse_quantity

HOST_ROOT = "/var/lib/kubegpu/models"
MARKER = ".kubegpu-complete"
WAIT_IMAGE = "busybox:1.36"
_NAME_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_HF_RE = re.compile(r"^hf://([A-Za-z0-9][-A-Za-z0-9_.]*/[A-Za-z0-9][-A-Za-z0-9_.]*)(@[-A-Za-z0-9_./]+)?$")
_S3_RE = re.compile(r"^s3://[a-z0-9][-a-z0-9.]{1,61}[a-z0-9](/.*)?$")
_TINY = {"cpu": "10m", "memory": "16Mi"}
_STAGER = {"cpu": "2", "memory": "4Gi"}


@dataclass(frozen=True)
class ModelCacheOptions:
    """What `gen model-cache` was asked for."""

    model: str
    source: str
    size: str
    mode: str = "node-local"
    mount_path: str = "/models"
    storage_class: str | None = None
    namespace: str = "default"
    min_replicas: int = 1
    hf_token_secret: str | None = None
    gpu_node_label: tuple[str, str] = ("nvidia.com/gpu.present", "true")


def _stage_container(options: ModelCacheOptions, target: str) -> dict[str, Any]:
    """The container that downloads the weights into `target` and then writes the marker."""
    hf = _HF_RE.match(options.source)
    if hf:
        repo, rev = hf.group(1), (hf.group(2) or "@main")[1:]
        fetch = "pip install --no-cache-dir --quiet huggingface_hub && python -c " + shlex.quote(
            "from huggingface_hub import snapshot_download; "
            f'snapshot_download(repo_id="{repo}", revision="{rev}", local_dir="{target}")'
        )
        image = "python:3.12-slim"
    elif _S3_RE.match(options.source):
        fetch = f"aws s3 sync --only-show-errors {shlex.quote(options.source)} {shlex.quote(target)}"
        image = "amazon/aws-cli:2.17.0"
    else:
        raise InputError(
            f"--source must be hf://<org>/<model>[@revision] or s3://<bucket>/<prefix>, not {options.source!r}"
        )
    marker = f"{target}/{MARKER}"
    script = f"set -e; if [ -f {marker} ]; then echo cached; exit 0; fi; mkdir -p {target}; {fetch}; touch {marker}"
    container: dict[str, Any] = {
        "name": "stage-weights",
        "image": image,
        "imagePullPolicy": "IfNotPresent",
        "command": ["sh", "-c", script],
        "resources": {"requests": dict(_STAGER), "limits": dict(_STAGER)},
        # The image's user (root): the folder it fills is root's (a hostPath the kubelet creates, or a new
        # claim), and pip installs into the image. Nothing else: no capability, no escalation.
        "securityContext": restricted_context(run_as_user=None, read_only_root=False),
        "volumeMounts": [{"name": "model-cache", "mountPath": "/cache"}],
    }
    if options.hf_token_secret and hf:
        container["env"] = [
            {
                "name": "HF_TOKEN",
                "valueFrom": {"secretKeyRef": {"name": options.hf_token_secret, "key": "token"}},
            }
        ]
    return container


def _gpu_affinity(options: ModelCacheOptions) -> dict[str, Any]:
    key, value = options.gpu_node_label
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [{"key": key, "operator": "In", "values": [value]}]}]
            }
        }
    }


def _check(options: ModelCacheOptions) -> None:
    if not _NAME_RE.match(options.model) or len(options.model) > 50:
        raise InputError(f"--model: {options.model!r} must be a DNS label (a-z, 0-9, -)")
    if options.mode not in ("node-local", "shared"):
        raise InputError("--mode must be node-local or shared")
    if parse_quantity(options.size).ceil <= 0:
        raise InputError("--size must be positive")
    if not options.mount_path.startswith("/"):
        raise InputError("--mount-path must be absolute")
    if options.min_replicas < 0:
        raise InputError("--min-replicas must be 0 or more")


def _node_local(options: ModelCacheOptions) -> YamlDoc:
    name = f"model-cache-{options.model}"
    labels = {"app.kubernetes.io/name": name}
    stage = _stage_container(options, f"/cache/{options.model}")
    ds = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": name, "namespace": options.namespace, "labels": dict(labels)},
        "spec": {
            "selector": {"matchLabels": dict(labels)},
            "template": {
                "metadata": {"labels": dict(labels)},
                "spec": {
                    "affinity": _gpu_affinity(options),
                    "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
                    "initContainers": [stage],
                    "containers": [
                        {
                            "name": "hold",
                            "image": "registry.k8s.io/pause:3.10",
                            "imagePullPolicy": "IfNotPresent",
                            "resources": {"requests": dict(_TINY), "limits": dict(_TINY)},
                            "securityContext": restricted_context(),
                        }
                    ],
                    "volumes": [
                        {
                            "name": "model-cache",
                            "hostPath": {"path": HOST_ROOT, "type": "DirectoryOrCreate"},
                        }
                    ],
                    "terminationGracePeriodSeconds": 0,
                    "securityContext": {"seccompProfile": dict(RUNTIME_DEFAULT_SECCOMP)},
                },
            },
        },
    }
    spec = ("spec", "template", "spec")
    return YamlDoc(
        ds,
        header=(
            f"Stages {options.source} onto every GPU node's local disk ({HOST_ROOT}/{options.model},",
            f"about {options.size}): replicas then load from NVMe and the page cache, not the network.",
        ),
        notes=(
            Note(
                (*spec, "affinity"),
                "Every GPU node, so any node an inference pod lands on is warm.",
            ),
            Note(
                (*spec, "initContainers", 0, "command"),
                f"Downloads once, then writes {MARKER}; a restart finds the marker and skips it.",
            ),
            Note(
                (*spec, "volumes", 0),
                "A hostPath, not a local PV: one PVC binds one local PV on one node, "
                "which would pin\n"
                "every replica of a Deployment to that node.",
            ),
            Note(
                (*spec, "initContainers", 0, "securityContext"),
                "Root, as the image is, to write the hostPath the kubelet creates as root; with no\n"
                "capability and no privilege escalation (beyond the restricted Pod Security\n"
                "Standard: the hostPath and the root user).",
            ),
        ),
    )


def _shared(options: ModelCacheOptions) -> tuple[YamlDoc, YamlDoc]:
    claim = f"model-{options.model}"
    pvc_spec: dict[str, Any] = {
        "accessModes": ["ReadWriteMany"],
        "resources": {"requests": {"storage": options.size}},
    }
    if options.storage_class:
        pvc_spec["storageClassName"] = options.storage_class
    pvc = YamlDoc(
        {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": claim, "namespace": options.namespace},
            "spec": pvc_spec,
        },
        header=(f"One shared copy of {options.source} (NFS, Lustre, Filestore, EFS... via a CSI class).",),
        notes=(
            Note(
                ("spec", "accessModes"),
                "ReadWriteMany so the staging Job can fill it; inference pods mount it read-only\n"
                "(a ReadOnlyMany-only claim would leave the Job no way to write the weights).",
            ),
        ),
    )
    stage = _stage_container(options, f"/cache/{options.model}")
    job = YamlDoc(
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": f"stage-{options.model}", "namespace": options.namespace},
            "spec": {
                "backoffLimit": 3,
                "template": {
                    "spec": {
                        "restartPolicy": "OnFailure",
                        "containers": [stage],
                        "volumes": [{"name": "model-cache", "persistentVolumeClaim": {"claimName": claim}}],
                        "securityContext": {"seccompProfile": dict(RUNTIME_DEFAULT_SECCOMP)},
                    }
                },
            },
        },
        header=("Fills the shared volume once; re-running it is a no-op once the marker exists.",),
    )
    return pvc, job


def generate(options: ModelCacheOptions, workload: Workload | None = None, out_dir: Path | None = None) -> Generated:
    _check(options)
    if options.mode == "node-local":
        docs: tuple[YamlDoc, ...] = (_node_local(options),)
    else:
        docs = _shared(options)
    # validate the source early (also when only the cache objects are generated)
    _stage_container(options, "/cache")
    cache_file = OutFile("model-cache.yaml", docs)
    if workload is None:
        return Generated((cache_file,))
    return _mount_patch(options, workload, cache_file, out_dir)


def _mount_patch(
    options: ModelCacheOptions, workload: Workload, cache_file: OutFile, out_dir: Path | None
) -> Generated:
    builder = PatchBuilder(workload)
    if options.mode == "node-local":
        volume: dict[str, Any] = {
            "name": "model-cache",
            "hostPath": {"path": f"{HOST_ROOT}/{options.model}", "type": "Directory"},
        }
        why = "The node's staged copy (type Directory: the pod waits until the stager made it)."
    else:
        volume = {
            "name": "model-cache",
            "persistentVolumeClaim": {"claimName": f"model-{options.model}", "readOnly": True},
        }
        why = "The shared claim, attached read-only."
    target = options.mount_path
    marker = f"{target}/{MARKER}"
    mount = read_only_mount("model-cache", target, host=options.mode == "node-local")
    if options.mode == "shared":
        mount["subPath"] = options.model  # the claim holds <model>/ like the node-local root
    mounted = 0
    for ref in workload.templates:
        spec = workload.pod_spec(ref)
        ctrs = containers(spec)
        if not ctrs:
            continue  # e.g. a KServe model-format predictor: its container is not a list entry
        gpu_idx = [i for i, c in enumerate(ctrs) if gpu_count(c) > 0] or [0]
        mounted += 1
        builder.append((*ref.spec_path, "volumes"), volume, why)
        for i in gpu_idx:
            builder.append(
                (*ref.spec_path, "containers", i, "volumeMounts"),
                dict(mount),
                f"{ctrs[i].get('name')}: weights at {target}, read-only (safetensors mmap them\n"
                "straight from the page cache, shared by every replica on the node).",
            )
        builder.append(
            (*ref.spec_path, "initContainers"),
            {
                "name": "wait-for-weights",
                "image": WAIT_IMAGE,
                "imagePullPolicy": "IfNotPresent",
                "command": ["sh", "-c", f"until [ -f {marker} ]; do sleep 5; done"],
                "resources": {"requests": dict(_TINY), "limits": dict(_TINY)},
                "securityContext": restricted_context(),  # restricted on its own, in whatever pod it joins
                "volumeMounts": [dict(mount)],
            },
            "Start the server only once the weights are complete, never on a half copy.",
        )
    if not mounted:
        raise InputError(
            f"{workload.kind}/{workload.name} has no containers list to mount the cache into",
            file=workload.source,
            line=workload.line,
        )
    _warm_pool(builder, workload, options.min_replicas)
    result = bundle(
        builder,
        "patch-model-cache.yaml",
        (
            f"Mounts model {options.model} ({options.mode}) read-only into {workload.kind}/{workload.name}.",
            "Apply with kubectl apply -k; the cache objects are listed as a resource.",
        ),
        out_dir,
        (cache_file,),
    )
    return result.generated


def _warm_pool(builder: PatchBuilder, workload: Workload, minimum: int) -> None:
    """At least `minimum` replicas always up, where the workload's kind keeps them (its adapter's replica_floors:
    a Deployment's spec.replicas, an InferenceService predictor's minReplicas)."""
    why = (
        f"Warm pool: at least {minimum} replica(s) always loaded, so a request never waits\n"
        "for a cold start (an autoscaler must keep its minimum at this too)."
    )
    floors = workload.adapter.replica_floors(workload.obj) if workload.adapter is not None else []
    for path, current in floors:
        if not isinstance(current, int) or current < minimum:
            builder.set(path, minimum, why)
