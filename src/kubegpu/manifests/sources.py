"""Find and read input files: paths, directories (recursive), `-` for stdin; size and binary guards.

Nothing here parses YAML; it only turns what the user named into texts with names.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from kubegpu.errors import InputError
from kubegpu.manifests.selection import Selection, Selector

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


class NotReadable(OSError):
    """A path that is not read: not a regular file (a FIFO, a device, a socket), or over the size limit."""


def _kind_of(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "is a directory"
    if stat.S_ISFIFO(mode):
        return "is a named pipe (FIFO), not a regular file"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "is a device, not a regular file"
    if stat.S_ISSOCK(mode):
        return "is a socket, not a regular file"
    return "is not a regular file"


def read_regular(path: Path, max_bytes: int) -> bytes:
    """The bytes of a regular file (links followed), at most `max_bytes`; NotReadable (an OSError) otherwise."""
    return read_regular_stat(path, max_bytes)[0]


def read_regular_stat(path: Path, max_bytes: int) -> tuple[bytes, os.stat_result]:
    """The bytes of a regular file (links followed), at most `max_bytes`; NotReadable (an OSError) otherwise.

    The file is opened without blocking (a FIFO would wait for a writer forever) and checked with fstat on
    that descriptor, so a link swapped in between cannot send us to /dev/zero; the limit applies to the
    bytes read, whatever stat said.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotReadable(_kind_of(info.st_mode))
        if info.st_size > max_bytes:
            raise NotReadable(
                f"file is {info.st_size} bytes, over the {max_bytes}-byte limit (raise it with --max-file-size)"
            )
        chunks: list[bytes] = []
        size = 0
        while True:
            chunk = os.read(fd, min(1 << 20, max_bytes + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if size > max_bytes:
                raise NotReadable(f"input is over the {max_bytes}-byte limit (raise it with --max-file-size)")
        return b"".join(chunks), info
    finally:
        os.close(fd)


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


def discover(
    paths: Iterable[str],
    selection: Selection | None = None,
    stdin_name: str | None = None,
) -> Iterator[tuple[str, Path | None, str]]:
    """Yield (name, path, kind) for every input; directories are walked in sorted order.

    Tool folders (`.git`, `node_modules`, virtual environments), hidden folders, excluded and git-ignored
    paths are skipped. A Helm chart (a folder with Chart.yaml) or a kustomization is yielded as one
    input to render, never file by file: its templates are not YAML and its patches are not objects.
    Explicit files are taken whatever their suffix (with `force_exclude`, unless excluded); a file
    inside a chart or a kustomization stands for that chart or kustomization. `stdin_name` names `-`
    (and with `force_exclude`, standard input named as an excluded file is not read).
    """
    selector = Selector(selection or Selection())
    seen: set[Path] = set()

    def once(path: Path, resolved: Path | None = None) -> bool:
        key = path.resolve() if resolved is None else resolved
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
            yield from _walk(path, selector, once)
            continue
        if selector.selection.force_exclude and selector.excluded(path):
            continue
        owner = None if is_dockerfile(path) else _rendered_by(path)
        if owner is not None:
            if once(owner[1]):
                yield owner
        elif once(path):
            yield raw, path, DOCKERFILE if is_dockerfile(path) else MANIFEST


def _walk(
    top: Path, selector: Selector, once: Callable[[Path, Path | None], bool]
) -> Iterator[tuple[str, Path | None, str]]:
    owner = _rendered_by(top / "-")  # the chart or kustomization holding the folder, the folder itself first
    if owner is not None and owner[2] == HELM:
        if once(owner[1], None):
            yield owner
        return
    if owner is not None and owner[1] != top.resolve() and once(owner[1], None):
        yield owner
    inside_kustomization = owner is not None
    for root, dirs, files in os.walk(top):
        folder = Path(root)
        if is_kustomization(folder) and once(folder, None):
            yield str(folder), folder, KUSTOMIZE
        kept = []
        for name in sorted(dirs):
            child = folder / name
            if selector.skips_dir(child):
                continue
            if is_chart(child):
                if once(child, None):
                    yield str(child), child, HELM
                continue
            kept.append(name)
        dirs[:] = kept
        in_kustomization = inside_kustomization or _under_kustomization(folder, top)
        real_folder: Path | None = None  # resolved once per folder: a file that is no link resolves beside it
        for name in sorted(files):
            child = folder / name
            if child.suffix in MANIFEST_SUFFIXES and not in_kustomization:
                kind = MANIFEST
            elif is_dockerfile(child):
                kind = DOCKERFILE
            else:
                continue
            if os.path.islink(child):
                absolute = child.resolve()
            else:
                real_folder = real_folder or folder.resolve()
                absolute = real_folder / name
            if not selector.excluded(child, absolute=absolute) and once(child, absolute):
                yield str(child), child, kind


def _under_kustomization(folder: Path, top: Path) -> bool:
    """`folder` or a folder between it and `top` (the walk's start) holds a kustomization."""
    for candidate in (folder, *folder.parents):
        if is_kustomization(candidate):
            return True
        if candidate == top:
            break
    return False


def _rendered_by(path: Path) -> tuple[str, Path, str] | None:
    """The chart or kustomization that renders `path` (the nearest folder above it holding one)."""
    absolute = path.resolve()
    for folder in absolute.parents:
        if is_chart(folder):
            return _display(folder), folder, HELM
        if is_kustomization(folder):
            return _display(folder), folder, KUSTOMIZE
        if (folder / ".git").exists():
            break
    return None


def _display(folder: Path) -> str:
    try:
        return str(folder.relative_to(Path.cwd().resolve())) or "."
    except ValueError:
        return str(folder)


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
