"""Apply simple edits as text insertions and replacements at node positions, leaving every other byte alone.

Handles what rules mostly ask: set a scalar, add a key to a mapping, append to a list (block or flow). Anything
else (removals, block scalars, anchors, tags) returns None and the caller falls back to the round-trip emitter.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

import yaml

from kubegpu.fix.patch import APPEND, KEY_BEFORE
from kubegpu.fix.yamlio import Indent
from kubegpu.manifests import FieldPath
from kubegpu.manifests.loader import C_SAFE_LOADER

_RESOLVER = yaml.resolver.Resolver()
_STR_TAG = "tag:yaml.org,2002:str"
_RISKY = re.compile(r"(?:^|[\s\[{,])[&*!][^\s]", re.MULTILINE)
_PLAIN_UNSAFE_START = (*"-?:,[]{}#&*!|>'\"%@`", " ")
_LINE_BREAK = re.compile("\r\n|[\r\n\x85\u2028\u2029]")  # what YAML counts as a line break (its marks' lines)


class Unsupported(Exception):
    """The edit is not a simple text change here; use the round-trip emitter instead."""


def usable(body: str) -> bool:
    """Text edits are off for documents with anchors, aliases or tags, whose node positions can mislead."""
    return _RISKY.search(body) is None


def apply_text_edits(body: str, edits: Sequence[tuple[str, FieldPath, Any]], indent: Indent, quote: str) -> str:
    """Apply edits one by one to `body` (LF text ending in a newline); raises Unsupported when one is not simple."""
    for op, path, value in edits:
        body = _apply_one(body, op, path, value, indent, quote)
    return body


class _Text:
    """The body with a line-start table, to turn node (line, column) marks into string offsets."""

    def __init__(self, body: str) -> None:
        self.body = body
        self.starts = [0]
        for match in _LINE_BREAK.finditer(body):
            self.starts.append(match.end())

    def offset(self, mark: yaml.Mark) -> int:
        if mark.line >= len(self.starts):
            raise Unsupported("a mark past the last line")
        return self.starts[mark.line] + mark.column

    def line_end(self, mark: yaml.Mark) -> int:
        """The offset just after the line break that ends the mark's line."""
        found = _LINE_BREAK.search(self.body, self.offset(mark))
        return len(self.body) if found is None else found.end()


def _apply_one(body: str, op: str, path: FieldPath, value: Any, indent: Indent, quote: str) -> str:
    if op not in ("add", "replace") or not path:
        raise Unsupported(op)
    root = yaml.compose(body, Loader=C_SAFE_LOADER)
    if root is None:
        raise Unsupported("empty document")
    text = _Text(body)
    node: yaml.Node = root
    for depth, part in enumerate(path):
        last = depth == len(path) - 1
        if isinstance(node, yaml.MappingNode):
            if not isinstance(part, str) or part == APPEND:
                raise Unsupported("bad step")
            child = _lookup(node, part)
            if child is None:
                if op != "add":
                    raise Unsupported("missing")
                nested: Any = value
                for step in reversed(path[depth + 1 :]):
                    if not isinstance(step, str) or step == APPEND:
                        raise Unsupported("would create a list")
                    nested = {step: nested}
                return _add_to_mapping(text, node, part, nested, indent, quote)
            if last:
                return _replace(text, child, value, quote)
            node = child
        elif isinstance(node, yaml.SequenceNode):
            if last and op == "add" and (part == APPEND or part == len(node.value)):
                return _append_to_sequence(text, node, value, indent, quote)
            if not isinstance(part, int) or isinstance(part, bool) or not 0 <= part < len(node.value):
                raise Unsupported("bad index")
            if last:
                if op != "replace":
                    raise Unsupported("insert in the middle of a list")
                return _replace(text, node.value[part], value, quote)
            node = node.value[part]
        else:
            raise Unsupported("scalar on the path")
    raise Unsupported("empty path")


def _lookup(node: yaml.MappingNode, key: str) -> yaml.Node | None:
    for key_node, value_node in node.value:
        if isinstance(key_node, yaml.ScalarNode) and key_node.value == key:
            found: yaml.Node = value_node
            return found
    return None


def _replace(text: _Text, node: yaml.Node, value: Any, quote: str) -> str:
    if not isinstance(node, yaml.ScalarNode) or isinstance(value, Mapping | list | tuple):
        raise Unsupported("only scalars are replaced as text")
    if node.style in ("|", ">") or node.start_mark.line != node.end_mark.line:
        raise Unsupported("multi-line scalar")
    style_quote = node.style if node.style in ('"', "'") else quote
    rendered = _scalar(value, style_quote, flow=_in_flow(text, node), force_quote=node.style in ('"', "'"))
    start, end = text.offset(node.start_mark), text.offset(node.end_mark)
    return text.body[:start] + rendered + text.body[end:]


def _in_flow(text: _Text, node: yaml.Node) -> bool:
    """Whether a scalar sits inside a flow collection (commas and brackets then need quoting)."""
    line = text.body[text.starts[node.start_mark.line] : text.offset(node.start_mark)]
    return line.count("{") + line.count("[") > line.count("}") + line.count("]")


def _deepest_end(node: yaml.Node) -> yaml.Node:
    """The node whose end is the last text of `node` (block collections recurse into their last entry)."""
    while isinstance(node, yaml.MappingNode | yaml.SequenceNode) and not node.flow_style and node.value:
        last = node.value[-1]
        node = last[1] if isinstance(node, yaml.MappingNode) else last
    if isinstance(node, yaml.ScalarNode) and node.style in ("|", ">"):
        raise Unsupported("block scalar at the end")
    return node


def _add_to_mapping(text: _Text, node: yaml.MappingNode, key: str, value: Any, indent: Indent, quote: str) -> str:
    if node.flow_style or not node.value:
        return _flow_insert(text, node, f"{_key(key, quote)}: {_flow(value, quote)}", "}")
    column = node.value[0][0].start_mark.column
    lines = _block_entry(key, value, column, indent, quote)
    at = _before_key(text, node, KEY_BEFORE.get(key))
    if at is None:
        at = text.line_end(_deepest_end(node).end_mark)
    return text.body[:at] + "".join(line + "\n" for line in lines) + text.body[at:]


def _before_key(text: _Text, node: yaml.MappingNode, follower: str | None) -> int | None:
    """Where to insert a key that conventionally comes before `follower` (above its comment lines), if present."""
    if follower is None:
        return None
    for key_node, _value in node.value:
        if isinstance(key_node, yaml.ScalarNode) and key_node.value == follower:
            line = key_node.start_mark.line
            if text.body[text.starts[line] : text.offset(key_node.start_mark)].strip():
                return None  # the key shares its line with a `- `: append instead
            while line > 0 and text.body[text.starts[line - 1] : text.starts[line]].strip().startswith("#"):
                line -= 1
            return text.starts[line]
    return None


def _append_to_sequence(text: _Text, node: yaml.SequenceNode, value: Any, indent: Indent, quote: str) -> str:
    if node.flow_style or not node.value:
        return _flow_insert(text, node, _flow(value, quote), "]")
    dash = node.start_mark.column
    first = node.value[0]
    gap = first.start_mark.column - dash if first.start_mark.line == node.start_mark.line else 2
    if gap < 2:
        raise Unsupported("odd sequence layout")
    lines = _block_item(value, dash, gap, indent, quote)
    at = text.line_end(_deepest_end(node).end_mark)
    return text.body[:at] + "".join(line + "\n" for line in lines) + text.body[at:]


def _flow_insert(text: _Text, node: yaml.Node, entry: str, closer: str) -> str:
    end = text.offset(node.end_mark)
    if end < 1 or text.body[end - 1] != closer:
        raise Unsupported("not a flow collection")
    inner = text.body[text.offset(node.start_mark) + 1 : end - 1]
    if not inner.strip():
        return text.body[: end - 1] + entry + text.body[end - 1 :]
    close = end - 1
    while text.body[close - 1] in " \t":
        close -= 1
    if text.body[close - 1] == "\n":
        raise Unsupported("multi-line flow collection")
    return text.body[:close] + ", " + entry + text.body[close:]


def _block_entry(key: str, value: Any, column: int, indent: Indent, quote: str) -> list[str]:
    pad = " " * column
    if isinstance(value, Mapping) and value:
        lines = [f"{pad}{_key(key, quote)}:"]
        for k, v in value.items():
            lines += _block_entry(str(k), v, column + indent.mapping, indent, quote)
        return lines
    if isinstance(value, list | tuple) and value:
        lines = [f"{pad}{_key(key, quote)}:"]
        for item in value:
            lines += _block_item(item, column + indent.offset, indent.sequence - indent.offset, indent, quote)
        return lines
    return [f"{pad}{_key(key, quote)}: {_flow(value, quote)}"]


def _block_item(value: Any, dash: int, gap: int, indent: Indent, quote: str) -> list[str]:
    prefix = " " * dash + "-" + " " * (gap - 1)
    if isinstance(value, Mapping) and value:
        lines: list[str] = []
        for n, (k, v) in enumerate(value.items()):
            entry = _block_entry(str(k), v, dash + gap, indent, quote)
            if n == 0:
                entry[0] = prefix + entry[0][dash + gap :]
            lines += entry
        return lines
    if isinstance(value, list | tuple) and value:
        raise Unsupported("a list directly inside a list")
    return [prefix + _flow(value, quote)]


def _key(key: str, quote: str) -> str:
    return _scalar(key, quote, flow=True)


def _flow(value: Any, quote: str) -> str:
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{_key(str(k), quote)}: {_flow(v, quote)}" for k, v in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_flow(v, quote) for v in value) + "]"
    return _scalar(value, quote, flow=True)


def _scalar(value: Any, quote: str, flow: bool, force_quote: bool = False) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    if not isinstance(value, str):
        raise Unsupported(f"cannot write a {type(value).__name__}")
    if not force_quote and _plain_ok(value, flow):
        return value
    if quote == "'" and value.isprintable():
        return "'" + value.replace("'", "''") + "'"
    return json.dumps(value)


def _plain_ok(value: str, flow: bool) -> bool:
    if not value or value != value.strip() or value.startswith(_PLAIN_UNSAFE_START) or not value.isprintable():
        return False
    if ": " in value or " #" in value or value.endswith(":"):
        return False
    if flow and any(c in value for c in ",[]{}"):
        return False
    tag = _RESOLVER.resolve(yaml.ScalarNode, value, (True, False))  # type: ignore[no-untyped-call]
    return bool(tag == _STR_TAG)
