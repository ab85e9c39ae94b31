"""A pod as the kubelet's resource managers see it: containers by kind with integer requests.

The pod is read, defaulted and summed by the one pod model (`kubegpu.manifests.pod`, kubernetes v1.35
PodRequests / PodLimits); this module only keeps the integer units the resource managers count in.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from functools import cached_property
from typing import Any

import kubegpu.manifests.pod as podmodel
from kubegpu.errors import InputError
from kubegpu.manifests import Document, pod_spec
from kubegpu.manifests.pod import CPU, KIND_APP, KIND_INIT, KIND_SIDECAR, MEMORY
from kubegpu.workloads import pod_templates
from kubegpu.workloads.expand import bind_runtimes, by_kind, makes_no_pods, runtime_users, with_embedded

__all__ = [
    "CPU",
    "KIND_APP",
    "KIND_INIT",
    "KIND_SIDECAR",
    "MEMORY",
    "ContainerRequest",
    "PodRequest",
    "aggregate",
    "document_pods",
]


@dataclass(frozen=True)
class ContainerRequest:
    """One container: CPU in millicores, memory and hugepages in bytes, devices as counts."""

    name: str
    kind: str = KIND_APP
    requests: Mapping[str, int] = field(default_factory=dict)
    limits: Mapping[str, int] = field(default_factory=dict)

    @property
    def restartable(self) -> bool:
        return self.kind == KIND_SIDECAR

    def request(self, resource: str) -> int:
        return int(self.requests.get(resource, 0))


@dataclass(frozen=True)
class PodRequest:
    """A pod: its containers in kubelet order (init containers first) and optional pod resources."""

    name: str
    init_containers: tuple[ContainerRequest, ...] = ()
    containers: tuple[ContainerRequest, ...] = ()
    namespace: str = "default"
    uid: str = ""
    pod_level_requests: Mapping[str, int] | None = None
    pod_level_limits: Mapping[str, int] | None = None
    source: str | None = None
    overhead: Mapping[str, int] = field(default_factory=dict)
    spec_model: podmodel.Pod | None = field(default=None, compare=False, repr=False)

    @property
    def key(self) -> str:
        return self.uid or f"{self.namespace}/{self.name}"

    def all_containers(self) -> tuple[ContainerRequest, ...]:
        return self.init_containers + self.containers

    @cached_property
    def model(self) -> podmodel.Pod:
        """The pod model: the one read from the spec, else one built from these integer amounts."""
        if self.spec_model is not None:
            return self.spec_model
        pod_level = None
        if self.pod_level_requests is not None or self.pod_level_limits is not None:
            pod_level = (_exact(self.pod_level_requests or {}), _exact(self.pod_level_limits or {}))
        return podmodel.make_pod(
            (
                podmodel.make_container(c.name, c.kind, _exact(c.requests), _exact(c.limits))
                for c in self.all_containers()
            ),
            pod_level,
            _exact(self.overhead),
        )

    def effective(self, resource: str, limits: bool = False) -> int:
        """PodRequests (or PodLimits) of one resource, pod-level resources and overhead included."""
        amounts = podmodel.pod_limits(self.model) if limits else podmodel.pod_requests(self.model)
        value = amounts.get(resource)
        return 0 if value is None else podmodel.canonical(resource, value)

    def resource_names(self) -> list[str]:
        names = {r for c in self.all_containers() for r in (*c.requests, *c.limits)}
        return sorted(names)

    @property
    def uses_pod_level_resources(self) -> bool:
        """Pod-level cpu, memory or hugepages are set (IsPodLevelResourcesSet): the resource managers skip it."""
        return podmodel.pod_level_resources_set(self.model)

    @classmethod
    def from_pod_spec(
        cls,
        name: str,
        spec: Mapping[str, Any],
        source: str | None = None,
        namespace: str = "default",
        uid: str = "",
    ) -> PodRequest:
        """Read a PodSpec mapping; InputError naming the field for anything unreadable."""
        model = podmodel.read_pod_spec(spec, strict=True, where=f"pod {name}: spec", source=source)
        return cls.from_model(name, model, source, namespace, uid)

    @classmethod
    def from_model(
        cls, name: str, model: podmodel.Pod, source: str | None = None, namespace: str = "default", uid: str = ""
    ) -> PodRequest:
        """The kubelet's view of a pod model (InputError when it has no app container)."""
        if not model.app_containers:
            raise InputError(f"pod {name}: spec.containers is empty", file=source)
        resources = model.resources
        return cls(
            name=name,
            init_containers=tuple(_container(c) for c in model.init_containers),
            containers=tuple(_container(c) for c in model.app_containers),
            namespace=namespace,
            uid=uid,
            pod_level_requests=None if resources is None else podmodel.canonical_amounts(resources.requests),
            pod_level_limits=None if resources is None else podmodel.canonical_amounts(resources.limits),
            source=source,
            overhead=podmodel.canonical_amounts(model.overhead),
            spec_model=model,
        )


def aggregate(pod: PodRequest, amounts: Callable[[ContainerRequest], Mapping[str, int]]) -> dict[str, int]:
    """The pod model's container summation over per-container integer amounts a resource manager chooses
    (app containers and sidecars add, each init container with the sidecars before it is a maximum)."""
    steps = [(c.kind, {r: Decimal(n) for r, n in amounts(c).items()}) for c in pod.all_containers()]
    return {r: int(v) for r, v in podmodel.aggregate(steps).items()}


def _container(container: podmodel.Container) -> ContainerRequest:
    return ContainerRequest(
        container.name,
        container.kind,
        podmodel.canonical_amounts(container.requests),
        podmodel.canonical_amounts(container.limits),
    )


def _exact(amounts: Mapping[str, int]) -> dict[str, Decimal]:
    return {name: Decimal(value) / 1000 if name == CPU else Decimal(value) for name, value in amounts.items()}


def document_pods(doc: Document) -> list[PodRequest]:
    """One PodRequest per pod template of a manifest document (a Pod, or every role of a workload; a rebuilt pod
    spec for kinds such as KServe predictor.model), named
    after the object (`NAME-ROLE` for a role); an unreadable quantity names the template's file and line."""
    meta = doc.metadata
    base = str(meta.get("name") or meta.get("generateName") or doc.kind.lower())
    namespace = str(meta.get("namespace") or "default")
    out: list[PodRequest] = []
    for template in pod_templates(doc):
        where = doc.location(template.path)
        name = f"{base}-{template.role}" if template.role else base
        try:
            out.append(PodRequest.from_pod_spec(name, pod_spec(template), source=where.file, namespace=namespace))
        except InputError as err:
            raise InputError(err.message, file=where.file, line=where.line) from err
    return out


@dataclass(frozen=True)
class InputPods:
    """The pods of an input, and one notice line per object that makes none of its own (`makes_no_pods`)."""

    pods: tuple[PodRequest, ...]
    notices: tuple[str, ...]


def input_pods(
    files: Sequence[tuple[str, Sequence[Document]]], found_in_folders: frozenset[str] = frozenset()
) -> InputPods:
    """The pods of the files given (name, documents), as lint reads them: objects Argo steps create, TrainJobs and
    KServe predictors bound to a runtime in any of the files. InputError names a file that holds neither a pod
    nor an object skipped with a notice (a runtime in use, a patch fragment), unless a folder walk found it; and
    says so when no file holds one."""
    per_file = [(name, with_embedded(documents)) for name, documents in files]
    every = [doc for _, documents in per_file for doc in documents]
    bind_runtimes(every, by_kind(every))
    users = runtime_users(every)
    pods: list[PodRequest] = []
    notices: list[str] = []
    for name, documents in per_file:
        found: list[PodRequest] = []
        skipped = 0
        for doc in documents:
            why = makes_no_pods(doc, users)
            if why is None:
                found.extend(document_pods(doc))
            else:
                skipped += 1
                notices.append(why)
        if not found and not skipped and name not in found_in_folders:
            raise InputError("no pod or pod template found", file=name)
        pods.extend(found)
    if not pods and not notices and files:
        raise InputError(f"no pod or pod template found in {', '.join(name for name, _ in files)}")
    return InputPods(tuple(pods), tuple(notices))
