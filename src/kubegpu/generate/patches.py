"""Per-workload changes as kustomize bundles: JSON6902 patch files plus a kustomization.yaml.

For users who do not let tools rewrite their manifests: every change is an RFC 6902 operation
applied (with jsonpatch) to a copy of the workload as it is built, so the bundle is known to apply.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonpatch

from kubegpu.generate.output import FieldPath, Generated, Note, OutFile, YamlDoc
from kubegpu.generate.workload import Workload


def pointer(path: FieldPath) -> str:
    """A JSON pointer (RFC 6901) for a field path."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


@dataclass(frozen=True)
class Change:
    """One JSON6902 operation and why it is there."""

    op: Mapping[str, Any]
    why: str = ""


class PatchBuilder:
    """Collects operations against a working copy of the workload, creating missing parents."""

    def __init__(self, workload: Workload) -> None:
        self.workload = workload
        self.obj: Any = copy.deepcopy(dict(workload.obj))
        self.changes: list[Change] = []

    def get(self, path: FieldPath) -> Any:
        node: Any = self.obj
        for part in path:
            if isinstance(part, int):
                if not isinstance(node, list) or part >= len(node):
                    return None
                node = node[part]
            else:
                if not isinstance(node, Mapping) or part not in node:
                    return None
                node = node[part]
        return node

    def apply(self, op: dict[str, Any], why: str = "") -> None:
        """Apply one RFC 6902 operation as given (e.g. one the fix engine planned) and keep it for the patch."""
        self._apply(copy.deepcopy(op), why)

    def _apply(self, op: dict[str, Any], why: str) -> None:
        self.obj = jsonpatch.apply_patch(self.obj, [op])
        self.changes.append(Change(op, why))

    def _ensure_parent(self, path: FieldPath) -> None:
        for depth in range(1, len(path)):
            parent = path[:depth]
            if self.get(parent) is None:
                self._apply({"op": "add", "path": pointer(parent), "value": {}}, "")

    def set(self, path: FieldPath, value: Any, why: str = "") -> None:
        """Add or replace the field at `path`."""
        self._ensure_parent(path)
        op = "replace" if self.get(path) is not None else "add"
        self._apply({"op": op, "path": pointer(path), "value": copy.deepcopy(value)}, why)

    def append(self, path: FieldPath, value: Any, why: str = "") -> None:
        """Append to the list at `path`, creating the list when it is absent."""
        current = self.get(path)
        if current is None:
            self._ensure_parent(path)
            self._apply({"op": "add", "path": pointer(path), "value": [copy.deepcopy(value)]}, why)
        else:
            self._apply({"op": "add", "path": pointer(path) + "/-", "value": copy.deepcopy(value)}, why)


@dataclass(frozen=True)
class PatchBundle:
    """The files to write, the workload as it will be after `kustomize build`, and the findings of the chosen
    fixes that remain (one line each, for the user)."""

    generated: Generated
    patched: Mapping[str, Any]
    not_fixed: tuple[str, ...] = ()


def _group_version(api_version: str) -> tuple[str, str]:
    if "/" in api_version:
        group, version = api_version.split("/", 1)
        return group, version
    return "", api_version


def bundle(
    builder: PatchBuilder,
    patch_name: str,
    header: Sequence[str],
    out_dir: Path | None = None,
    extra: Sequence[OutFile] = (),
) -> PatchBundle:
    """kustomization.yaml + the patch file (+ `extra` resources listed in the kustomization)."""
    workload = builder.workload
    ops = [dict(c.op) for c in builder.changes]
    notes = tuple(Note((i,), c.why) for i, c in enumerate(builder.changes) if c.why)
    patch_file = OutFile(
        patch_name,
        (YamlDoc(ops, notes=notes),),
        header=(f"JSON6902 patch for {workload.kind}/{workload.name} ({workload.source}).",),
    )
    source = workload.source
    if out_dir is not None and source != "-":
        source = os.path.relpath(Path(source).resolve(), out_dir.resolve())
    group, version = _group_version(workload.api_version)
    target: dict[str, Any] = {"version": version, "kind": workload.kind, "name": workload.name}
    if group:
        target = {"group": group, **target}
    if workload.namespace:
        target["namespace"] = workload.namespace
    kustomization = {
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "resources": [source, *(f.name for f in extra)],
        "patches": [{"path": patch_name, "target": target}],
    }
    kust_notes = (
        Note(
            ("resources", 0),
            "Your manifest, unchanged"
            + ("" if out_dir is not None else " (path as given: make it relative to this file)")
            + ".",
        ),
    )
    files = (
        OutFile("kustomization.yaml", (YamlDoc(kustomization, notes=kust_notes),), header=tuple(header)),
        patch_file,
        *extra,
    )
    return PatchBundle(Generated(files, patched=(builder.obj,)), builder.obj)
