"""Find and read input files: paths, directories (recursive), `-` for stdin; size and binary guards.

Nothing here parses YAML; it only turns what the user named into texts with names.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from operator import attrgetter
from pathlib import Path

from kubegpu.errors import InputError
from kubegpu.manifests.regular_file import NotReadable, read_regular
from kubegpu.manifests.roots import Followed, Root, display, follow
from kubegpu.manifests.selection import Selection, Selector, work_tree

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
DEFAULT_MAX_BYTES = 20 * 1024 * 1024
STDIN_NAME = "<stdin>"


@dataclass(frozen=True)
class SourceText:
    """One input: its display name, its text (None when unreadable) and why it is unreadable."""

    name: str
    text: str | None
    kind: str = "manifest"  # "manifest" or "dockerfile"
    error: str | None = None
    path: Path | None = None


def is_dockerfile(path: Path) -> bool:
    name = path.name
    return (
        name in ("Dockerfile", "Containerfile")
        or name.startswith(("Dockerfile.", "Containerfile."))
        or name.endswith((".Dockerfile", ".dockerfile", ".Containerfile"))
    )


KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
CHART_FILE = "Chart.yaml"
# What `discover` yields: a file ("manifest", "dockerfile") or a folder to render ("helm", "kustomize").
MANIFEST, DOCKERFILE, HELM, KUSTOMIZE = "manifest", "dockerfile", "helm", "kustomize"


def is_chart(folder: Path) -> bool:
    return (folder / CHART_FILE).is_file()


def is_kustomization(folder: Path) -> bool:
    return any((folder / name).is_file() for name in KUSTOMIZATION_FILES)


MAX_DEPTH = 128
"""Folders nested deeper than this below a path on the command line are not walked (a notice names them):
repositories nest a few dozen levels; a hostile tree of thousands would only cost time."""
MAX_ENTRIES = 1_000_000
"""Names (files and folders) a run may list in the folders it walks: past it the walk stops, with a notice."""


@dataclass
class WalkReport:
    """What discovering the inputs left out and why, and the root each kustomization found may read in."""

    skipped: list[tuple[str, str, str]] = field(default_factory=list)  # (path, why, "link" or "folder")
    notices: list[str] = field(default_factory=list)
    roots: dict[Path, Root] = field(default_factory=dict)  # kustomization folder (resolved) -> its lint root
    entries: int = 0  # names listed so far (bounded by MAX_ENTRIES)
    links: int = 0  # links not followed (outside the root, into a hidden folder, loops, to nothing)
    loops: int = 0
    folders: int = 0  # folders not read: unreadable, or nested too deep

    def skip_link(self, name: str, followed: Followed) -> None:
        self.skipped.append((name, followed.reason or "a symbolic link: not followed", "link"))
        self.links += 1
        self.loops += followed.loop

    def skip_folder(self, name: str, reason: str) -> None:
        self.skipped.append((name, reason, "folder"))
        self.folders += 1

    def finish(self, selector: Selector) -> None:
        """The notices of a whole walk: links and folders not read, counted; ignore files read in part."""
        if self.links:
            loops = f", {self.loops} of them a loop" if self.loops else ""
            self.notices.append(
                f"{self.links} symbolic link{'s were' if self.links != 1 else ' was'} not followed{loops}: "
                "lint follows no link that leaves the path it was given, enters a hidden or tool folder, loops "
                "or leads nowhere (--verbose lists them)"
            )
        if self.folders:
            self.notices.append(
                f"{self.folders} folder{'s were' if self.folders != 1 else ' was'} not read: unreadable, or "
                f"nested deeper than {MAX_DEPTH} levels (--verbose lists them)"
            )
        if self.entries > MAX_ENTRIES:
            self.notices.append(f"the walk stopped after {MAX_ENTRIES} names: the rest was not read")
        self.notices.extend(selector.notices)


def discover(
    paths: Iterable[str],
    selection: Selection | None = None,
    stdin_name: str | None = None,
    report: WalkReport | None = None,
) -> Iterator[tuple[str, Path | None, str]]:
    """Yield (name, path, kind) for every input; directories are walked in sorted order.

    Tool folders (`.git`, `node_modules`, virtual environments), hidden folders, excluded and git-ignored
    paths are skipped. A Helm chart (a folder with Chart.yaml) or a kustomization is yielded as one
    input to render, never file by file: its templates are not YAML and its patches are not objects.
    Explicit files are taken whatever their suffix (with `force_exclude`, unless excluded); a file
    inside a chart or a kustomization stands for that chart or kustomization. `stdin_name` names `-`
    (and with `force_exclude`, standard input named as an excluded file is not read).

    Each path is its own root (`roots.py`): a folder given is the root of what is found in it; a file, or a
    folder inside a chart or kustomization, has the git work tree holding it as its root (else the folder
    of that chart, kustomization or file). No link leaving its root is followed; `report` lists them.
    """
    selector = Selector(selection or Selection())
    walk = report if report is not None else WalkReport()
    seen: set[Path] = set()

    def once(path: Path, resolved: Path | None = None) -> bool:
        key = Path(os.path.realpath(path)) if resolved is None else resolved
        if key in seen:
            return False
        seen.add(key)
        return True

    for raw in paths:
        if raw == "-":
            if stdin_name and selector.selection.force_exclude and selector.excluded(Path(stdin_name)):
                continue
            yield stdin_name or STDIN_NAME, None, MANIFEST
            continue
        path = Path(raw)
        if path.is_dir():
            yield from _walk(path, selector, once, walk)
            continue
        if selector.selection.force_exclude and selector.excluded(path):
            continue
        owner = None if is_dockerfile(path) else _rendered_by(path)
        root = _stand_in_root(path.parent, owner)
        if os.path.islink(path):
            followed = follow(path, root)
            if followed.target is None:
                walk.skip_link(raw, followed)
                continue
        if owner is not None:
            if once(owner[1]):
                _record_root(walk, owner, root)
                yield owner
        elif once(path):
            yield raw, path, DOCKERFILE if is_dockerfile(path) else MANIFEST
    walk.finish(selector)


def _stand_in_root(folder: Path, owner: tuple[str, Path, str] | None) -> Root:
    """The root of a file given, or of a folder inside a chart or kustomization: the git work tree holding it,
    else the folder of the chart or kustomization it stands for, else its own folder."""
    real = Path(os.path.realpath(folder))
    top = work_tree(real)
    if top is not None:
        return Root(top)
    return Root.of(owner[1]) if owner is not None else Root(real)


def _record_root(walk: WalkReport, found: tuple[str, Path, str], root: Root) -> None:
    if found[2] == KUSTOMIZE:
        walk.roots[Path(os.path.realpath(found[1]))] = root


def _walk(
    top: Path, selector: Selector, once: Callable[[Path, Path | None], bool], walk: WalkReport
) -> Iterator[tuple[str, Path | None, str]]:
    owner = _rendered_by(top / "-")  # the chart or kustomization holding the folder, the folder itself first
    if owner is not None and owner[2] == HELM:
        if once(owner[1], None):
            yield owner
        return
    real_top = Path(os.path.realpath(top))
    if owner is not None and owner[1] != real_top:
        root = _stand_in_root(top, owner)
        if once(owner[1], None):
            _record_root(walk, owner, root)
            yield owner
    else:
        root = Root(real_top)
    # Depth first, each folder's names in sorted order: its kustomization, the charts among its folders, its
    # files, then its folders (as os.walk top-down, but without recursion, with bounds, and links checked).
    stack: list[tuple[Path, bool, int]] = [(top, owner is not None, 0)]
    while stack:
        folder, in_kustomization, depth = stack.pop()
        if walk.entries > MAX_ENTRIES:
            return
        entries = _list(folder, walk)
        if entries is None:
            continue
        if is_kustomization(folder):
            in_kustomization = True
            if once(folder, None):
                _record_root(walk, (str(folder), folder, KUSTOMIZE), root)
                yield str(folder), folder, KUSTOMIZE
        kept: list[Path] = []
        files = [entry for entry in entries if not _is_dir(entry)]
        folders = [entry for entry in entries if _is_dir(entry)]
        yield from _charts(folder, folders, selector, root, once, walk, kept)
        yield from _files(folder, files, in_kustomization, selector, root, once, walk)
        if kept and depth >= MAX_DEPTH:
            walk.skip_folder(str(folder), f"its folders are nested deeper than {MAX_DEPTH} levels: not read")
            continue
        stack.extend((child, in_kustomization, depth + 1) for child in reversed(kept))


def _charts(
    folder: Path,
    folders: list[os.DirEntry[str]],
    selector: Selector,
    root: Root,
    once: Callable[[Path, Path | None], bool],
    walk: WalkReport,
    kept: list[Path],
) -> Iterator[tuple[str, Path | None, str]]:
    """The charts among a folder's folders (a chart behind a link only when the link stays in the root); the
    other folders not skipped go to `kept`, to be walked."""
    for entry in folders:
        child = folder / entry.name
        if selector.skips_dir(child):
            continue
        if entry.is_symlink():  # a folder behind a link is never walked; a chart there is rendered
            if is_chart(child):
                followed = follow(child, root)
                if followed.target is None:
                    walk.skip_link(str(child), followed)
                elif once(child, None):
                    yield str(child), child, HELM
            continue
        if is_chart(child):
            if once(child, None):
                yield str(child), child, HELM
            continue
        kept.append(child)


def _files(
    folder: Path,
    files: list[os.DirEntry[str]],
    in_kustomization: bool,
    selector: Selector,
    root: Root,
    once: Callable[[Path, Path | None], bool],
    walk: WalkReport,
) -> Iterator[tuple[str, Path | None, str]]:
    """A folder's manifests (not inside a kustomization, whose files are its patches) and Dockerfiles, each once,
    unless excluded; a link that leaves the root is skipped and counted."""
    real_folder: Path | None = None  # resolved once per folder: a file that is no link resolves beside it
    for entry in files:
        child = folder / entry.name
        if child.suffix in MANIFEST_SUFFIXES and not in_kustomization:
            kind = MANIFEST
        elif is_dockerfile(child):
            kind = DOCKERFILE
        else:
            continue
        real_folder = real_folder or Path(os.path.realpath(folder))
        if entry.is_symlink():
            followed = follow(child, root)
            if followed.target is None:
                if not selector.excluded(child, absolute=real_folder / entry.name):
                    walk.skip_link(str(child), followed)
                continue
            absolute = followed.target
        else:
            absolute = real_folder / entry.name
        if not selector.excluded(child, absolute=absolute) and once(child, absolute):
            yield str(child), child, kind


def _list(folder: Path, walk: WalkReport) -> list[os.DirEntry[str]] | None:
    """The entries of a folder by name, or None (and why, in the report) when it cannot be listed."""
    try:
        with os.scandir(folder) as listing:
            entries = sorted(listing, key=attrgetter("name"))
    except OSError as err:
        walk.skip_folder(str(folder), f"folder cannot be read: {err.strerror or err}")
        return None
    walk.entries += len(entries)
    if walk.entries > MAX_ENTRIES:
        return None
    return entries


def _is_dir(entry: os.DirEntry[str]) -> bool:
    """A folder, or a link to one (as os.walk sorts them); loops and links to nothing are files."""
    try:
        return entry.is_dir()
    except OSError:
        return False


def _rendered_by(path: Path) -> tuple[str, Path, str] | None:
    """The chart or kustomization that renders `path` (the nearest folder above it holding one)."""
    absolute = Path(os.path.realpath(path))
    for folder in absolute.parents:
        if is_chart(folder):
            return display(folder), folder, HELM
        if is_kustomization(folder):
            return display(folder), folder, KUSTOMIZE
        if (folder / ".git").exists():
            break
    return None


def read_source(name: str, path: Path | None, kind: str, max_bytes: int = DEFAULT_MAX_BYTES) -> SourceText:
    """Read one input as UTF-8 text, refusing missing, huge or binary files with a reason."""
    try:
        raw = sys.stdin.buffer.read(max_bytes + 1) if path is None else read_regular(path, max_bytes)
    except NotReadable as err:
        return SourceText(name, None, kind, str(err), path)
    except FileNotFoundError:
        return SourceText(name, None, kind, "no such file or directory", path)
    except IsADirectoryError:
        return SourceText(name, None, kind, "is a directory", path)
    except OSError as err:
        return SourceText(name, None, kind, f"cannot read: {err.strerror or err}", path)
    if len(raw) > max_bytes:
        return SourceText(
            name, None, kind, f"input is over the {max_bytes}-byte limit (raise it with --max-file-size)", path
        )
    if b"\x00" in raw[:8192]:
        return SourceText(name, None, kind, "binary file (contains NUL bytes), not YAML or JSON", path)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = raw[: err.start].count(b"\n") + 1
        return SourceText(name, None, kind, f"line {line}: not UTF-8 text ({err.reason})", path)
    return SourceText(name, text, kind, None, path)


def read_text(name: str, path: Path | None, kind: str, what: str = "") -> str:
    """The text of an input a command needs whole, read as `read_source` reads it; otherwise an InputError
    naming `name` and why (`what`: words before the reason)."""
    source = read_source(name, path, kind)
    if source.text is None:
        raise InputError(f"{what}{source.error or 'cannot read'}", file=name)
    return source.text
