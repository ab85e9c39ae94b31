"""Kinds no adapter knows: every pod spec under `spec`, found by a generic search, and whether lint read the object
by a known mapping, generically, not at all, or as an object that holds no pods.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from kubegpu.manifests.document import Document, FieldPath, as_mapping, get_path
from kubegpu.manifests.template import PodTemplate, containers_of, int_field

_MAX_DEPTH = 16


def _is_pod_spec(value: Mapping[str, Any]) -> bool:
    items = value.get("containers")
    return (
        isinstance(items, list)
        and bool(items)
        and all(isinstance(c, Mapping) and ("image" in c or "name" in c) for c in items)
    )


def generic_templates(doc: Document) -> Iterator[PodTemplate]:
    """Every pod spec (a mapping with a `containers` list) under spec at any depth, outermost first.

    A pod spec under a `spec` key whose parent holds `metadata` is a PodTemplateSpec (its labels apply); the
    count of pods is a sibling `replicas` of the template (or of the pod spec), else unknown.
    """
    spec = doc.data.get("spec")
    if isinstance(spec, Mapping):
        yield from _walk(doc, spec, ("spec",), doc.data, "", 0)


def _walk(
    doc: Document, node: Mapping[str, Any], path: FieldPath, parent: Mapping[str, Any], role: str, depth: int
) -> Iterator[PodTemplate]:
    if depth > _MAX_DEPTH:
        return
    if _is_pod_spec(node):
        yield _generic_template(doc, node, path, parent, role)
        return
    for key, value in node.items():
        if key in ("status", "metadata"):
            continue
        child_role = role if key in ("spec", "template", "podSpec", "podTemplate") else str(key)
        if isinstance(value, Mapping):
            yield from _walk(doc, value, (*path, str(key)), node, child_role, depth + 1)
        elif isinstance(value, list):
            for i, item in enumerate(value):
                if isinstance(item, Mapping):
                    name = item.get("name") or item.get("groupName") or f"{key}-{i}"
                    yield from _walk(doc, item, (*path, str(key), i), node, str(name), depth + 1)


def _generic_template(
    doc: Document, pod: Mapping[str, Any], path: FieldPath, parent: Mapping[str, Any], role: str
) -> PodTemplate:
    metadata_path: FieldPath | None = None
    metadata: Mapping[str, Any] = {}
    if path and path[-1] == "spec" and isinstance(parent.get("metadata"), Mapping):
        metadata_path = (*path[:-1], "metadata")
        metadata = as_mapping(parent.get("metadata"))
    owner = as_mapping(get_path(doc.data, path[:-2])) if len(path) > 2 and path[-1] == "spec" else parent
    holder = next((m for m in (owner, parent, pod) if "replicas" in m), {})
    replicas = int_field(holder.get("replicas"), None)
    return PodTemplate(doc, path, pod, metadata_path, metadata, role, replicas, containers_of(pod, path))
