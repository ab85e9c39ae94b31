"""What a generator returns (documents with comments, text files) and how it becomes YAML on disk.

Generators build plain dicts and attach a comment to the keys whose value was a choice, so the
emitted YAML explains itself; writing is atomic (temp file in the target folder, then rename).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from kubegpu.errors import InputError
from kubegpu.manifests.atomic import write_atomic

FieldPath = tuple[str | int, ...]
_INDENT = 2


@dataclass(frozen=True)
class Note:
    """A comment placed on the line(s) above the key or list item at `path`."""

    path: FieldPath
    text: str


@dataclass(frozen=True)
class YamlDoc:
    """One YAML document: the object, comment lines above it, and comments above chosen keys."""

    obj: Any  # a mapping (an object) or, for JSON6902 patch files, a list of operations
    header: tuple[str, ...] = ()
    notes: tuple[Note, ...] = ()

    @property
    def kind(self) -> str:
        return str(self.obj.get("kind", "")) if isinstance(self.obj, Mapping) else ""

    @property
    def api_version(self) -> str:
        return str(self.obj.get("apiVersion", "")) if isinstance(self.obj, Mapping) else ""


@dataclass(frozen=True)
class OutFile:
    """One output file: YAML documents, or rendered text (TOML), with comment lines on top."""

    name: str
    documents: tuple[YamlDoc, ...] = ()
    text: str | None = None
    header: tuple[str, ...] = ()

    def render(self) -> str:
        head = "".join(f"# {line}\n" if line else "#\n" for line in self.header)
        if self.text is not None:
            return head + self.text
        return head + render_documents(self.documents)


@dataclass(frozen=True)
class Generated:
    """Everything one `kubegpu gen` command produces: one or more files."""

    files: tuple[OutFile, ...] = field(default_factory=tuple)
    # workloads as they will be once the generated patches are applied (kustomize bundles)
    patched: tuple[Mapping[str, Any], ...] = ()

    @property
    def documents(self) -> tuple[YamlDoc, ...]:
        return tuple(doc for f in self.files for doc in f.documents)

    def objects(self) -> list[Mapping[str, Any]]:
        """The Kubernetes objects (patch operation lists left out)."""
        return [doc.obj for doc in self.documents if isinstance(doc.obj, Mapping)]

    def render(self) -> str:
        """All files as one text: a single file as is, several separated by a `# ==> name` line."""
        if len(self.files) == 1:
            return self.files[0].render()
        parts: list[str] = []
        for f in self.files:
            body = f.render()
            sep = "---\n" if f.text is None and parts else ""
            parts.append(f"{sep}# ==> {f.name} <==\n{body}")
        return "".join(parts)


def single(name: str, docs: Iterable[YamlDoc], header: Sequence[str] = ()) -> Generated:
    return Generated((OutFile(name, tuple(docs), header=tuple(header)),))


# --------------------------------------------------------------------------- YAML emitting


def render_documents(docs: Sequence[YamlDoc]) -> str:
    """Multi-document YAML with each document's header and key comments."""
    chunks = []
    for doc in docs:
        notes = {note.path: note.text for note in doc.notes}
        lines = [_comment(line, 0) for line in doc.header]
        if isinstance(doc.obj, Mapping):
            lines.extend(_emit_mapping(doc.obj, 0, (), notes))
        else:
            lines.extend(_emit_sequence(doc.obj, 0, (), notes))
        chunks.append("\n".join(lines) + "\n")
    return "---\n".join(chunks)


def _comment(text: str, indent: int) -> str:
    pad = " " * indent
    return f"{pad}# {text}" if text else f"{pad}#"


def _comments(notes: Mapping[FieldPath, str], path: FieldPath, indent: int) -> list[str]:
    text = notes.get(path)
    if not text:
        return []
    return [_comment(line, indent) for line in text.splitlines()]


def _emit_mapping(obj: Mapping[str, Any], indent: int, path: FieldPath, notes: Mapping[FieldPath, str]) -> list[str]:
    lines: list[str] = []
    pad = " " * indent
    for key, value in obj.items():
        child = (*path, key)
        lines.extend(_comments(notes, child, indent))
        head = f"{pad}{_scalar(key)}:"
        lines.extend(_emit_value(head, value, indent, child, notes))
    return lines


def _emit_value(head: str, value: Any, indent: int, path: FieldPath, notes: Mapping[FieldPath, str]) -> list[str]:
    if isinstance(value, Mapping):
        if not value:
            return [f"{head} {{}}"]
        return [head, *_emit_mapping(value, indent + _INDENT, path, notes)]
    if isinstance(value, list | tuple):
        if not value:
            return [f"{head} []"]
        return [head, *_emit_sequence(value, indent + _INDENT, path, notes)]
    if isinstance(value, str) and _literal_ok(value):
        return [f"{head} |-" if not value.endswith("\n") else f"{head} |", *_block(value, indent)]
    return [f"{head} {_scalar(value)}"]


def _literal_ok(value: str) -> bool:
    """Whether a literal block scalar (`|`) reproduces `value` exactly."""
    body = value[:-1] if value.endswith("\n") else value
    if "\n" not in body or not body or body[0].isspace() or body.endswith("\n"):
        return False
    lines = body.split("\n")
    return all(line == line.rstrip() and all(ch.isprintable() for ch in line) for line in lines) and not any(
        line == "" for line in lines[-1:]
    )


def _block(text: str, indent: int) -> list[str]:
    pad = " " * (indent + _INDENT)
    return [f"{pad}{line}" if line else "" for line in text.rstrip("\n").split("\n")]


def _emit_sequence(items: Sequence[Any], indent: int, path: FieldPath, notes: Mapping[FieldPath, str]) -> list[str]:
    lines: list[str] = []
    pad = " " * indent
    for i, item in enumerate(items):
        child = (*path, i)
        lines.extend(_comments(notes, child, indent))
        if isinstance(item, Mapping) and item:
            body = _emit_mapping(item, indent + _INDENT, child, notes)
            # the first key of the item shares the "- " line, unless a comment sits above it
            first = next(i for i, line in enumerate(body) if not line.lstrip().startswith("#"))
            lines.extend(f"{pad}{line.lstrip()}" for line in body[:first])
            lines.append(f"{pad}- {body[first].lstrip()}")
            lines.extend(body[first + 1 :])
        elif isinstance(item, list | tuple) and item:
            body = _emit_sequence(item, indent + _INDENT, child, notes)
            lines.append(f"{pad}- {body[0].lstrip()}")
            lines.extend(body[1:])
        else:
            lines.extend(_emit_value(f"{pad}-", item, indent, child, notes))
    return lines


def _scalar(value: Any) -> str:
    """One scalar as YAML 1.1 (what the API server reads): quoted when it would change type."""
    if isinstance(value, Mapping):
        return "{}"
    if isinstance(value, list | tuple):
        return "[]"
    if isinstance(value, str) and not all(ch.isprintable() and ch != "\x85" for ch in value):
        return _double_quoted(value)
    text = yaml.safe_dump(value, default_flow_style=True, width=10**9, allow_unicode=True)
    text = text.rstrip("\n")
    if text.endswith("\n..."):  # the end-of-document marker after a plain root scalar
        text = text[: -len("\n...")]
    return text


def _double_quoted(value: str) -> str:
    """A YAML double-quoted scalar with every non-printable character escaped."""
    out = []
    for ch in value:
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ch.isprintable() and ch != "\x85":
            out.append(ch)
        elif ord(ch) < 0x10000:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    return '"' + "".join(out) + '"'


# --------------------------------------------------------------------------- writing


def write_generated(result: Generated, target: Path) -> list[Path]:
    """Write one file to `target`, or several files under the folder `target`; return the paths."""
    if len(result.files) == 1 and not target.is_dir():
        write_atomic(target, result.files[0].render())
        return [target]
    if target.exists() and not target.is_dir():
        raise InputError(
            f"this command writes {len(result.files)} files: -o must name a folder",
            file=str(target),
        )
    written = []
    for f in result.files:
        path = target / f.name.lstrip("/")
        write_atomic(path, f.render())
        written.append(path)
    return written
