"""A private copy of a Helm chart to render: its regular files only, so that helm reads nothing the lint root does
not hold. helm loads every file of a chart folder (`.Files.Get` prints any of them) and follows links, so a chart
at the top of a work tree would hand `.git/config` (a CI token) to its templates, and a link would hand anything.

Left out of the copy: hidden files and folders (but `.helmignore`) and tool folders (`.git`, `node_modules`,
virtual environments), as the lint walk leaves them out. A link that leaves the chart, loops or leads nowhere,
and anything that is not a regular file or folder, mean the chart is not rendered (the reason names it).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from kubegpu.manifests.roots import Root
from kubegpu.manifests.selection import TOOL_DIRS

MAX_CHART_FILES = 10_000
MAX_CHART_BYTES = 200 * 1024 * 1024
_KEPT_HIDDEN = frozenset({".helmignore"})


def copy_chart(chart: Path, into: Path, max_file_bytes: int) -> str | None:
    """Copy `chart`'s files into the new folder `into`; None when done, else why the chart is not rendered."""
    from kubegpu.manifests.regular_file import NotReadable, read_regular

    root = Root.of(chart)
    into.mkdir(parents=True)
    stack: list[tuple[Path, Path, frozenset[Path]]] = [(root.path, into, frozenset({root.path}))]
    files = size = 0
    while stack:
        source, target, above = stack.pop()
        try:
            names = sorted(os.listdir(source))
        except OSError as err:
            return f"{_inside(source, root)} cannot be read: {err.strerror or err}"
        for name in names:
            if (name.startswith(".") and name not in _KEPT_HIDDEN) or name in TOOL_DIRS:
                continue
            path = source / name
            real = path
            if os.path.islink(path):
                try:
                    real = Path(os.path.realpath(path, strict=True))
                except OSError:
                    return f"{_inside(path, root)} is a symbolic link that loops or leads nowhere"
                if root.where(real) is not None:
                    return f"{_inside(path, root)} is a symbolic link out of the chart or into a hidden or tool folder"
            try:
                info = os.stat(real)
            except OSError as err:
                return f"{_inside(path, root)} cannot be read: {err.strerror or err}"
            if stat.S_ISDIR(info.st_mode):
                if real in above:
                    return f"{_inside(path, root)} is a symbolic link to a folder holding it (a loop)"
                (target / name).mkdir()
                stack.append((real, target / name, above | {real}))
                continue
            if not stat.S_ISREG(info.st_mode):
                return f"{_inside(path, root)} is not a regular file"
            files += 1
            size += info.st_size
            if files > MAX_CHART_FILES or size > MAX_CHART_BYTES:
                return f"the chart holds more than {MAX_CHART_FILES} files or {MAX_CHART_BYTES} bytes"
            try:
                data = read_regular(real, max_file_bytes)
            except NotReadable as err:
                return f"{_inside(path, root)}: {err}"
            except OSError as err:
                return f"{_inside(path, root)} cannot be read: {err.strerror or err}"
            (target / name).write_bytes(data)
    return None


def _inside(path: Path, root: Root) -> str:
    """`path` as the chart names it (relative to the chart folder)."""
    try:
        return path.relative_to(root.path).as_posix() or "."
    except ValueError:
        return str(path)
