"""Read the manifests a generator works from (`--for`, `--from`): workloads and their pod templates.

Loading and pod-template discovery are kubegpu.manifests' (every kind `kubegpu lint` knows);
this module adds pod counts, container helpers and the InputError a generator raises.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import kubegpu.manifests.pod as podmodel
from kubegpu.errors import InputError
from kubegpu.generate.output import FieldPath
from kubegpu.manifests import Document, pod_spec
from kubegpu.manifests.reader import read_inputs
from kubegpu.workloads import WorkloadKind, kind_of, pod_templates
from kubegpu.workloads.expand import expand_input
from kubegpu.workloads.partial import partial_object


@dataclass(frozen=True)
class PodSpecRef:
    """One pod template inside a workload: where its spec and metadata are, how many pods it makes.

    `metadata_path` is the pod metadata (`spec.template.metadata`), or the object's own metadata
    for kinds whose pods take it from there (Pod, KServe); None when there is none to patch.
    """

    spec_path: FieldPath
    metadata_path: FieldPath | None
    pods: int
    role: str = ""
    # The pod spec as the pod model reads it, where `spec_path` holds none: a TrainJob's pod is its runtime's
    # trainer template with the TrainJob's settings (kubegpu.workloads.expand), not the spec.trainer mapping; a
    # KServe component's pod holds its `model:` predictor as a container, with what KServe fills in.
    merged: Mapping[str, Any] | None = field(default=None, compare=False)

    @property
    def own_metadata(self) -> bool:
        """Whether the pods have metadata of their own (not the object's)."""
        return self.metadata_path is not None and self.metadata_path != ("metadata",)


@dataclass(frozen=True)
class Workload:
    """A workload document from a manifest file, with its pod templates and the file's other objects (`context`:
    what the rules may look up, e.g. a TrainJob's runtime or a scheduler configuration; it may hold `obj` itself)."""

    source: str
    line: int
    obj: Mapping[str, Any]
    templates: tuple[PodSpecRef, ...]
    context: tuple[Mapping[str, Any], ...] = ()
    text: str | None = None  # the file's text (its `# kubegpu: ignore[...]` comments count for the fixes)
    adapter: WorkloadKind | None = field(default=None, compare=False)  # its kind's answers (kubegpu.workloads)

    @property
    def kind(self) -> str:
        return str(self.obj.get("kind", ""))

    @property
    def api_version(self) -> str:
        return str(self.obj.get("apiVersion", ""))

    @property
    def name(self) -> str:
        return str((self.obj.get("metadata") or {}).get("name") or "")

    @property
    def namespace(self) -> str | None:
        ns = (self.obj.get("metadata") or {}).get("namespace")
        return None if ns is None else str(ns)

    @property
    def pods(self) -> int:
        return sum(t.pods for t in self.templates)

    def at(self, path: FieldPath) -> Any:
        node: Any = self.obj
        for part in path:
            if isinstance(part, int):
                node = node[part] if isinstance(node, list) and part < len(node) else None
            else:
                node = node.get(part) if isinstance(node, Mapping) else None
            if node is None:
                return None
        return node

    def pod_spec(self, ref: PodSpecRef) -> Mapping[str, Any]:
        if ref.merged is not None:
            return ref.merged
        spec = self.at(ref.spec_path)
        return spec if isinstance(spec, Mapping) else {}

    def where(self) -> str:
        return f"{self.source}:{self.line}"


def templates_of(doc: Document) -> tuple[PodSpecRef, ...]:
    """The pod templates of one object, whatever its kind (kubegpu.workloads.pod_templates)."""
    # A TrainJob bound to its runtime, and a KServe component (its `model:` predictor and framework keys hold
    # containers that KServe completes, from a ServingRuntime of the input too), are read as the pod model reads them.
    adapter = kind_of(doc)
    merged = adapter is not None and adapter.rebuilt(doc)
    return tuple(
        PodSpecRef(
            t.path, t.metadata_path, 1 if t.replicas is None else t.replicas, t.role, pod_spec(t) if merged else None
        )
        for t in pod_templates(doc)
    )


def load_workloads(paths: Iterable[str]) -> list[Workload]:
    """Every workload with a pod template in the given files and folders (in order), as lint reads them (charts and
    kustomizations rendered): objects an Argo
    resource step creates, and TrainJobs with their runtime when one of the files holds it (workloads.expand).
    A partial object (a patch fragment) is an InputError naming its file and line."""
    found: list[Workload] = []
    inputs = read_inputs(list(paths))  # files, folders and `-`, as lint reads them
    texts = {file.name: file.text for file in inputs.files}
    loaded = [(file.name, list(file.documents)) for file in inputs.files]
    # each file's objects, one tuple shared by its workloads (what the rules may look up when fixing one)
    context = {path: tuple(d.data for d in docs) for path, docs in loaded}
    for doc in expand_input(doc for _path, docs in loaded for doc in docs):
        fragment = partial_object(doc)
        if fragment is not None:  # what it leaves out is decided by the object it patches (workloads.partial)
            raise InputError(
                f"{fragment.what}: a partial object (a patch fragment), not a whole workload; generate from the "
                "object it patches",
                file=fragment.file,
                line=fragment.line,
            )
        templates = templates_of(doc)
        if templates:
            found.append(
                Workload(
                    doc.source,
                    doc.start_line,
                    doc.data,
                    templates,
                    context.get(doc.source, ()),
                    texts.get(doc.source),
                    kind_of(doc),
                )
            )
    return found


def one_workload(path: str, name: str | None = None) -> Workload:
    """The single workload in `path` (or the one called `name`); InputError otherwise."""
    workloads = load_workloads([path])
    if name is not None:
        workloads = [w for w in workloads if w.name == name]
    if not workloads:
        what = f"named {name!r} " if name else ""
        raise InputError(f"no workload {what}with a pod template found", file=path)
    if len(workloads) > 1:
        names = ", ".join(f"{w.kind}/{w.name}" for w in workloads)
        raise InputError(f"several workloads ({names}): choose one with --name", file=path)
    return workloads[0]


def pod_metadata(workload: Workload, ref: PodSpecRef) -> FieldPath:
    """Where to put pod labels and annotations; InputError when the kind has no such place."""
    if ref.metadata_path is None:
        raise InputError(
            f"{workload.kind}/{workload.name} has no pod metadata to label or annotate",
            file=workload.source,
            line=workload.line,
        )
    return ref.metadata_path


def containers(spec: Mapping[str, Any], init: bool = False) -> list[Mapping[str, Any]]:
    key = "initContainers" if init else "containers"
    return [c for c in spec.get(key) or () if isinstance(c, Mapping)]


def gpu_count(container: Mapping[str, Any]) -> int:
    """Accelerator devices a container asks for (the accelerator registry's device resources)."""
    return podmodel.container_device_count(
        podmodel.read_container(container, podmodel.KIND_APP, "container", strict=False)
    )


def is_gpu_pod(spec: Mapping[str, Any]) -> bool:
    """The pod model's test: an accelerator resource or a DRA claim (annotations are the metadata's)."""
    return podmodel.uses_accelerators(podmodel.read_pod_spec(spec, strict=False))


def pod_gpus(spec: Mapping[str, Any]) -> int:
    """Accelerator devices one pod asks for (its effective requests)."""
    return podmodel.device_count(podmodel.read_pod_spec(spec, strict=False))


def spec_requests(spec: Mapping[str, Any]) -> dict[str, int]:
    """One pod's effective requests (PodRequests: init containers a maximum, sidecars, pod-level resources,
    overhead), cpu in millicores and everything else in whole units; unreadable values are left out."""
    return podmodel.canonical_amounts(podmodel.pod_requests(podmodel.read_pod_spec(spec, strict=False)))
