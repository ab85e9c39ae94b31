"""The published integrations, run for real: the pre-commit hooks on a git repository, the Action's entry script."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.lint.tools import find_tool
from tests.paths import REPO_ROOT

PLATFORM = REPO_ROOT / "tests" / "fixtures" / "repos" / "platform"
SCRIPT = REPO_ROOT / "scripts" / "github-action.sh"
BIN = Path(sys.executable).parent


def _git(folder: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(folder), "-c", "user.email=ci@example.com", "-c", "user.name=ci", *args],
        check=True,
        capture_output=True,
    )


def _platform_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "platform"
    shutil.copytree(PLATFORM, repo)
    # The fixture's GPU manifests have warnings on purpose; this team fails its commits on errors only.
    (repo / "kubegpu.toml").write_text('fail-on = "error"\nextend-exclude = ["ci/"]\n')
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "platform")
    return repo


def test_the_hooks_file_names_real_commands() -> None:
    hooks = yaml.safe_load((REPO_ROOT / ".pre-commit-hooks.yaml").read_text())
    assert {h["id"] for h in hooks} >= {"kubegpu-lint", "kubegpu-fix"}
    lint = next(h for h in hooks if h["id"] == "kubegpu-lint")
    assert lint["entry"].split()[:2] == ["kubegpu", "lint"] and "--force-exclude" in lint["entry"]


def test_pre_commit_runs_the_lint_hook_on_a_platform_repository(tmp_path: Path) -> None:
    pre_commit = BIN / "pre-commit"
    if not pre_commit.is_file() or shutil.which("git") is None:
        pytest.skip("pre-commit (the dev extra) or git is not installed")
    repo = _platform_repo(tmp_path)
    env = {**os.environ, "PRE_COMMIT_HOME": str(REPO_ROOT / ".tools" / "pre-commit-home")}
    tools = [str(t.parent) for t in (find_tool("helm"),) if t is not None]
    env["PATH"] = os.pathsep.join([*tools, env.get("PATH", "")])

    def run() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(pre_commit), "try-repo", str(REPO_ROOT), "kubegpu-lint", "--all-files", "--verbose"],
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
            timeout=540,
        )

    done = run()
    if "An unexpected error has occurred" in done.stdout + done.stderr and "pip" in done.stdout + done.stderr:
        pytest.skip(f"pre-commit could not build the hook's environment (no package index?): {done.stdout[-300:]}")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Passed" in done.stdout
    assert "files are not Kubernetes objects" in done.stdout  # package.json, compose, CI files: counted, fine
    assert "KG001" not in done.stdout and "KG002" not in done.stdout
    # A commit that adds an error fails the hook, naming the file.
    (repo / "manifests" / "broken.yaml").write_text("apiVersion: v1\nkind: Pod\nspec: [\n")
    _git(repo, "add", "-A")
    done = run()
    assert done.returncode != 0
    assert "manifests/broken.yaml" in done.stdout and "KG001" in done.stdout


def _action(tmp_path: Path, repo: Path, **inputs: str) -> tuple[int, dict[str, str]]:
    output = tmp_path / "github-output"
    output.write_text("")
    env = {
        **os.environ,
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "GITHUB_OUTPUT": str(output),
        "INPUT_INSTALL": "none",
        **{f"INPUT_{k.upper()}": v for k, v in inputs.items()},
    }
    done = subprocess.run(["bash", str(SCRIPT)], cwd=repo, env=env, capture_output=True, text=True, timeout=300)
    outputs = dict(line.split("=", 1) for line in output.read_text().splitlines() if "=" in line)
    return done.returncode, outputs


def test_the_action_script_writes_sarif_and_sets_outputs(tmp_path: Path) -> None:
    if shutil.which("bash") is None:
        pytest.skip("bash not installed")
    repo = _platform_repo(tmp_path)
    code, outputs = _action(tmp_path, repo, paths="manifests operators", sarif_file="out/kubegpu.sarif")
    assert (code, outputs) == (0, {"sarif-file": "out/kubegpu.sarif", "exit-code": "0"})  # the config: errors only
    log = json.loads((repo / "out" / "kubegpu.sarif").read_text())
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in log["runs"][0]["results"]}
    assert uris == {"manifests/embeddings.yaml", "manifests/train-pytorchjob.yaml"}
    code, outputs = _action(tmp_path, repo, paths="manifests", fail_on="warning")
    assert (code, outputs["exit-code"]) == (1, "1")
    assert json.loads((repo / "kubegpu.sarif").read_text())["runs"][0]["results"]
    code, outputs = _action(
        tmp_path,
        repo,
        paths="manifests",
        fail_on="warning",
        args="--exclude train-*.yaml --exclude embeddings.yaml --select dshm-missing",
    )
    assert code == 2  # everything excluded: no input is an error, not a silent pass
