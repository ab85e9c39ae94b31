"""model-cache-writable-shared: a shared model cache (a ReadWriteMany or ReadOnlyMany claim, a host path, a shared
file system) is mounted read-write into an inference server, so one replica's interrupted download becomes every
replica's weights.
"""

from __future__ import annotations

from collections.abc import Iterator

from kubegpu.manifests import (
    PodTemplate,
    as_mapping,
    memoised,
)
from kubegpu.ruleapi import Edit, Fix, RawFinding, Rule, RuleContext, Safety, Severity, Target
from kubegpu.rules.models.common import PRACTICE, server_containers
from kubegpu.serving.servers import (
    MountView,
    configmap_loader,
    mount_for,
    mounts,
    path_under,
    recognise,
    same_namespace,
    volumes_by_name,
)

_SHARED_FILESYSTEMS = frozenset({"nfs", "cephfs", "glusterfs", "azureFile", "quobyte"})


def _pvc_modes(ctx: RuleContext, claim: str, namespace: str | None) -> list[str] | None:
    for doc in ctx.documents_of("PersistentVolumeClaim"):
        if doc.ref.name == claim and same_namespace(doc.ref.namespace, namespace):
            modes = as_mapping(doc.data.get("spec")).get("accessModes")
            return [str(m) for m in modes] if isinstance(modes, list) else []
    return None


def _shared_reason(template: PodTemplate, view: MountView, ctx: RuleContext) -> str | None:
    if view.source == "hostPath":
        return "a hostPath, shared by every pod on the node"
    if view.source in _SHARED_FILESYSTEMS:
        return f"an {view.source} network filesystem shared by every pod that mounts it"
    if view.source == "persistentVolumeClaim" and view.volume is not None:
        claim = str(as_mapping(view.volume.get("persistentVolumeClaim")).get("claimName") or "")
        modes = _pvc_modes(ctx, claim, template.document.ref.namespace)
        shared = sorted({"ReadWriteMany", "ReadOnlyMany"} & set(modes or []))
        if shared:
            return f"PVC '{claim}' ({', '.join(shared)})"
        if modes is None and (template.replicas is None or template.replicas > 1):
            count = "an autoscaled number of" if template.replicas is None else str(template.replicas)
            return f"PVC '{claim}', mounted by {count} replicas"
    return None


# Volume sources `_shared_reason` can name: a pod with none of them has no shared cache to report.
_SHAREABLE_SOURCES = frozenset({"hostPath", "persistentVolumeClaim", *_SHARED_FILESYSTEMS})


def _check_writable_shared(template: PodTemplate, ctx: RuleContext) -> Iterator[RawFinding]:
    volumes = memoised(template, "models.volumes", volumes_by_name, template)
    if all(_SHAREABLE_SOURCES.isdisjoint(volume) for volume in volumes.values()):
        return  # checked before recognising servers: most pods mount no shareable volume
    for container in server_containers(template, ctx):
        server = recognise(template, container) or configmap_loader(template, container, ctx.documents_of("ConfigMap"))
        if server is None:
            continue
        views = mounts(template, container)
        relevant: dict[int, MountView] = {}
        for path in (*server.write_paths, *server.read_paths):
            view = mount_for(views, path)
            if view is not None:
                relevant[view.index] = view
        for view in views:  # a mount inside the cache directory (e.g. HF_HOME=/cache, mount at /cache/hub)
            if any(path_under(view.mount_path, p) for p in server.write_paths):
                relevant[view.index] = view
        for index in sorted(relevant):
            view = relevant[index]
            if view.read_only:
                continue
            reason = _shared_reason(template, view, ctx)
            if reason is None:
                continue
            writes = any(path_under(p, view.mount_path) or path_under(view.mount_path, p) for p in server.write_paths)
            if writes and view.source == "hostPath":
                continue  # a node-local download cache: local file locks serialise writers
            mount_path = (*container.path, "volumeMounts", view.index)
            edit = Edit("replace" if "readOnly" in view.mount else "add", (*mount_path, "readOnly"), True)
            if writes:
                fix = Fix(
                    "mount the cache read-only (the server downloads into it: fill it from one Job first)",
                    Safety.UNSAFE,
                    (edit,),
                )
                tail = "the server also downloads into it, so fill the cache from one Job and mount it read-only here"
            else:
                fix = Fix("mount the model cache read-only", Safety.SAFE, (edit,))
                tail = "the server only reads it, so mount it readOnly: true"
            yield RawFinding(
                mount_path,
                f"container '{container.name}' mounts the model cache '{view.mount_path}' read-write from {reason}: "
                "one replica's interrupted download or bad write is served to every other, and concurrent writers "
                f"race on network filesystems; {tail}",
                fix,
            )


MODEL_CACHE_WRITABLE_SHARED = Rule(
    code="KG402",
    name="model-cache-writable-shared",
    practice=PRACTICE,
    severity=Severity.WARNING,
    summary="A shared model cache (RWX/ROX PVC, hostPath, NFS) is mounted read-write into an inference server.",
    target=Target.TEMPLATE,
    check=_check_writable_shared,
    fixable=True,
    rationale="A cache shared by many replicas should be filled once (a Job, an init step on one node) and read "
    "by every server: a read-write mount lets one replica's interrupted or corrupt download become every "
    "replica's weights, and Hugging Face's file locks are unreliable on network filesystems. A volume counts as "
    "shared when it is a hostPath, an NFS/CephFS/GlusterFS/Azure Files volume, a PVC whose claim in the input is "
    "ReadWriteMany or ReadOnlyMany, or a PVC (claim not in the input) mounted by more than one replica. A "
    "hostPath the server downloads into is the node-local cache pattern (writers on one node are "
    "serialised by local file locks) and passes; a hostPath it only reads is flagged. The fix sets readOnly: true "
    "on the mount; it is safe when the server only reads that path (a local --model path), unsafe when its "
    "download directory (HF_HOME, --download-dir, ...) is on the mount.",
    bad_example="volumeMounts: [{name: weights, mountPath: /models}]   # PVC ReadOnlyMany, --model /models/llama",
    good_example="volumeMounts: [{name: weights, mountPath: /models, readOnly: true}]",
)
