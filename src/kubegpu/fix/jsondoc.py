"""Write a JSON manifest back as JSON after edits, with its own indentation, key order and escaping.

Lines that only differ in spacing from the original are taken back, so a hand-formatted file keeps its layout.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from kubegpu.fix.yamlio import restore_spacing


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
    """Serialise `data` in `style`; keep original lines where only spacing would differ, if that is still equal."""
    out = json.dumps(data, indent=style.indent, separators=style.separators, ensure_ascii=style.ensure_ascii)
    body = original.replace("\r\n", "\n").rstrip("\n")
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
