"""KServe LLMInferenceService presets: the LLMInferenceServiceConfig objects a service's pods are merged from, in
KServe's order, and what they give each container (its resources, a memory-backed /dev/shm).

Follows kserve pkg/controller/v1alpha2/llmisvc/config_merge.go @ aaac4e294dae (combineBaseRefsConfig, MergeSpecs):
the well-known config for the service's shape (single node, data-parallel workers; prefill and decode apart when
`prefill` is set), then `spec.baseRefs` in order, then the service itself, each a strategic merge over the last.
A config is looked up in the service's namespace, then in KServe's; one the input lacks is the one KServe ships
(config/llmisvcconfig: every template's `main` container mounts a memory-backed emptyDir at /dev/shm).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from kubegpu.manifests.document import Document, FieldPath, as_mapping, get_path, mapping_items
from kubegpu.manifests.memo import recalled, remember
from kubegpu.manifests.template import ContainerFill, ContainerRef, PodTemplate
from kubegpu.workloads import strategic
from kubegpu.workloads.kind import DocumentsOf

CONFIG_KIND = "LLMInferenceServiceConfig"
KSERVE_NAMESPACE = "kserve"
_PREFIX = "kserve-"  # LLM_INFERENCE_SERVICE_CONFIG_PREFIX's default
_SHM_PATH = "/dev/shm"
_MAIN = "main"


def _shipped_pod(size: str) -> dict[str, Any]:
    """The part of a shipped config's pod template that decides /dev/shm: `main` mounts a Memory emptyDir there."""
    return {
        "containers": [{"name": _MAIN, "volumeMounts": [{"name": "dshm", "mountPath": _SHM_PATH}]}],
        "volumes": [{"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": size}}],
    }


# The well-known configs KServe ships (config/llmisvcconfig @ aaac4e294dae), as far as pod templates go. The
# pipeline-parallel ones are named by the controller but not shipped: a service that needs one and whose input
# lacks it is not reconciled (ConfigNotFound), so what it gives is unknown.
SHIPPED: Mapping[str, Mapping[str, Any]] = {
    "kserve-config-llm-template": {"template": _shipped_pod("1Gi")},
    "kserve-config-llm-decode-template": {"template": _shipped_pod("1Gi")},
    "kserve-config-llm-prefill-template": {"prefill": {"template": _shipped_pod("1Gi")}},
    "kserve-config-llm-worker-data-parallel": {"template": _shipped_pod("8Gi"), "worker": _shipped_pod("8Gi")},
    "kserve-config-llm-decode-worker-data-parallel": {
        "template": _shipped_pod("8Gi"),
        "worker": _shipped_pod("8Gi"),
    },
    "kserve-config-llm-prefill-worker-data-parallel": {
        "prefill": {"template": _shipped_pod("8Gi"), "worker": _shipped_pod("8Gi")}
    },
}


@dataclass(frozen=True)
class Preset:
    """One config a service is merged with: its name, its spec and where it came from (None: not known)."""

    name: str
    spec: Mapping[str, Any] | None
    document: Document | None = None

    @property
    def source(self) -> str:
        if self.document is not None:
            return f"{CONFIG_KIND} '{self.name}'"
        if self.spec is not None:
            return f"{CONFIG_KIND} '{self.name}' as KServe ships it"
        return f"{CONFIG_KIND} '{self.name}' (not in the input)"


def base_refs(spec: Mapping[str, Any]) -> list[str]:
    return [str(ref.get("name")) for ref in mapping_items(spec.get("baseRefs")) if ref.get("name")]


def _parallelism(section: Mapping[str, Any]) -> str:
    """'data', 'pipeline' or '' as ParallelismSpec.IsDataParallel / IsPipelineParallel answer (data first)."""
    parallelism = as_mapping(section.get("parallelism"))
    if any(_positive(parallelism.get(key)) for key in ("data", "dataLocal")):
        return "data"
    return "pipeline" if _positive(parallelism.get("pipeline")) else ""


def _positive(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def well_known(resolved: Mapping[str, Any]) -> list[str]:
    """The well-known template configs for a service whose spec, merged with its baseRefs, is `resolved`."""
    names: list[str] = []
    worker_configs = {"data": "worker-data-parallel", "pipeline": "worker-pipeline-parallel"}
    prefill = resolved.get("prefill")
    if isinstance(prefill, Mapping):
        for part, section in (("prefill-", prefill), ("decode-", resolved)):
            if section.get("worker") is None:
                names.append(f"{_PREFIX}config-llm-{part}template")
            elif (shape := _parallelism(section)) in worker_configs:
                names.append(f"{_PREFIX}config-llm-{part}{worker_configs[shape]}")
        return names
    if resolved.get("worker") is None:
        names.append(f"{_PREFIX}config-llm-template")
    elif (shape := _parallelism(resolved)) in worker_configs:
        names.append(f"{_PREFIX}config-llm-{worker_configs[shape]}")
    return names


def _find(name: str, namespace: str | None, documents_of: DocumentsOf) -> Document | None:
    """The config named `name` in the service's namespace, else in KServe's (one without a namespace: either)."""
    found = [d for d in documents_of(CONFIG_KIND) if d.ref.name == name]
    for wanted in (namespace, KSERVE_NAMESPACE, None):
        for doc in found:
            if doc.ref.namespace == wanted:
                return doc
    return None


def _preset(name: str, namespace: str | None, documents_of: DocumentsOf) -> Preset:
    doc = _find(name, namespace, documents_of)
    if doc is not None:
        return Preset(name, as_mapping(doc.data.get("spec")), doc)
    return Preset(name, SHIPPED.get(name))


def bind(doc: Document, documents_of: DocumentsOf) -> None:
    """Remember the configs a service is merged with, in KServe's order (well-known first, then baseRefs)."""
    spec = as_mapping(doc.data.get("spec"))
    namespace = doc.ref.namespace
    refs = [_preset(name, namespace, documents_of) for name in base_refs(spec)]
    resolved: Mapping[str, Any] = spec
    for ref in refs:  # what the service is with its baseRefs decides which well-known configs apply
        if ref.spec is not None:
            resolved = strategic.merge(resolved, ref.spec)
    presets = (*[_preset(name, namespace, documents_of) for name in well_known(resolved)], *refs)
    remember(doc, "llmisvc_presets", presets)


def presets(doc: Document) -> tuple[Preset, ...]:
    """The configs bound to a service (after `bind`; () before)."""
    found: tuple[Preset, ...] | None = recalled(doc, "llmisvc_presets")
    return found or ()


def configs(doc: Document) -> tuple[Document, ...]:
    """The configs of the input a service is merged with (they make no pods of their own)."""
    return tuple(p.document for p in presets(doc) if p.document is not None)


def fill(template: PodTemplate, container: ContainerRef) -> ContainerFill | None:
    """What the service's configs give one of its containers: resources it leaves out, and whether the merged
    pod mounts a memory-backed /dev/shm in it (None where a config is neither in the input nor shipped)."""
    chain = presets(template.document)
    if not chain or container.kind != "container":
        return None
    path = _pod_path(template.path)
    if any(p.spec is None for p in chain):
        names = ", ".join(f"'{p.name}'" for p in chain)
        return ContainerFill(
            f"the {CONFIG_KIND}s {names} ({', '.join(p.source for p in chain if p.spec is None)})",
            None,
            None,
            None,
            container_name=_MAIN,
        )
    base: Mapping[str, Any] = {}
    giving = [p for p in chain if get_path(p.spec, path) is not None] or list(chain)  # those with this pod
    for preset in giving:
        base = strategic.merge(base, as_mapping(get_path(preset.spec, path)))
    name = container.name or _MAIN
    given = _container(base, name)
    resources = as_mapping(given.get("resources"))
    merged = strategic.merge(base, template.spec)
    return ContainerFill(
        f"the {CONFIG_KIND}s {', '.join(repr(p.name) for p in giving)}" if len(giving) > 1 else giving[0].source,
        {str(k): v for k, v in as_mapping(resources.get("requests")).items()},
        {str(k): v for k, v in as_mapping(resources.get("limits")).items()},
        _memory_shm(merged, name),
        container_name=_MAIN,
    )


def _pod_path(path: FieldPath) -> tuple[str, ...]:
    """The config spec's path of a service template ('spec', 'prefill', 'worker' -> 'prefill', 'worker')."""
    return tuple(str(p) for p in path[1:])


def _container(pod: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    return next((c for c in mapping_items(pod.get("containers")) if c.get("name") == name), {})


def _memory_shm(pod: Mapping[str, Any], name: str) -> bool:
    """The merged pod's container `name` mounts a memory-backed emptyDir at /dev/shm."""
    memory = {
        str(v.get("name"))
        for v in mapping_items(pod.get("volumes"))
        if str(as_mapping(v.get("emptyDir")).get("medium", "")).lower() == "memory"
    }
    return any(
        str(m.get("mountPath", "")).rstrip("/") == _SHM_PATH and str(m.get("name")) in memory
        for m in mapping_items(_container(pod, name).get("volumeMounts"))
    )


def no_pods(doc: Document) -> Iterator[PodTemplate]:
    """A config makes no pods: it is a preset merged into the services that use it, which are checked merged."""
    return iter(())
