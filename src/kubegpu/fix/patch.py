"""Apply JSON-Patch-like edits (add, replace, remove; `-` appends) to a round-trip tree or plain JSON data.

Comment lines that followed the last entry of a collection move with the end of that collection when an entry
is appended or removed, so a comment that introduced the next field still sits right before it.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, MutableMapping, MutableSequence
from dataclasses import dataclass
from typing import Any

from ruamel.yaml.comments import CommentedBase, CommentedMap, CommentedSeq
from ruamel.yaml.error import CommentMark
from ruamel.yaml.scalarstring import DoubleQuotedScalarString, SingleQuotedScalarString
from ruamel.yaml.tokens import CommentToken

from kubegpu.manifests import FieldPath

APPEND = "-"
# A new key goes before this existing key instead of at the end (`metadata` above `spec`), as people write them.
KEY_BEFORE = {"metadata": "spec"}


class PatchError(Exception):
    """An edit cannot be applied: its path does not exist (any more), or the op is unknown."""


@dataclass(frozen=True)
class Style:
    """How new values are written: whether the tree is round-trip YAML, and which quote strings get."""

    round_trip: bool
    quote: str = '"'
    needs_quotes: Callable[[str], bool] | None = None


def resolve_parent(
    root: Any,
    path: FieldPath,
    create: bool,
    round_trip: bool = False,
) -> tuple[Any, str | int, tuple[Any, str] | None]:
    """The container holding the last step of `path`, that step, and where comments moved by creating missing
    mappings (`create`) must go back: (the collection that got a new last entry, the comment lines)."""
    if not path:
        raise PatchError("an edit cannot replace the whole object")
    node = root
    pending: tuple[Any, str] | None = None
    for depth, part in enumerate(path[:-1]):
        if isinstance(node, MutableMapping) and isinstance(part, str):
            if part not in node:
                if not create or not all(isinstance(p, str) and p != APPEND for p in path[depth + 1 :]):
                    raise PatchError(f"no field '{part}'")
                trailing = _take_trailing(node) if round_trip and pending is None and len(node) else None
                if trailing:
                    pending = (node, trailing)
                node[part] = _new_mapping(node)
            node = node[part]
        elif isinstance(node, MutableSequence) and isinstance(part, int) and not isinstance(part, bool):
            if not 0 <= part < len(node):
                raise PatchError(f"no item {part} (the list has {len(node)})")
            node = node[part]
        else:
            raise PatchError(f"cannot step into {type(node).__name__} with {part!r} at depth {depth}")
        if not isinstance(node, MutableMapping | MutableSequence):
            raise PatchError(f"'{part}' is a scalar, not a mapping or list")
    return node, path[-1], pending


def check_edit(root: Any, op: str, path: FieldPath, created: set[FieldPath]) -> str | None:
    """Why `op` at `path` cannot apply now (None when it can); `created` holds paths made by earlier edits."""
    if op not in ("add", "replace", "remove"):
        return f"unknown edit op {op!r}"
    node = root
    for depth, part in enumerate(path):
        last = depth == len(path) - 1
        if path[: depth + 1] in created:
            return None
        if isinstance(node, MutableMapping) and isinstance(part, str) and part != APPEND:
            if part not in node:
                rest = path[depth + 1 :]
                if op == "add" and all(isinstance(p, str) and p != APPEND for p in rest):
                    return None  # add creates missing mappings, never lists
                return f"path {_show(path)} does not exist (any more)"
            node = node[part]
        elif isinstance(node, MutableSequence) and (part == APPEND or isinstance(part, int)):
            if part == APPEND:
                return None if op == "add" and last else f"'-' is only valid as the last step of an add: {_show(path)}"
            assert isinstance(part, int)
            limit = len(node) + (1 if op == "add" and last else 0)
            if not 0 <= part < limit:
                return f"path {_show(path)} does not exist (any more)"
            node = node[part]
        else:
            return f"path {_show(path)} does not exist (any more)"
    return None


def json_patch(root: Any, op: str, path: FieldPath, value: Any) -> list[dict[str, Any]]:
    """The RFC 6902 operations that do what apply_edit(root, op, path, value) does: first an `add {}` for each
    mapping the edit creates (RFC 6902 refuses an add under a missing parent), then the edit itself. Call it
    before applying the edit, on a tree where check_edit passed."""
    ops: list[dict[str, Any]] = []
    node = root
    for depth, part in enumerate(path[:-1]):
        if op == "add" and isinstance(node, MutableMapping) and isinstance(part, str) and part not in node:
            ops.extend({"op": "add", "path": pointer(path[: d + 1]), "value": {}} for d in range(depth, len(path) - 1))
            break
        node = node[part] if isinstance(node, MutableMapping) else node[int(part)]  # check_edit passed
    edit: dict[str, Any] = {"op": op, "path": pointer(path)}
    if op != "remove":
        edit["value"] = value
    ops.append(edit)
    return ops


def pointer(path: FieldPath) -> str:
    """An RFC 6901 JSON Pointer (`~` and `/` escaped); `-` stays the append position."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


def apply_edit(root: Any, op: str, path: FieldPath, value: Any, style: Style) -> None:
    """Apply one edit in place (JSON Patch semantics: add replaces an existing key, inserts into a list)."""
    if op not in ("add", "replace", "remove"):
        raise PatchError(f"unknown edit op {op!r}")
    parent, step, pending = resolve_parent(root, path, create=op == "add", round_trip=style.round_trip)
    if isinstance(parent, MutableMapping):
        if not isinstance(step, str):
            raise PatchError(f"a mapping has no item {step!r}")
        _apply_mapping(parent, op, step, value, style)
    elif isinstance(parent, MutableSequence):
        _apply_sequence(parent, op, step, value, style)
    else:
        raise PatchError(f"cannot edit inside a {type(parent).__name__}")
    if pending is not None:
        _give_trailing(*pending)


def _apply_mapping(parent: MutableMapping[Any, Any], op: str, key: str, value: Any, style: Style) -> None:
    if op in ("remove", "replace") and key not in parent:
        raise PatchError(f"no field '{key}'")
    if op == "remove":
        keys = list(parent)
        position = keys.index(key)
        trailing = _take_entry_trailing(parent, key) if style.round_trip else None
        del parent[key]
        if trailing and position > 0:
            _give_entry_trailing(parent, keys[position - 1], trailing)
        elif trailing:
            _give_leading(parent, trailing)
        return
    if key in parent:
        parent[key] = _convert(value, parent, style, parent[key])
        return
    follower = KEY_BEFORE.get(key)
    if follower is not None and follower in parent and isinstance(parent, CommentedMap):
        parent.insert(list(parent).index(follower), key, _convert(value, parent, style, None))
        return
    trailing = _take_trailing(parent) if style.round_trip and len(parent) else None
    parent[key] = _convert(value, parent, style, None)
    if trailing:
        _give_trailing(parent, trailing)


def _apply_sequence(parent: MutableSequence[Any], op: str, step: str | int, value: Any, style: Style) -> None:
    if step == APPEND:
        if op != "add":
            raise PatchError("'-' is only valid for add")
        trailing = _take_trailing(parent) if style.round_trip and len(parent) else None
        parent.append(_convert(value, parent, style, None))
        if trailing:
            _give_trailing(parent, trailing)
        return
    if not isinstance(step, int) or isinstance(step, bool):
        raise PatchError(f"a list has no field {step!r}")
    if op == "add":
        if not 0 <= step <= len(parent):
            raise PatchError(f"no item {step} (the list has {len(parent)})")
        if step == len(parent):
            _apply_sequence(parent, op, APPEND, value, style)
        else:
            parent.insert(step, _convert(value, parent, style, None))
        return
    if not 0 <= step < len(parent):
        raise PatchError(f"no item {step} (the list has {len(parent)})")
    if op == "replace":
        parent[step] = _convert(value, parent, style, parent[step])
        return
    trailing = _take_entry_trailing(parent, step) if style.round_trip else None
    del parent[step]
    if trailing and step > 0:
        _give_entry_trailing(parent, step - 1, trailing)
    elif trailing:
        _give_leading(parent, trailing)


def _new_mapping(parent: Any) -> Any:
    if isinstance(parent, CommentedBase):
        made = CommentedMap()
        if parent.fa.flow_style():
            made.fa.set_flow_style()
        else:
            made.fa.set_block_style()
        return made
    return {}


def _convert(value: Any, parent: Any, style: Style, old: Any) -> Any:
    """Make a new value a round-trip node: collections take the parent's flow/block style, strings get quotes
    when YAML 1.1 would read them as something else (or when the value they replace was quoted)."""
    if not style.round_trip:
        return copy.deepcopy(value)  # the edit's value is the rule's: the tree must not share it
    flow = isinstance(parent, CommentedBase) and bool(parent.fa.flow_style())
    if isinstance(value, dict):
        made_map = CommentedMap()
        for k, v in value.items():
            made_map[k] = _convert(v, made_map, style, None)
        made_map.fa.set_flow_style() if flow else made_map.fa.set_block_style()
        return made_map
    if isinstance(value, list | tuple):
        made_seq = CommentedSeq()
        for item in value:
            made_seq.append(_convert(item, made_seq, style, None))
        made_seq.fa.set_flow_style() if flow else made_seq.fa.set_block_style()
        return made_seq
    if isinstance(value, str) and not isinstance(value, DoubleQuotedScalarString | SingleQuotedScalarString):
        if isinstance(old, DoubleQuotedScalarString):
            return DoubleQuotedScalarString(value)
        if isinstance(old, SingleQuotedScalarString):
            return SingleQuotedScalarString(value)
        if style.needs_quotes is not None and style.needs_quotes(value):
            return DoubleQuotedScalarString(value) if style.quote == '"' else SingleQuotedScalarString(value)
    return value


def _last_slot(node: Any) -> tuple[Any, Any] | None:
    """The (collection, key or index) whose comment token holds the comment lines after `node`'s end."""
    found: tuple[Any, Any] | None = None
    while isinstance(node, CommentedMap | CommentedSeq) and len(node):
        if node.fa.flow_style():
            break
        key = next(reversed(node)) if isinstance(node, CommentedMap) else len(node) - 1
        found = (node, key)
        node = node[key]
    return found


def _token_index(container: Any) -> int:
    return 2 if isinstance(container, CommentedMap) else 0


def _take_trailing(node: Any) -> str | None:
    """Detach the full-line comments after the end of `node` (its inline comment stays); return their text."""
    slot = _last_slot(node)
    if slot is None:
        return None
    container, key = slot
    return _split_token(container, key)


def _give_trailing(node: Any, trailing: str) -> None:
    """Attach comment lines after the end of `node` (which now ends with the new entry)."""
    slot = _last_slot(node)
    if slot is None:
        return
    container, key = slot
    index = _token_index(container)
    entry = container.ca.items.setdefault(key, [None, None, None, None])
    while len(entry) <= index:
        entry.append(None)
    token = entry[index]
    if isinstance(token, CommentToken):
        token.value = str(token.value).rstrip("\n") + "\n" + trailing
    else:
        entry[index] = CommentToken("\n" + trailing, CommentMark(0), None)


def _split_token(container: Any, key: Any) -> str | None:
    """Detach the comment lines after entry `key`'s own line (its inline comment stays) and return them."""
    if not isinstance(container, CommentedBase):
        return None
    entry = container.ca.items.get(key)
    index = _token_index(container)
    if not entry or len(entry) <= index or not isinstance(entry[index], CommentToken):
        return None
    token = entry[index]
    value = str(token.value)
    cut = value.find("\n")
    if cut < 0 or cut == len(value) - 1:
        return None
    inline, trailing = value[: cut + 1], value[cut + 1 :]
    if inline.strip():
        token.value = inline
    else:
        entry[index] = None
    return trailing


def _take_entry_trailing(container: Any, key: Any) -> str | None:
    """The comment lines after entry `key` (of a removed entry), from wherever the emitter keeps them."""
    value = container[key]
    if isinstance(value, CommentedMap | CommentedSeq) and len(value) and not value.fa.flow_style():
        return _take_trailing(value)
    return _split_token(container, key)


def _give_entry_trailing(container: Any, key: Any, trailing: str) -> None:
    """Put comment lines after entry `key` (which now precedes where a removed entry was)."""
    value = container[key]
    if isinstance(value, CommentedMap | CommentedSeq) and len(value) and not value.fa.flow_style():
        _give_trailing(value, trailing)
        return
    index = _token_index(container)
    entry = container.ca.items.setdefault(key, [None, None, None, None])
    token = entry[index]
    if isinstance(token, CommentToken):
        token.value = str(token.value).rstrip("\n") + "\n" + trailing
    else:
        entry[index] = CommentToken("\n" + trailing, CommentMark(0), None)


def _give_leading(container: Any, trailing: str) -> None:
    """Comment lines left by removing the first entry: keep them, as written, before the new first entry."""
    if not isinstance(container, CommentedMap | CommentedSeq) or not len(container):
        return
    lines = [line for line in trailing.split("\n") if line.strip()]
    first = next(iter(container)) if isinstance(container, CommentedMap) else 0
    entry = container.ca.items.setdefault(first, [None, None, None, None])
    while len(entry) < 2:
        entry.append(None)
    before = entry[1] if isinstance(entry[1], list) else []
    tokens = [CommentToken(line.strip() + "\n", CommentMark(len(line) - len(line.lstrip()))) for line in lines]
    entry[1] = tokens + before


def _show(path: FieldPath) -> str:
    return "/" + "/".join(str(p) for p in path)
