"""A parsed Kubernetes document with the YAML node tree it came from, for positions on demand.

Positions are walked out of the composed node tree only for fields that have findings.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeGuard

import yaml

from kubegpu.manifests.memo import memoised

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


@dataclass(frozen=True, slots=True)  # one per finding: tens of thousands in a monorepo
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
    # Where an object read from text inside another object came from, in words (an Argo resource template's
    # manifest); '' for objects of the file itself. Findings on such objects say so and carry no fix.
    embedded_in: str = ""
    # True when the text it was read from holds no placeholder syntax at all (`manifests.placeholders`): walks
    # looking for placeholders can then be skipped. False (unknown) for objects built otherwise.
    placeholder_free: bool = False
    _nodes: dict[FieldPath, tuple[yaml.Node, yaml.Mark]] = field(default_factory=dict, repr=False)
    _locations: dict[FieldPath, Location] = field(default_factory=dict, repr=False)
    # What every rule asks first, read once when the document is made (the data is not changed afterwards).
    kind: str = field(init=False, repr=False)
    api_version: str = field(init=False, repr=False)
    metadata: Mapping[str, Any] = field(init=False, repr=False)
    ref: ObjectRef = field(init=False, repr=False)

    def __post_init__(self) -> None:
        data = self.data if type(self.data) is dict or isinstance(self.data, Mapping) else {}
        self.kind = str(data.get("kind", ""))
        self.api_version = str(data.get("apiVersion", ""))
        meta = data.get("metadata")
        self.metadata = meta if type(meta) is dict or isinstance(meta, Mapping) else {}
        namespace = self.metadata.get("namespace")
        self.ref = ObjectRef(  # (positional: a frozen object built by keywords costs a fifth more; one per object)
            self.kind,
            str(self.metadata.get("name") or self.metadata.get("generateName") or ""),
            None if namespace is None else str(namespace),
            self.api_version,
        )

    def location(self, path: FieldPath = ()) -> Location:
        """The position of the deepest existing node along `path` (the field, not the document).

        `path` is relative to this object; the Location's path is relative to the parsed document,
        so an item of a `kind: List` reads `items[3].spec…` as it does in the file.
        """
        found = self._locations.get(path)
        if found is None:
            line, column = self._position(path)
            found = self._locations[path] = Location(
                self.source, line, column, (*self.prefix, *path) if self.prefix else path
            )
        return found

    def drop_nodes(self) -> None:
        """Let go of the node tree once no position will be asked again (a streamed object, once its findings
        are located): freed while it is still in the cache, not with the rest of its file. Positions read as the
        object's first line afterwards."""
        self.node = None
        self._nodes.clear()

    def value_node(self, path: FieldPath) -> yaml.Node | None:
        """The YAML node of the value at `path` (None without a node tree or when the path is missing)."""
        if self.node is None:
            return None
        node = _walk(self.node, self.node.start_mark, self.prefix)[0]
        for part in path:
            step = child_node(node, part)
            if step is None:
                return None
            node = step[0]
        return node

    def _position(self, path: FieldPath) -> tuple[int, int]:
        if self.node is None:
            return (self.start_line, 1)
        nodes = self._nodes
        if not nodes:  # this object's own node: `prefix` walked down from its parsed document's
            nodes[()] = _walk(self.node, self.node.start_mark, self.prefix)
        # Walk on from the longest prefix of `path` already walked: findings of one object share long prefixes.
        depth = len(path)
        found = nodes.get(path)
        while found is None:
            depth -= 1
            found = nodes.get(path[:depth])
        node, mark = found
        for i in range(depth, len(path)):
            step = child_node(node, path[i])
            if step is None:
                break
            node, mark = nodes[path[: i + 1]] = step
        return (mark.line + 1 + self.line_offset, mark.column + 1)


def _walk(node: yaml.Node, mark: yaml.Mark, parts: FieldPath) -> tuple[yaml.Node, yaml.Mark]:
    """The deepest node along `parts` below `node`, and where its field starts."""
    for part in parts:
        step = child_node(node, part)
        if step is None:
            break
        node, mark = step
    return node, mark


def child_node(node: yaml.Node, part: str | int) -> tuple[yaml.Node, yaml.Mark] | None:
    """The value node of `part` in a mapping or sequence node and where its field starts (its key, or the item),
    or None; of duplicate keys the last wins, as in the data. Positions and fix-mode comment handling read this."""
    node_type = type(node)
    if node_type is yaml.MappingNode and type(part) is str:
        pairs: list[tuple[yaml.Node, yaml.Node]] = node.value
        if len(pairs) > _SCAN_LIMIT:
            found = _key_index(node).get(part)
            return None if found is None else (found[1], found[0].start_mark)
        for key_node, value_node in reversed(pairs):  # the last wins, as in the data
            if key_node.value == part and type(key_node) is yaml.ScalarNode:
                return value_node, key_node.start_mark
        return None
    if node_type is yaml.SequenceNode and type(part) is int:
        items: Sequence[yaml.Node] = node.value
        if 0 <= part < len(items):
            return items[part], items[part].start_mark
    return None


_SCAN_LIMIT = 16  # mappings up to this size are scanned; larger ones are indexed once


def _key_index(node: yaml.Node) -> dict[str, tuple[yaml.Node, yaml.Node]]:
    """A large mapping's scalar keys, indexed on first use and kept on the node."""
    return memoised(node, "keys", _index_keys, node)


def _index_keys(node: yaml.Node) -> dict[str, tuple[yaml.Node, yaml.Node]]:
    index: dict[str, tuple[yaml.Node, yaml.Node]] = {}
    for key_node, value_node in node.value:
        if type(key_node) is yaml.ScalarNode:
            index[key_node.value] = (key_node, value_node)  # the last wins, as in the data
    return index


def get_path(data: Any, path: FieldPath) -> Any:
    """The value at `path` inside plain data, or None when any step is missing."""
    current = data
    for part in path:
        if isinstance(part, int):
            if not isinstance(current, list) or not 0 <= part < len(current):
                return None
            current = current[part]
        elif type(current) is dict:  # the loaders' mappings; skips the slower abstract check below
            current = current.get(part)  # a missing key reads as None, which ends the walk
        elif isinstance(current, Mapping):
            current = current.get(part)
        else:
            return None
    return current


def is_mapping(value: Any) -> TypeGuard[Mapping[str, Any]]:
    """`isinstance(value, Mapping)`, answered without the abstract-class check for the loaders' dicts and None
    (most of what rules ask about): that check runs Python code on every call."""
    return type(value) is dict or (value is not None and isinstance(value, Mapping))


def as_mapping(value: Any) -> Mapping[str, Any]:
    """`value` when it is a mapping, else an empty one: for optional fields of unchecked input."""
    if type(value) is dict:
        return value
    return value if value is not None and isinstance(value, Mapping) else {}  # (None: no abstract check)


def mapping_items(value: Any) -> list[Mapping[str, Any]]:
    """The mappings of a list field (other items dropped); empty when the field is not a list."""
    return [v for v in value if isinstance(v, Mapping)] if isinstance(value, list) else []
