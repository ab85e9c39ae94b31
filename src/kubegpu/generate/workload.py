"""Read the manifests a generator works from (`--for`, `--from`): workloads and their pod templates.

Loads YAML/JSON with PyYAML (C loader when present), keeps each document's line, and finds the
pod template and pod count of the workload kinds generators patch; bad input is an InputError.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from kubegpu.errors import InputError
from kubegpu.generate.output import FieldPath
from kubegpu.units.quantity import parse_quantity

_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml is ~10x faster

_SCALAR_GPU_SUFFIX = "/gpu"
_REPLICATED = ("Deployment", "StatefulSet", "ReplicaSet")


@dataclass(frozen=True)
class PodSpecRef:
    """One pod template inside a workload: where it is and how many pods it makes."""

    path: FieldPath  # path to the template (an object with metadata and spec); () for a Pod
    pods: int
    role: str = ""

    @property
    def spec_path(self) -> FieldPath:
        return (*self.path, "spec")

    @property
    def metadata_path(self) -> FieldPath:
        return (*self.path, "metadata")


@dataclass(frozen=True)
class Workload:
    """A workload document from a manifest file, with its pod templates."""

    source: str
    line: int
    obj: Mapping[str, Any]
    templates: tuple[PodSpecRef, ...]

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
        spec = self.at(ref.spec_path)
        return spec if isinstance(spec, Mapping) else {}

    def where(self) -> str:
        return f"{self.source}:{self.line}"


def load_documents(path: str) -> list[tuple[int, Any]]:
    """Every non-empty document of a YAML/JSON file with its first line; `-` reads stdin."""
    if path == "-":
        import sys

        text = sys.stdin.read()
    else:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except FileNotFoundError as err:
            raise InputError("no such file", file=path) from err
        except (OSError, UnicodeDecodeError) as err:
            raise InputError(f"cannot read: {err}", file=path) from err
    loader = _Loader(text)
    docs: list[tuple[int, Any]] = []
    try:
        while loader.check_node():
            node = loader.get_node()
            if node is None:
                break
            data = loader.construct_document(node)
            if data is None:
                continue
            line = node.start_mark.line + 1
            if isinstance(data, Mapping) and data.get("kind") == "List":
                docs.extend((line, item) for item in data.get("items") or ())
            else:
                docs.append((line, data))
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        line = None if mark is None else mark.line + 1
        raise InputError(
            f"not valid YAML: {err.problem or err.context}", file=path, line=line
        ) from err
    except yaml.YAMLError as err:
        raise InputError(f"not valid YAML: {err}", file=path) from err
    finally:
        loader.dispose()
    return docs


def load_workloads(paths: Iterable[str]) -> list[Workload]:
    """Every workload with a pod template in the given files (in order)."""
    found: list[Workload] = []
    for path in paths:
        for line, data in load_documents(path):
            if not isinstance(data, Mapping):
                raise InputError("a document is not a mapping (an object)", file=path, line=line)
            templates = tuple(templates_of(data))
            if templates:
                found.append(Workload(path, line, data, templates))
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


def _int(value: Any, default: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        return default
    return value


def templates_of(obj: Mapping[str, Any]) -> Iterator[PodSpecRef]:
    """The pod templates of a workload object, with their paths and pod counts."""
    kind = obj.get("kind")
    spec = obj.get("spec")
    if not isinstance(spec, Mapping):
        return
    if kind == "Pod":
        yield PodSpecRef((), 1)
    elif kind in _REPLICATED:
        yield PodSpecRef(("spec", "template"), _int(spec.get("replicas"), 1))
    elif kind == "DaemonSet":
        yield PodSpecRef(("spec", "template"), 1, role="per node")
    elif kind == "Job":
        yield PodSpecRef(("spec", "template"), _int(spec.get("parallelism"), 1))
    elif kind == "CronJob":
        job = (spec.get("jobTemplate") or {}).get("spec") or {}
        yield PodSpecRef(
            ("spec", "jobTemplate", "spec", "template"), _int(job.get("parallelism"), 1)
        )
    elif kind == "JobSet":
        for i, rjob in enumerate(spec.get("replicatedJobs") or ()):
            job = ((rjob or {}).get("template") or {}).get("spec") or {}
            pods = _int(rjob.get("replicas"), 1) * _int(job.get("parallelism"), 1)
            path: FieldPath = ("spec", "replicatedJobs", i, "template", "spec", "template")
            yield PodSpecRef(path, pods, role=str(rjob.get("name") or i))
    elif kind in ("PyTorchJob", "MPIJob", "TFJob"):
        key = {"PyTorchJob": "pytorchReplicaSpecs", "MPIJob": "mpiReplicaSpecs"}.get(
            str(kind), "tfReplicaSpecs"
        )
        for role, rspec in (spec.get(key) or {}).items():
            if isinstance(rspec, Mapping):
                yield PodSpecRef(
                    ("spec", key, role, "template"), _int(rspec.get("replicas"), 1), role
                )


def containers(spec: Mapping[str, Any], init: bool = False) -> list[Mapping[str, Any]]:
    key = "initContainers" if init else "containers"
    return [c for c in spec.get(key) or () if isinstance(c, Mapping)]


def gpu_count(container: Mapping[str, Any]) -> int:
    """GPUs a container asks for: any `<vendor>/gpu` extended resource (limits, else requests)."""
    resources = container.get("resources") or {}
    total = 0
    for section in ("limits", "requests"):
        values = resources.get(section) or {}
        found = 0
        for name, value in values.items():
            if str(name).endswith(_SCALAR_GPU_SUFFIX):
                try:
                    found += parse_quantity(value).ceil
                except InputError:
                    continue
        if found:
            total = found
            break
    return total


def is_gpu_pod(spec: Mapping[str, Any]) -> bool:
    return any(gpu_count(c) > 0 for c in containers(spec) + containers(spec, init=True))


def sum_requests(items: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """Per-resource requests summed over containers (requests, else limits), in base units.

    CPU in millicores, everything else in whole units (bytes, devices).
    """
    totals: dict[str, int] = {}
    for container in items:
        resources = container.get("resources") or {}
        merged = dict(resources.get("limits") or {})
        merged.update(resources.get("requests") or {})
        for name, value in merged.items():
            try:
                q = parse_quantity(value)
            except InputError:
                continue
            amount = q.millis if name == "cpu" else q.ceil
            totals[str(name)] = totals.get(str(name), 0) + amount
    return totals
