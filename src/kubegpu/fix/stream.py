"""Split a YAML stream into per-document chunks at `---` lines, so untouched documents stay byte for byte.

A chunk runs from its `---` line (or the start of the file) up to the next one; YAML forbids `---` at column 0
inside content, so a line scan finds every boundary.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_SEPARATOR = re.compile(r"^---(?=[ \t]|\r?$)")
_SEPARATOR_ONLY = re.compile(r"^---[ \t]*(#.*)?\r?\n?$")
_DOCUMENT_END = re.compile(r"^\.\.\.[ \t]*(#.*)?\r?$")


@dataclass(frozen=True)
class Chunk:
    """One document's share of a stream: its 1-based first line, the line after it, and its text."""

    first_line: int
    end_line: int
    text: str


@dataclass(frozen=True)
class ChunkParts:
    """A chunk cut into what the round-trip parser sees (`body`) and what is kept verbatim around it.

    `head` is the `---` line; `tail` is trailing blank lines, or a `...` line and what follows it.
    `crlf` says the body used CRLF line endings, `cr` old Mac CR-only ones (either converted to LF for the parser).
    """

    head: str
    body: str
    tail: str
    crlf: bool
    final_newline: bool
    cr: bool = False

    def join(self, body: str) -> str:
        """Put a re-emitted body (LF, ending in a newline) back between the verbatim parts."""
        if not self.final_newline and body.endswith("\n"):
            body = body[:-1]
        if self.crlf:
            body = body.replace("\n", "\r\n")
        elif self.cr:
            body = body.replace("\n", "\r")
        return self.head + body + self.tail


def split_stream(text: str) -> list[Chunk]:
    """The chunks of `text` in order; joining their texts gives `text` back exactly."""
    lines = text.splitlines(keepends=True)
    starts = [0] + [i for i, line in enumerate(lines) if i > 0 and _SEPARATOR.match(line)]
    chunks = []
    for n, start in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else len(lines)
        chunks.append(Chunk(start + 1, end + 1, "".join(lines[start:end])))
    return chunks


def chunk_of_line(chunks: list[Chunk], line: int) -> int:
    """The index of the chunk that holds 1-based `line` (the last chunk for lines past the end)."""
    for index, chunk in enumerate(chunks):
        if chunk.first_line <= line < chunk.end_line:
            return index
    return len(chunks) - 1


def cut_chunk(text: str) -> ChunkParts | None:
    """Cut a chunk into head, body and tail; None when the document starts on its `---` line (`--- {a: 1}`)."""
    lines = text.splitlines(keepends=True)
    head = ""
    if lines and _SEPARATOR.match(lines[0]):
        if not _SEPARATOR_ONLY.match(lines[0]):
            return None
        head, lines = lines[0], lines[1:]
    tail_lines: list[str] = []
    for i, line in enumerate(lines):
        if _DOCUMENT_END.match(line):
            tail_lines = lines[i:]
            lines = lines[:i]
            break
    while lines and not lines[-1].strip():
        tail_lines.insert(0, lines.pop())
    body = "".join(lines)
    crlf = "\r\n" in body
    cr = not crlf and "\r" in body and "\n" not in body
    final_newline = body.endswith("\r" if cr else "\n")
    if crlf:
        body = body.replace("\r\n", "\n")
    elif cr:
        body = body.replace("\r", "\n")
    if lines and not final_newline:
        body += "\n"
    return ChunkParts(head, body, "".join(tail_lines), crlf, final_newline, cr)
