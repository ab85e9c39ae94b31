"""The line of a key in a TOML file, for configuration errors: tomllib gives values, never positions.

Reads table headers (`[rules.dshm-missing]`, `[tool.kubegpu]`) and `key = value` lines with bare, quoted and
dotted keys (TOML 1.0); a key inside an inline table or an array of tables is found at the line of the
nearest enclosing key. Best effort: None when the key is not on a line of its own.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_BARE = re.compile(r"[A-Za-z0-9_-]+")
_BASIC = re.compile(r'"((?:[^"\\]|\\.)*)"')
_LITERAL = re.compile(r"'([^']*)'")


def _key_path(text: str) -> tuple[tuple[str, ...], str] | None:
    """A dotted key at the start of `text` and what follows it; None when `text` does not start with a key."""
    parts: list[str] = []
    rest = text.lstrip()
    while True:
        for pattern in (_BARE, _BASIC, _LITERAL):
            match = pattern.match(rest)
            if match:
                parts.append(match.group(1) if pattern is not _BARE else match.group(0))
                rest = rest[match.end() :].lstrip()
                break
        else:
            return None
        if not rest.startswith("."):
            return tuple(parts), rest
        rest = rest[1:].lstrip()


def key_line(text: str, path: Sequence[str]) -> int | None:
    """The 1-based line where the key at `path` (table names, then the key) is set, or of the nearest key or
    table header above it in the file's structure; None when no line names any part of it."""
    target = tuple(path)
    best: tuple[int, int] | None = None  # (how many parts matched, line)
    table: tuple[str, ...] = ()
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("["):
            header = line[2:] if line.startswith("[[") else line[1:]
            parsed = _key_path(header)
            if parsed is None or not parsed[1].startswith("]"):
                continue
            table = parsed[0]
            full = table
        else:
            parsed = _key_path(line)
            if parsed is None or not parsed[1].startswith("="):
                continue
            full = (*table, *parsed[0])
        if full == target:
            return number
        if target[: len(full)] == full and (best is None or len(full) > best[0]):
            best = (len(full), number)
    return None if best is None else best[1]
