"""model-cache-missing: an inference server downloads its weights into storage that dies with the pod, so every pod
(and every restart) downloads them again.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping

from kubegpu.manifests import (
    PodTemplate,
)
from kubegpu.ruleapi import RawFinding, Rule, RuleContext, Severity, Target
from kubegpu.rules.models.common import PRACTICE, server_containers
from kubegpu.serving.servers import (
    PER_POD_SOURCES,
    PERSISTENT_SOURCES,
    REMOTE_URI,
    MountView,
    Server,
    classify_model,
    configmap_loader,
    mount_for,
    mounts,
    recognise,
    shell_tokens,
)

_LOCAL_CACHE_KINDS = frozenset({"LocalModelCache", "ClusterLocalModel"})
_OBJECT_URI = re.compile(r"(?:s3|gs|az)://[^\s\"',}]+")


def _cached_uris(ctx: RuleContext) -> set[str]:
    """Storage URIs that a KServe LocalModelCache (or ClusterLocalModel) in the input caches on nodes."""
    uris: set[str] = set()
    for doc in ctx.documents_of(*sorted(_LOCAL_CACHE_KINDS)):
        data = doc.data
        if isinstance(data, dict):
            spec = data.get("spec")
            if isinstance(spec, Mapping) and isinstance(spec.get("sourceModelUri"), str):
                uris.add(spec["sourceModelUri"].rstrip("/"))
    return uris


def _check_cache_missing(template: PodTemplate, ctx: RuleContext) -> Iterator[RawFinding]:
    for container in server_containers(template, ctx):
        server = recognise(template, container) or configmap_loader(template, container, ctx.documents_of("ConfigMap"))
        if server is None:
            continue
        what = f"{server.name} in container '{container.name}'" if container.name else server.name
        if server.streaming:
            yield RawFinding(
                server.model_path,
                f"{what} streams weights from object storage at every start ({_object_uri(server)}): no "
                "node-local or "
                "shared copy, so each replica and restart reads the whole model over the network; fine when the "
                "store is close and fast, otherwise cache on node NVMe or a read-only PVC",
                severity=Severity.INFO,
            )
            continue
        if server.name in ("KServe", "KServe LLMInferenceService") and server.model and server.downloads:
            if server.model.rstrip("/") in _cached_uris(ctx):  # only KServe pays for the scan
                continue
            yield RawFinding(
                server.model_path,
                f"{what}: storage URI '{server.model}' is downloaded into an emptyDir of every new pod (the storage "
                "initializer) before the server can start; use pvc://, an oci:// model car, or a LocalModelCache "
                "for this URI",
            )
            continue
        # The mounts are joined only for a server with directories to look up (a Triton repository URI has none).
        views = mounts(template, container) if server.read_paths or server.write_paths else ()
        for path in server.read_paths:
            view = mount_for(views, path)
            if view is not None and view.source in PER_POD_SOURCES:
                filler = _init_filler(template, view)
                yield RawFinding(
                    (*container.path, "volumeMounts", view.index),
                    f"{what} reads weights from '{path}' on the {view.source} volume '{view.mount.get('name')}', "
                    f"which is empty in every new pod{filler}: weights are fetched again on each start; put them "
                    "on a node-local hostPath/local PV or a read-only PVC",
                )
        if not server.downloads:
            continue
        if not server.write_paths and server.model and classify_model(server.model) == "remote":
            yield RawFinding(
                server.model_path,
                f"{what} fetches its models from '{server.model}' into the container at every start, with no "
                "cache that outlives the pod; put the repository on a node-local hostPath/local PV or a read-only "
                "PVC (or a CSI bucket mount)",
            )
            continue
        for path in server.write_paths:
            view = mount_for(views, path)
            if view is not None and view.source in PERSISTENT_SOURCES:
                continue
            where = (
                f"on the {view.source} volume '{view.mount.get('name')}', which starts empty in every pod"
                if view is not None
                else "on no volume at all (the container's writable layer)"
            )
            yield RawFinding(
                server.model_path,
                f"{what} downloads {server.source} at every start into '{path}', {where}: each replica and "
                "restart pulls the full weights again while its GPUs wait; mount a node-local cache "
                "(hostPath/local PV) or a read-only PVC there, or point HF_HOME/--download-dir at one",
            )


def _object_uri(server: Server) -> str:
    """The object-store URI a streaming loader reads (a --model URI or one inside the loader's extra config)."""
    if server.model and REMOTE_URI.match(server.model):
        return server.model
    match = _OBJECT_URI.search(" ".join(t.text for t in shell_tokens(server.container)))
    return match.group(0) if match else str(server.model)


def _init_filler(template: PodTemplate, view: MountView) -> str:
    name = view.mount.get("name")
    for container in template.containers:
        if container.kind == "init":
            items = container.data.get("volumeMounts")
            if isinstance(items, list) and any(isinstance(m, Mapping) and m.get("name") == name for m in items):
                return f" (filled by init container '{container.name}')"
    return ""


MODEL_CACHE_MISSING = Rule(
    code="KG401",
    name="model-cache-missing",
    practice=PRACTICE,
    severity=Severity.WARNING,
    summary="An inference server downloads its weights into each pod instead of reading a cache volume.",
    target=Target.TEMPLATE,
    check=_check_cache_missing,
    rationale="A cold replica of a large model moves tens to hundreds of GB before it can serve; downloading them "
    "from the Hub or object storage at every start multiplies that by replicas and restarts, hits Hub rate limits, "
    "and keeps GPUs idle. Recognised servers: vLLM and llm-d, SGLang, TGI, Triton (and TensorRT-LLM on Triton), "
    "NVIDIA NIM, KServe (storageUri, the Hugging Face runtime, LLMInferenceService) and Ray Serve (a RayService "
    "whose serve config uses Hugging Face libraries), and Python code in any GPU pod that loads weights at start "
    "(from_pretrained, snapshot_download, hf_hub_download, vLLM's LLM(model=...), transformers' "
    "pipeline(model=...)) in a command, args, a RayJob entrypoint or a ConfigMap of the input mounted into the "
    "pod; code fetched at run time (a runtime_env working_dir archive) is out of sight. A cache is a volume "
    "that outlives the pod mounted where the "
    "server downloads (HF_HUB_CACHE, HUGGINGFACE_HUB_CACHE, HF_HOME/hub, --download-dir, NIM_CACHE_PATH, TGI's "
    "/data) or where it reads a local model path: a PVC, hostPath, NFS, CSI or image volume. emptyDir and generic "
    "ephemeral volumes start empty in every pod, so they are not caches. A local model path on no volume is baked "
    "into the image and passes; HF_HUB_OFFLINE=1 passes (set it when a Hub id names weights baked into the "
    "image's cache, which otherwise still asks the Hub at every start). KServe pvc:// and oci:// URIs, or a "
    "LocalModelCache for the URI in the input, pass. Streaming loaders (Run:ai streamer, tensorizer) from object "
    "storage are reported at info severity: they avoid the disk but still read the whole model per replica.",
    bad_example="args: [--model, meta-llama/Llama-3.1-8B-Instruct]   # no volume at /root/.cache/huggingface",
    good_example="args: [--model, meta-llama/Llama-3.1-8B-Instruct, --download-dir, /models]\n"
    "volumeMounts: [{name: weights, mountPath: /models, readOnly: true}]\n"
    "volumes: [{name: weights, persistentVolumeClaim: {claimName: llama-weights}}]",
)
