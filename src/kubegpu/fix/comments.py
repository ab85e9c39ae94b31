"""Comments on the lines a fix rewrites: a trailing comment there described the old value, so it goes.

Policy: when an edit changes an existing line (a replaced value, an entry added to or removed from a one-line flow
collection), the `# comment` at the end of that line is removed; every other comment (full-line, head, and
trailing comments on lines the fix does not change) is kept byte for byte. The engine reports what it removed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from kubegpu.manifests import FieldPath
from kubegpu.manifests.document import child_node
from kubegpu.manifests.loader import C_SAFE_LOADER

_LINE_BREAK = re.compile("\r\n|[\r\n\x85\u2028\u2029]")
_TRAILING = re.compile(r"[ \t]+(#[^\r\n\x85\u2028\u2029]*)")


@dataclass(frozen=True)
class DroppedComment:
    """A trailing comment removed from a line a fix rewrote: which planned fix (`owner`), its original line in the
    document (0-based) and its text (`# ...`, trailing blanks stripped)."""

    owner: int
    line: int
    text: str


class _Lines:
    """A text's line starts and, per line, where its last YAML token ends (a `#` after that starts a comment)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0] + [m.end() for m in _LINE_BREAK.finditer(text)]
        self.root = yaml.compose(text, Loader=C_SAFE_LOADER)
        self.token_end: dict[int, int] = {}
        for token in yaml.scan(text, Loader=C_SAFE_LOADER):
            mark = token.end_mark
            if token.start_mark.line == mark.line and token.start_mark.column == mark.column:
                continue  # zero-width tokens (block starts and ends, keys) hold no text
            if mark.line < len(self.starts):
                end = self.starts[mark.line] + mark.column
                self.token_end[mark.line] = max(self.token_end.get(mark.line, 0), end)

    def line(self, number: int) -> str:
        start = self.starts[number]
        found = _LINE_BREAK.search(self.text, start)
        return self.text[start : len(self.text) if found is None else found.start()]

    def comment(self, number: int) -> tuple[int, int, str] | None:
        """The trailing comment of a line that holds YAML content: (start, end, `# text`), or None."""
        end = self.token_end.get(number)
        if end is None or number >= len(self.starts):
            return None
        line_end = self.starts[number] + len(self.line(number))
        found = _TRAILING.match(self.text, end, line_end)
        if found is None or found.end() != line_end:
            return None
        return found.start(), line_end, found.group(1).rstrip()


def _walk(root: yaml.Node | None, path: FieldPath) -> list[tuple[yaml.Mark | None, yaml.Node]]:
    """Along `path` from the root, as far as it exists: where each mapping key starts (None for a list item)
    and the node it leads to (positions are read by `child_node`, as lint's are)."""
    out: list[tuple[yaml.Mark | None, yaml.Node]] = []
    node = root
    for step in path:
        found = None if node is None else child_node(node, step)
        if found is None:
            break
        node, mark = found
        out.append((mark if isinstance(step, str) else None, node))
    return out


def _changed_lines(lines: _Lines, op: str, path: FieldPath) -> list[int]:
    """The lines of `lines` (the text before or after the edit) that the edit rewrites in place, found by the
    edit's path: a replaced scalar or flow value with its key, or the one-line flow collection an entry is added
    to or removed from. Lines an edit only adds or deletes whole are not listed."""
    if op == "replace":
        steps = _walk(lines.root, path)
        if len(steps) != len(path) or not steps:
            return []
        key, node = steps[-1]
        found = {node.start_mark.line} if isinstance(node, yaml.ScalarNode) or _flow(node) else set()
        if key is not None:
            found.add(key.line)
        return sorted(found)
    prefix = path[:-1]
    steps = _walk(lines.root, prefix)
    if op == "add":
        # The deepest existing ancestor receives the new entry (or the chain of new keys leading to it).
        parent = steps[-1][1] if steps else lines.root
        return [parent.end_mark.line] if parent is not None and _flow(parent) and _one_line(parent) else []
    if op == "remove" and len(steps) == len(prefix):
        parent = steps[-1][1] if steps else lines.root
        return [parent.start_mark.line] if parent is not None and _flow(parent) and _one_line(parent) else []
    return []


def _flow(node: yaml.Node) -> bool:
    return isinstance(node, yaml.MappingNode | yaml.SequenceNode) and bool(node.flow_style)


def _one_line(node: yaml.Node) -> bool:
    return bool(node.start_mark.line == node.end_mark.line)


def drop_stale_comments(
    original: str, fixed: str, edits: Sequence[tuple[int, str, FieldPath, Any]]
) -> tuple[str, list[DroppedComment]]:
    """Remove from `fixed` the trailing comment of every line an edit rewrote, when the same comment ended the
    corresponding line of `original` and the line's content changed. `edits` are (owner, op, path, value) in the
    order applied; returns the new text and what was removed (at most one entry per line)."""
    if "#" not in original:
        return fixed, []
    try:
        before = _Lines(original)
        after = _Lines(fixed)
    except yaml.YAMLError:
        return fixed, []
    cuts: dict[int, tuple[int, int]] = {}
    dropped: list[DroppedComment] = []
    for owner, op, path, _value in edits:
        old_lines = _changed_lines(before, op, path)
        new_lines = _changed_lines(after, op, path)
        for old, new in zip(old_lines, new_lines, strict=False):
            if new in cuts:
                continue
            was = before.comment(old)
            now = after.comment(new)
            if was is None or now is None or was[2] != now[2] or before.line(old) == after.line(new):
                continue
            cuts[new] = (now[0], now[1])
            dropped.append(DroppedComment(owner, old, was[2]))
    if not cuts:
        return fixed, []
    text = fixed
    for start, end in sorted(cuts.values(), reverse=True):
        text = text[:start] + text[end:]
    return text, dropped
