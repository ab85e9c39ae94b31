"""Point a field of a rendered object back at the file a person edits: a Helm template or a kustomize file.

Helm: `# Source:` comments name the template; the field's line is the template line with the same key
under the same parents, else the object's first line in the template. Kustomize: the origin annotation
names the resource file and the transformer annotation the kustomizations that patched it; a field set
by a patch points into the patch, any other into the resource. The rendered text is the repository's to write,
so a file it names is read only when it is a regular file in the chart or the kustomization's lint root.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from kubegpu.manifests.document import Document, FieldPath, Location, get_path
from kubegpu.manifests.loader import C_SAFE_LOADER, load_text
from kubegpu.manifests.regular_file import read_regular
from kubegpu.manifests.roots import Root
from kubegpu.manifests.sources import DEFAULT_MAX_BYTES
from kubegpu.manifests.unread import strip_unread

ORIGIN_ANNOTATION = "config.kubernetes.io/origin"
TRANSFORMATIONS_ANNOTATION = "alpha.config.kubernetes.io/transformations"
_SOURCE = re.compile(r"^# Source: (\S.*)$", re.MULTILINE)
_KEY = re.compile(r"^(\s*)(?:-\s+)?([\"']?)([^\s\"':#{][^:#]*?)\2\s*:(?:\s|$)")


def display(path: Path) -> str:
    """A path as findings show it: relative to the working directory when under it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


@dataclass
class HelmOrigins:
    """Where each object of `helm template` output came from: chart folder and the `# Source:` lines."""

    chart: Path
    text: str
    _sources: list[tuple[int, str]] = field(default_factory=list)
    _lines: dict[Path, list[str]] = field(default_factory=dict)
    _root: Root | None = None

    def __post_init__(self) -> None:
        self._sources = [
            (self.text.count("\n", 0, m.start()) + 1, m.group(1).strip()) for m in _SOURCE.finditer(self.text)
        ]
        self._root = Root.of(self.chart)

    def template_of(self, doc: Document) -> Path | None:
        found = None
        for line, source in self._sources:
            if line > doc.start_line:
                break
            found = source
        if found is None:
            return None
        # "<chart name>/templates/x.yaml" or "<chart>/charts/<sub>/templates/x.yaml": drop the chart name
        _name, _, inside = found.partition("/")
        template = self.chart / inside
        return template if _inside(template, self._root) else None

    def locate(self, doc: Document, path: FieldPath) -> Location | None:
        template = self.template_of(doc)
        if template is None:
            return None
        lines = self._template_lines(template)
        object_index = (
            sum(
                1
                for other_line, source in self._sources
                if other_line < doc.start_line and self.chart / source.partition("/")[2] == template
            )
            - 1
        )
        line = _template_line(lines, doc.data, path, max(object_index, 0))
        return Location(display(template), line, 1, path)

    def _template_lines(self, template: Path) -> list[str]:
        if template not in self._lines:
            self._lines[template] = _read(template).splitlines()
        return self._lines[template]


def _inside(path: Path, root: Root | None) -> bool:
    """`path` (links resolved) is in `root`, outside its hidden and tool folders."""
    return root is not None and root.where(Path(os.path.realpath(path))) is None


def _read(path: Path) -> str:
    """The text of a regular file (at most the default size limit), or nothing."""
    try:
        return read_regular(path, DEFAULT_MAX_BYTES).decode(errors="replace")
    except OSError:
        return ""


def _template_line(lines: Sequence[str], data: Any, path: FieldPath, object_index: int) -> int:
    """The template line of the field at `path`: the key, found under its parent keys; else the object's first."""
    keys = [part for part in path if isinstance(part, str)]
    starts = [i for i, text in enumerate(lines) if re.match(r"^\s*kind\s*:", text)] or [0]
    start = starts[min(object_index, len(starts) - 1)]
    # the object's own block: from its kind line's document start to the next object in the template
    begin = max((i for i in range(start, -1, -1) if lines[i].startswith("---")), default=0) if lines else 0
    following = [s for s in starts if s > start]
    end = len(lines) if not following else following[0]
    for depth in range(len(keys), 0, -1):
        wanted = keys[:depth]
        best = _find_key_chain(lines, begin, end, wanted)
        if best is not None:
            if depth == len(keys) and path and isinstance(path[-1], int):
                return _list_item(lines, best, end, path[-1]) + 1
            return best + 1
    first = next(
        (
            i
            for i in range(begin, end)
            if lines[i].strip() and not lines[i].lstrip().startswith(("{{", "#")) and not lines[i].startswith("---")
        ),
        begin,
    )
    return first + 1


def _list_item(lines: Sequence[str], key_line: int, end: int, index: int) -> int:
    """The line of item `index` of the block list under `key_line` (the key's line when it cannot be told)."""
    found = _key_at(lines[key_line])
    indent = found[1] if found else 0
    items = []
    dash_indent: int | None = None
    for i in range(key_line + 1, end):
        text = lines[i]
        stripped = text.strip()
        if not stripped or stripped.startswith(("{{", "#")):
            continue
        level = len(text) - len(text.lstrip(" "))
        if level <= indent and not (level == indent and stripped.startswith("-")):
            break
        if stripped.startswith("-") and (dash_indent is None or level == dash_indent):
            dash_indent = level
            items.append(i)
    return items[index] if index < len(items) else key_line


def _find_key_chain(lines: Sequence[str], begin: int, end: int, keys: Sequence[str]) -> int | None:
    """The first line in [begin, end) whose key is keys[-1], enclosed by keys[:-1] in that order."""
    for index in range(begin, end):
        match = _KEY.match(lines[index])
        if not match or match.group(3).strip() != keys[-1]:
            continue
        remaining = iter(_parent_keys(lines, begin, index))
        if all(key in remaining for key in keys[:-1]):
            return index
    return None


def _key_at(text: str) -> tuple[int, int, str] | None:
    """(line indent, key indent, key) of a `key:` or `- key:` line."""
    match = _KEY.match(text)
    if not match:
        return None
    level = len(match.group(1))
    dash = text[level:].startswith("-")
    return level, (len(text) - len(text[level + 1 :].lstrip(" ")) if dash else level), match.group(3).strip()


def _parent_keys(lines: Sequence[str], begin: int, index: int) -> list[str]:
    """Keys of the lines enclosing line `index` (less indented, above it), outermost first."""
    found = _key_at(lines[index])
    indent = found[1] if found else 0
    out: list[str] = []
    for i in range(index - 1, begin - 1, -1):
        text = lines[i]
        stripped = text.strip()
        if not stripped or stripped.startswith(("{{", "#")):
            continue
        here = _key_at(text)
        level = len(text) - len(text.lstrip(" "))
        if here is not None and here[1] < indent:
            out.append(here[2])
            indent = here[0]
        elif level < indent:
            indent = level  # a list item's dash, or a line the pattern does not read
        if indent == 0 and here is not None and here[1] == 0:
            break
    return out[::-1]


@dataclass(frozen=True)
class _Piece:
    """One file an object is made of: its path and the document in it."""

    file: Path
    doc: Document


@dataclass
class KustomizeOrigins:
    """Where each object of a kustomize build came from, read from its origin and transformer annotations."""

    workdir: Path
    root: Root | None = None  # the kustomization's lint root: no file outside it is read
    # (apiVersion, kind) -> no rule reads such objects: their bodies are cut from the files read (a reports-only run)
    unread: Callable[[str, str], bool] | None = None
    _loaded: dict[Path, list[Document]] = field(default_factory=dict)
    _patches: dict[Path, list[Path]] = field(default_factory=dict)
    _pieces: dict[int, list[_Piece]] = field(default_factory=dict)

    def origin_file(self, doc: Document) -> Path | None:
        annotation = _annotations(doc).get(ORIGIN_ANNOTATION)
        if not isinstance(annotation, str):
            return None
        origin = _yaml_mapping(annotation)
        path = origin.get("path")
        if not isinstance(path, str) or origin.get("repo"):
            return None
        found = (self.workdir / path).resolve()
        return found if _inside(found, self.root) else None

    def pieces(self, doc: Document) -> list[_Piece]:
        """The patches that touched `doc` (last applied first), then its resource document."""
        key = id(doc)
        if key not in self._pieces:
            self._pieces[key] = self._find_pieces(doc)
        return self._pieces[key]

    def _find_pieces(self, doc: Document) -> list[_Piece]:
        origin = self.origin_file(doc)
        if origin is None:
            return []
        resource = _matching(self._documents(origin), doc, None)
        if resource is None:
            return []
        pieces = [_Piece(origin, resource)]
        name = str(resource.metadata.get("name", "")) if isinstance(resource.metadata, Mapping) else ""
        for kustomization in self._configured_in(doc):
            for patch_file in self._patch_files(kustomization):
                patch = _matching(self._documents(patch_file), doc, name)
                if patch is not None:
                    pieces.insert(0, _Piece(patch_file, patch))
        return pieces

    def locate(self, doc: Document, path: FieldPath) -> Location | None:
        pieces = self.pieces(doc)
        if not pieces:
            return None
        best: tuple[int, _Piece, FieldPath] | None = None
        for piece in pieces:
            translated = translate_path(doc.data, path, piece.doc.data)
            if best is None or len(translated) > best[0]:
                best = (len(translated), piece, translated)
            if len(translated) == len(path):
                break
        assert best is not None
        _length, piece, translated = best
        where = piece.doc.location(translated)
        return Location(display(piece.file), where.line, where.column, path)

    def _configured_in(self, doc: Document) -> list[Path]:
        annotation = _annotations(doc).get(TRANSFORMATIONS_ANNOTATION)
        if not isinstance(annotation, str):
            return []
        try:
            entries = yaml.load(annotation, Loader=C_SAFE_LOADER)
        except yaml.YAMLError:
            return []
        out: list[Path] = []
        for entry in entries if isinstance(entries, list) else []:
            configured = entry.get("configuredIn") if isinstance(entry, Mapping) else None
            by = entry.get("configuredBy") if isinstance(entry, Mapping) else None
            if isinstance(configured, str) and isinstance(by, Mapping) and by.get("kind") == "PatchTransformer":
                path = (self.workdir / configured).resolve()
                if path not in out and _inside(path, self.root):
                    out.append(path)
        return out

    def _patch_files(self, kustomization: Path) -> list[Path]:
        if kustomization not in self._patches:
            files: list[Path] = []
            data = _yaml_mapping_file(kustomization)
            for entry in data.get("patches") or []:
                if isinstance(entry, Mapping) and isinstance(entry.get("path"), str):
                    files.append(kustomization.parent / entry["path"])
            for entry in data.get("patchesStrategicMerge") or []:
                if isinstance(entry, str) and "\n" not in entry:
                    files.append(kustomization.parent / entry)
            self._patches[kustomization] = [file for file in files if _inside(file, self.root)]
        return self._patches[kustomization]

    def _documents(self, file: Path) -> list[Document]:
        if file not in self._loaded:
            text = _read(file) if _inside(file, self.root) else ""
            if text and self.unread is not None:
                text = strip_unread(text, self.unread)[0]
            self._loaded[file] = load_text(str(file), text).documents if text else []
        return self._loaded[file]

    def files(self, docs: Sequence[Document]) -> set[str]:
        """The files these objects came from (resources and patches), as findings name them."""
        return {display(piece.file) for doc in docs for piece in self.pieces(doc)}


def _annotations(doc: Document) -> Mapping[str, Any]:
    metadata = doc.metadata if isinstance(doc.metadata, Mapping) else {}
    annotations = metadata.get("annotations")
    return annotations if isinstance(annotations, Mapping) else {}


def _yaml_mapping(text: str) -> Mapping[str, Any]:
    try:
        value = yaml.load(text, Loader=C_SAFE_LOADER)
    except yaml.YAMLError:
        return {}
    return value if isinstance(value, Mapping) else {}


def _yaml_mapping_file(path: Path) -> Mapping[str, Any]:
    return _yaml_mapping(_read(path))


def _matching(candidates: Sequence[Document], rendered: Document, name: str | None) -> Document | None:
    """The document among `candidates` that the rendered object came from: same kind, and its name."""
    same_kind = [d for d in candidates if d.kind == rendered.kind]
    rendered_name = str(rendered.metadata.get("name", "")) if isinstance(rendered.metadata, Mapping) else ""
    for doc in same_kind:
        own = str(doc.metadata.get("name", "")) if isinstance(doc.metadata, Mapping) else ""
        if (name is not None and own == name) or (name is None and own and own in rendered_name):
            return doc
    if name is None and len(same_kind) == 1:
        return same_kind[0]
    return None


def translate_path(rendered: Any, path: FieldPath, target: Any) -> FieldPath:
    """The longest prefix of `path` that exists in `target`, list items matched by their `name` when they have one.

    Strategic-merge patches and kustomize resources list containers, volumes and env by name, in any order.
    """
    out: list[str | int] = []
    here_rendered, here_target = rendered, target
    for part in path:
        if isinstance(part, int):
            if not isinstance(here_rendered, list) or not isinstance(here_target, list) or part >= len(here_rendered):
                break
            item = here_rendered[part]
            name = item.get("name") if isinstance(item, Mapping) else None
            if name is not None:
                index = next(
                    (
                        i
                        for i, other in enumerate(here_target)
                        if isinstance(other, Mapping) and other.get("name") == name
                    ),
                    None,
                )
            else:
                index = part if part < len(here_target) else None
            if index is None:
                break
            out.append(index)
            here_rendered, here_target = item, here_target[index]
        else:
            if (
                not isinstance(here_rendered, Mapping)
                or not isinstance(here_target, Mapping)
                or part not in here_target
            ):
                break
            out.append(part)
            here_rendered, here_target = here_rendered.get(part), here_target[part]
    return tuple(out)


def has_path(data: Any, path: FieldPath) -> bool:
    return get_path(data, path) is not None
