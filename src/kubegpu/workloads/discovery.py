"""The questions every command asks of an object, answered by its kind's adapter: its pod templates, its gang
shape, and how lint read it.

Each answer is worked out once per object and kept with it (every rule, and every command, asks).
"""

from __future__ import annotations

from collections.abc import Iterator
from enum import StrEnum

from kubegpu.manifests.document import Document
from kubegpu.manifests.memo import memoised
from kubegpu.manifests.resources import uses_accelerators
from kubegpu.manifests.template import PodTemplate
from kubegpu.workloads.generic import generic_templates
from kubegpu.workloads.kind import GangShape, WorkloadKind
from kubegpu.workloads.registry import ADAPTERS, adapter_of, api_group, kind_of


def pod_templates(doc: Document) -> Iterator[PodTemplate]:
    """Every pod template of one object, whatever its kind (found once per document, then reused)."""
    return iter(memoised(doc, "pod_templates", _templates_of, doc))


def _templates_of(doc: Document) -> tuple[PodTemplate, ...]:
    return tuple(_find_templates(doc))


def _find_templates(doc: Document) -> Iterator[PodTemplate]:
    adapter = kind_of(doc)
    if adapter is None:
        yield from generic_templates(doc)
        return
    yield from adapter.templates(doc)
    for inner in adapter.wraps(doc):
        yield from _find_templates(inner)


def gang_shape(doc: Document, accelerators: tuple[str, ...]) -> GangShape | None:
    """The pods that must run together when the object is a GPU workload of a distributed kind with a known pod
    count; else None. Worked out once per object and accelerator list (three rules ask)."""
    adapter = kind_of(doc)
    if adapter is None or adapter.gang is None:
        return None
    return memoised(doc, ("job_shape", accelerators), _gang_shape, doc, adapter, accelerators)


def _gang_shape(doc: Document, adapter: WorkloadKind, accelerators: tuple[str, ...]) -> GangShape | None:
    templates = tuple(pod_templates(doc))
    if not templates or adapter.gang is None:
        return None
    gpu = tuple([t for t in templates if uses_accelerators(t, accelerators)])
    if not gpu:
        return None
    return adapter.gang(doc, templates, gpu)


def shaped_kinds() -> frozenset[str]:
    """The kinds a gang shape can be worked out for (the gang and topology rules check these only)."""
    return frozenset(kind for adapter in ADAPTERS if adapter.gang is not None for kind in adapter.kinds)


def simulated_kinds() -> tuple[str, ...]:
    """The kinds the simulator reads from manifests (their adapters expand them to pods), in the registry's order."""
    return tuple(kind for adapter in ADAPTERS if adapter.sim_pods is not None for kind in sorted(adapter.kinds))


def looked_up_kinds() -> frozenset[str]:
    """Kinds of other objects the adapters read (the runtimes a TrainJob or an InferenceService is bound to)."""
    return frozenset(kind for adapter in ADAPTERS for kind in adapter.looked_up)


# --- how lint read an object ---------------------------------------------------------------------------------------

# API groups of Kubernetes itself and of well-known add-ons whose other kinds never hold pods.
_NO_POD_GROUPS = frozenset(
    {
        "",
        "v1",
        "apps",
        "batch",
        "rbac.authorization.k8s.io",
        "networking.k8s.io",
        "storage.k8s.io",
        "policy",
        "autoscaling",
        "apiextensions.k8s.io",
        "admissionregistration.k8s.io",
        "scheduling.k8s.io",
        "coordination.k8s.io",
        "discovery.k8s.io",
        "node.k8s.io",
        "certificates.k8s.io",
        "resource.k8s.io",
        "flowcontrol.apiserver.k8s.io",
        "kubelet.config.k8s.io",
        "kubescheduler.config.k8s.io",
        "kueue.x-k8s.io",
        "scheduling.volcano.sh",
        "scheduling.x-k8s.io",
        "scheduling.sigs.k8s.io",
        "scheduling.run.ai",
        "keda.sh",
        "monitoring.coreos.com",
        "cert-manager.io",
        "gateway.networking.k8s.io",
        "nvidia.com",
        "nfd.k8s-sigs.io",
    }
)
# Pod-less kinds of groups that also hold workloads.
_NO_POD_KINDS = frozenset(
    {
        "ServingRuntime",
        "ClusterServingRuntime",
        "InferenceGraph",
        "TrainedModel",
        "ClusterPolicy",
        "NVIDIADriver",
        "ScaledObject",
        "HorizontalPodAutoscaler",
        "PodGroup",
        "Queue",
        "ClusterQueue",
        "LocalQueue",
        "ResourceFlavor",
    }
)


class Coverage(StrEnum):
    """How `lint` read an object: by a known mapping, generically, not at all, or it holds no pods."""

    KNOWN = "known mapping"
    GENERIC = "read generically"
    NOT_CHECKED = "not checked"
    NO_PODS = "holds no pods"


def coverage(doc: Document) -> Coverage:
    """How this object's pods were found (the lint summary counts objects per class)."""
    if kind_of(doc) is not None:
        return Coverage.KNOWN
    if any(True for _ in pod_templates(doc)):
        return Coverage.GENERIC
    if api_group(doc) in _NO_POD_GROUPS or doc.kind in _NO_POD_KINDS or doc.kind.endswith("List"):
        return Coverage.NO_PODS
    return Coverage.NOT_CHECKED


def holds_no_pods(api_version: str, kind: str) -> bool:
    """Objects of this API version and kind never hold pods and no adapter reads them: decided by the two alone,
    as `coverage` decides NO_PODS, so that rendered output can leave their bodies out before they are built."""
    group = api_version.rpartition("/")[0] if "/" in api_version else ""
    if adapter_of(group, kind) is not None:
        return False
    return group in _NO_POD_GROUPS or kind in _NO_POD_KINDS


def generic_note(doc: Document) -> str:
    """The words a finding on a generically read object carries."""
    return f"{doc.kind} has no known mapping: its pod spec was found by a generic search"
