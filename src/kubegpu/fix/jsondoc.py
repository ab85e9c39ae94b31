"""Write a JSON manifest back as JSON after edits, with its own indentation, key order and escaping.

Lines that only differ in spacing from the original are taken back, so a hand-formatted file keeps its layout.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import yaml

from kubegpu.fix.yamlio import restore_spacing
from kubegpu.manifests.loader import C_SAFE_LOADER


@dataclass(frozen=True)
class JsonStyle:
    """How a JSON file is laid out: indent (None for one line), separators, escaping, final newline."""

    indent: int | str | None
    separators: tuple[str, str]
    ensure_ascii: bool
    final_newline: bool
    crlf: bool


def detect_json_style(text: str) -> JsonStyle:
    """Read the layout of a JSON text from its first indented line and its separators."""
    indent: int | str | None = None
    for line in text.splitlines()[1:]:
        stripped = line.lstrip(" \t")
        if stripped and len(stripped) < len(line):
            lead = line[: len(line) - len(stripped)]
            indent = "\t" if lead.startswith("\t") else len(lead)
            break
    if indent is None and "\n" in text.strip():
        indent = 0
    item_sep = "," if indent is not None or not re.search(r",\s", text) else ", "
    key_sep = ": " if re.search(r"\":\s", text) else ":"
    return JsonStyle(indent, (item_sep, key_sep), text.isascii(), text.endswith("\n"), "\r\n" in text)


def parse_json(text: str) -> Any:
    """Parse strictly as JSON (key order kept); raises ValueError when the text is YAML, not JSON."""
    return json.loads(text)


def dump_json(data: Any, original: str, style: JsonStyle) -> str:
    """Serialise `data` in `style`: objects and arrays the original wrote on one line stay on one line (new ones
    follow their siblings); then original lines that only differ in spacing are taken back if still equal."""
    body = original.replace("\r\n", "\n").rstrip("\n")
    if style.indent is None:
        out = json.dumps(data, separators=style.separators, ensure_ascii=style.ensure_ascii)
    else:
        unit = style.indent if isinstance(style.indent, str) else " " * style.indent
        out = _Writer(_inline_paths(body), unit, style.ensure_ascii).write(data, (), 0, False)
    restored = restore_spacing(body, out)
    try:
        if json.loads(restored) == data:
            out = restored
    except ValueError:
        pass
    if style.final_newline:
        out += "\n"
    if style.crlf:
        out = out.replace("\n", "\r\n")
    return out


Path = tuple[str | int, ...]


def _inline_paths(text: str) -> dict[Path, bool]:
    """For every object and array of the original: True when it was written on one line."""
    out: dict[Path, bool] = {}
    try:
        root = yaml.compose(text, Loader=C_SAFE_LOADER)
    except yaml.YAMLError:
        return out

    def walk(node: yaml.Node, path: Path) -> None:
        if isinstance(node, yaml.MappingNode | yaml.SequenceNode):
            out[path] = node.start_mark.line == node.end_mark.line
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                walk(value, (*path, str(key.value)))
        elif isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value):
                walk(item, (*path, i))

    if root is not None:
        walk(root, ())
    return out


class _Writer:
    """Writes JSON with one indent unit per level, keeping each container's one-line or multi-line layout."""

    def __init__(self, inline: dict[Path, bool], unit: str, ensure_ascii: bool) -> None:
        self.inline = inline
        self.unit = unit
        self.ensure_ascii = ensure_ascii

    def _is_inline(self, value: Any, path: Path, parent: Any, parent_path: Path, parent_inline: bool) -> bool:
        if parent_inline:
            return True
        if path in self.inline:
            return self.inline[path]
        siblings = [
            self.inline[(*parent_path, key)]
            for key in (parent.keys() if isinstance(parent, dict) else range(len(parent)))
            if (*parent_path, key) in self.inline and (*parent_path, key) != path
        ]
        return bool(siblings) and all(siblings)

    def write(self, value: Any, path: Path, level: int, inline: bool) -> str:
        if isinstance(value, dict):
            items = [(json.dumps(str(k), ensure_ascii=self.ensure_ascii), (*path, str(k)), v) for k, v in value.items()]
            return self._container(
                value, path, level, inline, "{", "}", [(f"{key}: ", child_path, v) for key, child_path, v in items]
            )
        if isinstance(value, list):
            return self._container(
                value, path, level, inline, "[", "]", [("", (*path, i), v) for i, v in enumerate(value)]
            )
        return json.dumps(value, ensure_ascii=self.ensure_ascii)

    def _container(
        self,
        value: Any,
        path: Path,
        level: int,
        inline: bool,
        opener: str,
        closer: str,
        items: list[tuple[str, Path, Any]],
    ) -> str:
        if not items:
            return opener + closer
        parts = []
        for prefix, child_path, child in items:
            child_inline = inline or (
                isinstance(child, dict | list) and self._is_inline(child, child_path, value, path, inline)
            )
            parts.append(prefix + self.write(child, child_path, level + 1, child_inline))
        if inline:
            return opener + ", ".join(parts) + closer
        pad = self.unit * (level + 1)
        return opener + "\n" + ",\n".join(pad + part for part in parts) + "\n" + self.unit * level + closer
