"""The lint root: the folder a path on the command line allows kubegpu to read, and which links stay inside it.

A repository is untrusted: a link in it may point at /proc/self/environ, a CI token in .git/config or a secret in a
home folder. Nothing is read through a link that leaves its root or enters a hidden or tool folder below it.
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass
from pathlib import Path

from kubegpu.manifests.selection import TOOL_DIRS


@dataclass(frozen=True)
class Root:
    """A resolved folder; `holds` tells whether a resolved path lies in it, outside hidden and tool folders."""

    path: Path

    @classmethod
    def of(cls, folder: Path) -> Root:
        return cls(Path(os.path.realpath(folder)))

    def where(self, target: Path) -> str | None:
        """Where the resolved `target` lies when it may not be read from this root ("outside ROOT", "into .git, a
        hidden or tool folder"), or None when it may."""
        try:
            inside = target.relative_to(self.path).parts
        except ValueError:
            shown = display(self.path)
            return f"outside {shown}{'' if shown.endswith('/') else '/'}"
        for part in inside:
            if part.startswith(".") or part in TOOL_DIRS:
                return f"into {part}, a hidden or tool folder or file"
        return None


@dataclass(frozen=True)
class Followed:
    """Where a link leads (resolved), or why it is not followed (`reason`); `loop` for a link cycle."""

    target: Path | None
    reason: str | None = None
    loop: bool = False


def follow(path: Path, root: Root) -> Followed:
    """The resolved target of `path` when it stays in `root`; else why not (a loop, nothing there, outside)."""
    try:
        target = Path(os.path.realpath(path, strict=True))
    except OSError as err:
        if err.errno == errno.ELOOP:
            return Followed(None, "a symbolic link loop: not followed", loop=True)
        if err.errno == errno.ENOENT:
            return Followed(None, "a symbolic link to nothing: not followed")
        return Followed(None, f"a symbolic link that cannot be followed: {err.strerror or err}")
    reason = root.where(target)
    if reason is not None:
        return Followed(None, f"a symbolic link leading {reason}: not followed")
    return Followed(target)


def resolved(path: Path) -> Path | None:
    """`path` with every link resolved, or None for a loop or a link to nothing (never an exception)."""
    try:
        return Path(os.path.realpath(path, strict=True))
    except OSError:
        return None


def display(path: Path) -> str:
    """A path as messages show it: relative to the working directory when under it."""
    try:
        return str(path.relative_to(Path.cwd().resolve())) or "."
    except (ValueError, OSError):
        return str(path)
