"""A pod template found in an object: its path, role, replica count and containers, whatever the object's kind.

Which kinds hold pod templates, and where, is kubegpu.workloads' (one adapter per kind family); this module holds
the shapes they all answer with, and the helpers that read a PodTemplateSpec or a JobSpec at a path.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kubegpu.manifests.document import Document, FieldPath, as_mapping, get_path, is_mapping
from kubegpu.manifests.memo import forget


@dataclass(frozen=True)
class ContainerRef:
    """A container of a pod template: its path in the document, its data and its kind."""

    path: FieldPath
    data: Mapping[str, Any]
    kind: str  # "container", "init" or "sidecar" (an init container with restartPolicy Always)

    @property
    def name(self) -> str:
        return str(self.data.get("name") or "")


@dataclass(frozen=True)
class ContainerFill:
    """What a workload's controller gives a container for the resources it leaves out, and whether it adds a
    memory-backed /dev/shm (KServe's defaults and ServingRuntimes: kubegpu.workloads.kserve).

    `runtime` names the runtime the container is completed from; `requests` and `limits` are None when that
    runtime is neither in the input nor one the controller ships (unknown), and `shm` is None when unknown.
    `container_name` is the name the controller gives the container when it has none, and `image` the image it
    runs when it has none (the runtime's, when the input holds the runtime).
    """

    source: str  # in words, after "... fills in what it leaves out from": "its default resources (...)"
    requests: Mapping[str, object] | None
    limits: Mapping[str, object] | None
    shm: bool | None
    runtime: str | None = None
    container_name: str | None = None
    image: str | None = None

    @property
    def known(self) -> bool:
        return self.requests is not None


# How a workload's controller completes a container of one of its templates (None: it adds nothing).
Filler = Callable[["PodTemplate", ContainerRef], "ContainerFill | None"]


@dataclass(frozen=True)
class PodTemplate:
    """One pod template found in a document.

    `path` points at the pod spec (or, for KServe/Argo/TrainJob, at the object that plays its part);
    `replicas` is the number of pods this template makes (None when it depends on the cluster);
    `volumes_path` is where the pod's volumes list lives (Argo declares it workflow-wide); `has_volumes` is False
    where the object has no volumes list at all (a TrainJob's spec.trainer). `filler` says what the workload's
    controller adds to a container (KServe), for kinds whose controller completes their containers.
    """

    document: Document
    path: FieldPath
    spec: Mapping[str, Any]
    metadata_path: FieldPath | None
    metadata: Mapping[str, Any]
    role: str
    replicas: int | None
    containers: tuple[ContainerRef, ...]
    volumes_path: FieldPath | None = None
    has_volumes: bool = True
    filler: Filler | None = field(default=None, compare=False, repr=False)

    @property
    def volumes_field(self) -> FieldPath | None:
        """The path of the volumes list: `volumes_path`, or `<path>.volumes` for real pod specs."""
        if self.volumes_path is not None:
            return self.volumes_path
        return (*self.path, "volumes") if self.has_volumes else None

    @property
    def kind(self) -> str:
        return self.document.kind

    @property
    def labels(self) -> Mapping[str, Any]:
        return as_mapping(self.metadata.get("labels"))

    @property
    def annotations(self) -> Mapping[str, Any]:
        return as_mapping(self.metadata.get("annotations"))

    @property
    def volumes(self) -> list[Mapping[str, Any]]:
        volumes = self.spec.get("volumes")
        return [v for v in volumes if type(v) is dict or isinstance(v, Mapping)] if isinstance(volumes, list) else []

    @property
    def description(self) -> str:
        ref = self.document.ref
        role = f" ({self.role})" if self.role else ""
        return f"{ref.kind}/{ref.name}{role}"

    def fill(self, container: ContainerRef) -> ContainerFill | None:
        """What the workload's controller adds to `container` of this template (None: nothing)."""
        return None if self.filler is None else self.filler(self, container)


def int_field(value: Any, default: int | None) -> int | None:
    """An integer field as the API reads it (ints, digit strings); anything else gives `default`."""
    if isinstance(value, bool):
        return default
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return default


def mapping_list(value: Any) -> list[Mapping[str, Any]]:
    """A list field with every item a mapping (an item that is not one reads as {}, keeping the indices)."""
    return [v if is_mapping(v) else {} for v in value] if isinstance(value, list) else []


def containers_of(spec: Mapping[str, Any], path: FieldPath) -> tuple[ContainerRef, ...]:
    """Init containers (sidecars marked), then containers, with their paths."""
    refs: list[ContainerRef] = []
    for key in ("initContainers", "containers"):
        items = spec.get(key)
        if not isinstance(items, list):
            continue
        for i, item in enumerate(items):
            if not is_mapping(item):
                continue
            if key == "containers":
                kind = "container"
            else:
                kind = "sidecar" if item.get("restartPolicy") == "Always" else "init"
            refs.append(ContainerRef((*path, key, i), item, kind))
    return tuple(refs)


def template_at(doc: Document, template_path: FieldPath, role: str, replicas: int | None) -> tuple[PodTemplate, ...]:
    """The PodTemplateSpec at `template_path` (metadata + spec), if there is one: a tuple of none or one, not a
    generator, as every workload has one."""
    template = get_path(doc.data, template_path)
    if not is_mapping(template):
        return ()
    spec = template.get("spec")
    if not is_mapping(spec):
        return ()
    spec_path = (*template_path, "spec")
    return (
        PodTemplate(
            doc,
            spec_path,
            spec,
            (*template_path, "metadata"),
            as_mapping(template.get("metadata")),
            role,
            replicas,
            containers_of(spec, spec_path),
        ),
    )


def job_template(doc: Document, job_path: FieldPath, role: str, copies: int | None) -> tuple[PodTemplate, ...]:
    """A JobSpec at `job_path`: pods = parallelism (default 1, at most completions) per copy."""
    job = as_mapping(get_path(doc.data, job_path))
    parallelism = int_field(job.get("parallelism"), 1)
    completions = int_field(job.get("completions"), None)
    if completions is not None and parallelism is not None:
        parallelism = min(parallelism, completions)
    replicas = None if copies is None or parallelism is None else copies * parallelism
    return template_at(doc, (*job_path, "template"), role, replicas)


def release(doc: Document) -> None:
    """Forget the facts derived from `doc`, its pod templates and their containers (once it is linted), so
    that reference counting frees them without the cyclic collector."""
    memo = doc.__dict__.get("_kubegpu_memo") or {}
    inner = memo.get("embedded")  # objects read from an Argo resource template's manifest
    for embedded in inner.documents if inner is not None else ():
        release(embedded)
    for template in memo.get("pod_templates", ()):
        for container in template.containers:
            forget(container)
        forget(template)
    forget(doc)


def filled_resources(
    own: Mapping[str, object], fill: ContainerFill | None
) -> tuple[dict[str, object], dict[str, object]] | None:
    """The requests and limits of a container's `resources` after its controller fills in the ones it leaves out
    (None when nothing is filled)."""
    if fill is None or fill.requests is None or fill.limits is None:
        return None
    requests = dict(as_mapping(own.get("requests")))
    limits = dict(as_mapping(own.get("limits")))
    for name, value in fill.requests.items():
        requests.setdefault(name, value)
    for name, value in fill.limits.items():
        limits.setdefault(name, value)
    return requests, limits
