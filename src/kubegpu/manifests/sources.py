"""Find and read input files: paths, directories (recursive), `-` for stdin; size and binary guards.

Nothing here parses YAML; it only turns what the user named into texts with names.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

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


def discover(paths: Iterable[str]) -> Iterator[tuple[str, Path | None, str]]:
    """Yield (name, path, kind) for every input; directories are walked in sorted order.

    Hidden directories (`.git`, `.venv`) are skipped; explicit files are taken whatever their suffix.
    """
    for raw in paths:
        if raw == "-":
            yield STDIN_NAME, None, "manifest"
            continue
        path = Path(raw)
        if path.is_dir():
            for root, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                for name in sorted(files):
                    child = Path(root) / name
                    if child.suffix in MANIFEST_SUFFIXES:
                        yield str(child), child, "manifest"
                    elif is_dockerfile(child):
                        yield str(child), child, "dockerfile"
        else:
            yield raw, path, "dockerfile" if is_dockerfile(path) else "manifest"


def read_source(name: str, path: Path | None, kind: str, max_bytes: int = DEFAULT_MAX_BYTES) -> SourceText:
    """Read one input as UTF-8 text, refusing missing, huge or binary files with a reason."""
    try:
        if path is None:
            raw = sys.stdin.buffer.read(max_bytes + 1)
        else:
            size = path.stat().st_size
            if size > max_bytes:
                return SourceText(name, None, kind, f"file is {size} bytes, over the {max_bytes}-byte limit "
                                  "(raise it with --max-file-size)", path)
            raw = path.read_bytes()
    except FileNotFoundError:
        return SourceText(name, None, kind, "no such file or directory", path)
    except IsADirectoryError:
        return SourceText(name, None, kind, "is a directory", path)
    except OSError as err:
        return SourceText(name, None, kind, f"cannot read: {err.strerror or err}", path)
    if len(raw) > max_bytes:
        return SourceText(name, None, kind, f"input is over the {max_bytes}-byte limit "
                          "(raise it with --max-file-size)", path)
    if b"\x00" in raw[:8192]:
        return SourceText(name, None, kind, "binary file (contains NUL bytes), not YAML or JSON", path)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = raw[: err.start].count(b"\n") + 1
        return SourceText(name, None, kind, f"line {line}: not UTF-8 text ({err.reason})", path)
    return SourceText(name, text, kind, None, path)
