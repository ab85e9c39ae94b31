"""Which files a lint run reads: exclude globs, `.gitignore` inside a git work tree, tool folders.

Patterns are gitignore-style, as ruff's `exclude` and git itself read them, matched in time linear in the path
(`gitignore.py`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from kubegpu.manifests.gitignore import IgnoreRules
from kubegpu.manifests.regular_file import read_regular

_IGNORE_FILE_BYTES = 1 << 20  # a .gitignore larger than this is not read
MAX_IGNORE_PATTERNS = 2000
"""Patterns read from one .gitignore (or the excludes): every file checked tests each, so a file of many
thousands would slow a run down; the lines after these are not read, and a notice says so."""

# Folders no one keeps manifests to lint in: VCS data, dependencies, virtual environments, caches.
TOOL_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".bzr",
        ".jj",
        "node_modules",
        "bower_components",
        ".venv",
        "venv",
        ".tox",
        ".nox",
        "__pycache__",
        "__pypackages__",
        "site-packages",
        ".mypy_cache",
        ".ruff_cache",
        ".pytest_cache",
        ".terraform",
        ".direnv",
        ".eggs",
        ".idea",
        ".vscode",
    }
)


@dataclass(frozen=True)
class Selection:
    """What to leave out. `root`: the folder exclude patterns are relative to (the config's, else cwd)."""

    exclude: tuple[str, ...] = ()
    root: Path | None = None
    respect_gitignore: bool = True
    force_exclude: bool = False  # apply the excludes to files named explicitly too


@dataclass
class Selector:
    """Decides path by path; `.gitignore` files are read once per folder."""

    selection: Selection = field(default_factory=Selection)
    notices: list[str] = field(default_factory=list)  # ignore files read only in part
    _exclude: IgnoreRules | None = None
    _root: Path = field(default_factory=Path.cwd)
    _ignores: dict[Path, IgnoreRules | None] = field(default_factory=dict)
    _ignored_dirs: dict[Path, bool] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._root = (self.selection.root or Path.cwd()).resolve()
        if self.selection.exclude:
            self._exclude = self._rules(self.selection.exclude, "the exclude patterns")

    def skips_dir(self, folder: Path) -> bool:
        """A folder walked into: tool folders, virtual environments, hidden, excluded or git-ignored ones."""
        name = folder.name
        if name in TOOL_DIRS or (name.startswith(".") and name not in (".", "..")):
            return True
        if (folder / "pyvenv.cfg").is_file():
            return True
        return self.excluded(folder, is_dir=True)

    def excluded(self, path: Path, is_dir: bool = False, absolute: Path | None = None) -> bool:
        """Matched by an exclude pattern, or ignored by git (when respected); `absolute`: `path` resolved."""
        if absolute is None:
            absolute = path.resolve()
        if self._exclude is not None and self._matches(self._exclude, self._root, absolute, is_dir):
            return True
        return self.selection.respect_gitignore and self._git_ignored(absolute, is_dir)

    @staticmethod
    def _matches(spec: IgnoreRules, base: Path, path: Path, is_dir: bool) -> bool:
        try:
            relative = path.relative_to(base).as_posix()
        except ValueError:
            relative = path.name  # outside the root: only patterns without a slash can match it
        if relative in ("", "."):
            return False
        return bool(spec.match_file(relative + "/" if is_dir else relative))

    def _git_ignored(self, path: Path, is_dir: bool) -> bool:
        """Git's answer: a pattern of a `.gitignore` above matches it, or a folder above it is ignored."""
        top = work_tree(path if is_dir else path.parent)
        if top is None or path == top:
            return False
        if is_dir and path in self._ignored_dirs:
            return self._ignored_dirs[path]
        answer = False
        for base in path.parents:
            spec = self._ignore_of(base, top)
            if spec is not None and self._matches(spec, base, path, is_dir):
                answer = True
                break
            if base == top:
                break
        if not answer and path.parent != top:
            answer = self._git_ignored(path.parent, True)
        if is_dir:
            self._ignored_dirs[path] = answer
        return answer

    def _ignore_of(self, folder: Path, top: Path) -> IgnoreRules | None:
        if folder not in self._ignores:
            lines: list[str] = []
            for file in (folder / ".gitignore", *((top / ".git" / "info" / "exclude",) if folder == top else ())):
                try:
                    lines.extend(read_regular(file, _IGNORE_FILE_BYTES).decode(errors="replace").splitlines())
                except OSError:
                    continue
            shown = folder / ".gitignore"
            if shown.is_relative_to(self._root):  # as messages name files: relative to the configuration's folder
                shown = shown.relative_to(self._root)
            self._ignores[folder] = self._rules(lines, str(shown)) if lines else None
        return self._ignores[folder]

    def _rules(self, lines: Iterable[str], what: str) -> IgnoreRules:
        rules = IgnoreRules.from_lines(lines, MAX_IGNORE_PATTERNS)
        if rules.truncated:
            self.notices.append(f"{what}: only the first {MAX_IGNORE_PATTERNS} patterns are read")
        return rules


@lru_cache(maxsize=4096)
def work_tree(folder: Path) -> Path | None:
    """The top folder of the git work tree holding `folder`, or None outside one."""
    for candidate in (folder, *folder.parents):
        if (candidate / ".git").exists():
            return candidate
    return None
