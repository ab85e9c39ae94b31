"""The developer guides' steps work: a throwaway rule and a throwaway workload kind are added to a copy of the source
tree exactly as docs/dev/add-a-rule.md and docs/dev/add-a-workload-kind.md say (their code blocks, written and
applied as given), and the copy's `kubegpu` then reports the rule and reads the kind. The repository is not edited.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kubegpu.lint import find_rule
from kubegpu.manifests import load_text
from kubegpu.workloads import kind_of

REPO_ROOT = Path(__file__).resolve().parents[1]
_BLOCK = re.compile(r"^```python (file|edit)=(\S+)\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def _follow(guide: str, tree: Path) -> list[str]:
    """Apply the guide's steps to the copy `tree`: write each `file=` block, apply each `edit=` block (each line
    that opens a parenthesised list, then the entry the guide adds after it). Returns the paths touched."""
    text = (REPO_ROOT / "docs" / "dev" / guide).read_text()
    touched: list[str] = []
    for action, path, body in _BLOCK.findall(text):
        target = tree / path
        if action == "file":
            assert not target.exists(), f"{guide}: {path} is a new module"
            target.write_text(body)
        else:
            source = target.read_text()
            lines = body.splitlines()
            edits = [(lines[i], lines[i + 1]) for i in range(len(lines) - 1) if lines[i].endswith("(")]
            assert edits, f"{guide}: the edit of {path} adds nothing"
            for opener, entry in edits:
                assert source.count(opener + "\n") == 1, f"{guide}: {opener!r} is not one line of {path}"
                source = source.replace(opener + "\n", f"{opener}\n{entry}\n")
            target.write_text(source)
        touched.append(path)
    return touched


def _copy_tree(tmp_path: Path) -> Path:
    tree = tmp_path / "checkout"
    shutil.copytree(REPO_ROOT / "src", tree / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    return tree


def _kubegpu(tree: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(tree / "src")}
    return subprocess.run(
        [sys.executable, "-m", "kubegpu", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


def _runs_the_copy(tree: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(tree / "src")}
    done = subprocess.run(
        [sys.executable, "-c", "import kubegpu; print(kubegpu.__file__)"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert Path(done.stdout.strip()).is_relative_to(tree), done.stdout + done.stderr


GPU_POD_WITH_HOST_IPC = """\
apiVersion: v1
kind: Pod
metadata: {name: train}
spec:
  hostIPC: true
  containers:
  - name: train
    image: nvcr.io/nvidia/pytorch:24.05-py3
    resources:
      limits: {nvidia.com/gpu: 1}
"""

EXAMPLE_TRAINER = """\
apiVersion: trainer.example.dev/v1
kind: ExampleTrainer
metadata: {name: llm}
spec:
  workers: 4
  template:
    spec:
      containers:
      - name: worker
        image: nvcr.io/nvidia/pytorch:24.05-py3
        resources:
          limits: {nvidia.com/gpu: 8}
"""


def test_add_a_rule_as_the_guide_says(tmp_path: Path) -> None:
    assert find_rule("KG998") is None  # the repository itself is not changed
    tree = _copy_tree(tmp_path)
    touched = _follow("add-a-rule.md", tree)
    assert touched == ["src/kubegpu/rules/example_host_ipc.py", "src/kubegpu/lint/registry.py"]
    _runs_the_copy(tree)
    (tmp_path / "pod.yaml").write_text(GPU_POD_WITH_HOST_IPC)

    done = _kubegpu(tree, "lint", "pod.yaml", "--select", "example-gpu-host-ipc", "-o", "json", cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    findings = json.loads(done.stdout)["findings"]
    assert [(f["rule"], f["name"], f["line"]) for f in findings] == [("KG998", "example-gpu-host-ipc", 5)]
    assert "shares the node's IPC namespace" in findings[0]["message"]

    explained = _kubegpu(tree, "explain", "KG998", cwd=tmp_path)
    assert explained.returncode == 0 and "A GPU pod sets hostIPC: true." in explained.stdout
    listed = _kubegpu(tree, "rules", cwd=tmp_path)
    assert listed.returncode == 0 and "example-gpu-host-ipc" in listed.stdout


def test_add_a_workload_kind_as_the_guide_says(tmp_path: Path) -> None:
    (document,) = load_text("trainer.yaml", EXAMPLE_TRAINER).documents
    assert kind_of(document) is None  # the repository reads the kind generically: no gang shape
    (tmp_path / "trainer.yaml").write_text(EXAMPLE_TRAINER)
    tree = _copy_tree(tmp_path)
    before = _kubegpu(tree, "lint", "trainer.yaml", "--select", "gang-missing", "-o", "json", cwd=tmp_path)
    assert before.returncode == 0 and json.loads(before.stdout)["findings"] == [], before.stdout + before.stderr

    touched = _follow("add-a-workload-kind.md", tree)
    assert touched == ["src/kubegpu/workloads/example_trainer.py", "src/kubegpu/workloads/registry.py"]
    _runs_the_copy(tree)
    done = _kubegpu(tree, "lint", "trainer.yaml", "--select", "gang-missing", "-o", "json", cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    findings = json.loads(done.stdout)["findings"]
    assert [(f["rule"], f["name"]) for f in findings] == [("KG501", "gang-missing")]
    assert "4 pods" in findings[0]["message"], findings[0]["message"]


@pytest.mark.parametrize("guide", ["add-a-rule.md", "add-a-workload-kind.md"])
def test_the_guides_are_linked_from_the_architecture(guide: str) -> None:
    assert f"({guide})" in (REPO_ROOT / "docs" / "dev" / "architecture.md").read_text()
