"""Find the external programs lint tests run (helm, kustomize or kubectl, pre-commit); skip when absent."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.paths import REPO_ROOT

# `.ci/run` installs helm from npm into .tools (not on PATH): tests look there too.
TOOL_DIRS = (REPO_ROOT / ".tools" / "node_modules" / ".bin",)


def find_tool(name: str) -> Path | None:
    found = shutil.which(name)
    if found:
        return Path(found)
    for folder in TOOL_DIRS:
        if (folder / name).is_file() and os.access(folder / name, os.X_OK):
            return folder / name
    return None


def require_tool(monkeypatch: pytest.MonkeyPatch, *names: str) -> Path:
    """The first of `names` found, put on PATH for the test; else skip with a reason."""
    for name in names:
        found = find_tool(name)
        if found is not None:
            monkeypatch.setenv("PATH", f"{found.parent}{os.pathsep}{os.environ.get('PATH', '')}")
            return found
    pytest.skip(f"{' or '.join(names)} not installed (.ci/run installs it)")


def without_tools(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A PATH with no helm, kustomize or kubectl (the python running the tests stays reachable)."""
    empty = tmp_path / "empty-path"
    empty.mkdir(exist_ok=True)
    monkeypatch.setenv("PATH", str(empty))
