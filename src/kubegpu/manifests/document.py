"""A parsed Kubernetes document with the YAML node tree it came from, for positions on demand.

Positions are walked out of the composed node tree only for fields that have findings.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import yaml

FieldPath = tuple[str | int, ...]


def format_path(path: FieldPath) -> str:
    """`("spec", "containers", 0, "resources")` -> `spec.containers[0].resources`."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + part
    return out


@dataclass(frozen=True)
class Location:
    """Where a finding points: file, 1-based line and column, and the field path in its document."""

    file: str
    line: int
    column: int
    path: FieldPath = ()

    @property
    def dotted_path(self) -> str:
        return format_path(self.path)


@dataclass(frozen=True)
class ObjectRef:
    """The Kubernetes object a finding is about."""

    kind: str
    name: str
    namespace: str | None = None
    api_version: str = ""


@dataclass(eq=False)
class Document:
    """One Kubernetes object from a file: its data, source, index in the stream and node tree.

    `prefix` is the path of this object inside the parsed document (e.g. `("items", 3)` for an
    item of a `kind: List`), so that fixes and positions address the right place in the file.
    """

    source: str
    index: int
    data: Any
    node: yaml.Node | None = None
    prefix: FieldPath = ()
    start_line: int = 1
    line_offset: int = 0
    is_json: bool = False
    _positions: dict[FieldPath, tuple[int, int]] = field(default_factory=dict, repr=False)

    @cached_property
    def kind(self) -> str:
        return str(self.data.get("kind", "")) if isinstance(self.data, Mapping) else ""

    @cached_property
    def api_version(self) -> str:
        return str(self.data.get("apiVersion", "")) if isinstance(self.data, Mapping) else ""

    @cached_property
    def metadata(self) -> Mapping[str, Any]:
        meta = self.data.get("metadata") if isinstance(self.data, Mapping) else None
        return meta if isinstance(meta, Mapping) else {}

    @cached_property
    def ref(self) -> ObjectRef:
        meta = self.metadata
        namespace = meta.get("namespace")
        return ObjectRef(
            kind=self.kind,
            name=str(meta.get("name") or meta.get("generateName") or ""),
            namespace=None if namespace is None else str(namespace),
            api_version=self.api_version,
        )

    def location(self, path: FieldPath = ()) -> Location:
        """The position of the deepest existing node along `path` (the field, not the document).

        `path` is relative to this object; the Location's path is relative to the parsed document,
        so an item of a `kind: List` reads `items[3].spec…` as it does in the file.
        """
        line, column = self._position(path)
        return Location(self.source, line, column, (*self.prefix, *path))

    def _position(self, path: FieldPath) -> tuple[int, int]:
        cached = self._positions.get(path)
        if cached is not None:
            return cached
        node = self.node
        if node is None:
            return (self.start_line, 1)
        best = node.start_mark
        for part in (*self.prefix, *path):
            child = _child(node, part)
            if child is None:
                break
            key_node, node = child
            best = (key_node or node).start_mark
        position = (best.line + 1 + self.line_offset, best.column + 1)
        self._positions[path] = position
        return position


def _child(node: yaml.Node, part: str | int) -> tuple[yaml.Node | None, yaml.Node] | None:
    """The (key node, value node) of `part` in a mapping or sequence node, or None."""
    if isinstance(node, yaml.MappingNode) and isinstance(part, str):
        # Index a mapping's keys on first use: findings often share long path prefixes.
        index: dict[str, tuple[yaml.Node, yaml.Node]] | None = node.__dict__.get("_kubegpu_keys")
        if index is None:
            index = {}
            for key_node, value_node in node.value:
                if isinstance(key_node, yaml.ScalarNode):
                    index[key_node.value] = (key_node, value_node)  # the last wins, as in the data
            node.__dict__["_kubegpu_keys"] = index
        return index.get(part)
    if isinstance(node, yaml.SequenceNode) and isinstance(part, int):
        items: Sequence[yaml.Node] = node.value
        if 0 <= part < len(items):
            return None, items[part]
    return None


def get_path(data: Any, path: FieldPath) -> Any:
    """The value at `path` inside plain data, or None when any step is missing."""
    current = data
    for part in path:
        if isinstance(part, int):
            if not isinstance(current, list) or not 0 <= part < len(current):
                return None
            current = current[part]
        else:
            if not isinstance(current, Mapping) or part not in current:
                return None
            current = current[part]
    return current


def as_mapping(value: Any) -> Mapping[str, Any]:
    """`value` when it is a mapping, else an empty one: for optional fields of unchecked input."""
    return value if isinstance(value, Mapping) else {}


def mapping_items(value: Any) -> list[Mapping[str, Any]]:
    """The mappings of a list field (other items dropped); empty when the field is not a list."""
    return [v for v in value if isinstance(v, Mapping)] if isinstance(value, list) else []
