"""Every Python example in docs/api.md runs as written (each block in a fresh namespace, in a scratch
folder), and the names the page documents are the ones `kubegpu.api` exports."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import kubegpu.api
from tests.paths import REPO_ROOT

PAGE = REPO_ROOT / "docs" / "api.md"
BLOCKS = re.findall(r"```python\n(.*?)```", PAGE.read_text(), re.DOTALL)


def test_the_page_has_examples() -> None:
    assert len(BLOCKS) >= 5


@pytest.mark.parametrize("code", BLOCKS, ids=[f"example-{i + 1}" for i in range(len(BLOCKS))])
def test_example_runs(code: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("KUBEGPU_OPENB_DIR", raising=False)
    exec(compile(code, str(PAGE), "exec"), {"__name__": "__api_example__"})


def test_documented_names_are_exported() -> None:
    imported = {
        name.strip()
        for block in BLOCKS
        for line in re.findall(r"from kubegpu\.api import ([^\n]+)", block)
        for name in line.split(",")
    }
    table = set(re.findall(r"^\| `(\w+)", PAGE.read_text(), re.MULTILINE))
    assert imported and table
    assert imported | table <= set(kubegpu.api.__all__)
    assert all(hasattr(kubegpu.api, name) for name in kubegpu.api.__all__)
