"""The wheel as a user gets it: built from this tree, installed into a fresh virtual environment with the
pinned versions (constraints.txt), run from a folder outside the source tree.

The base install lints, and a command whose optional extra is missing says which one to install; with
`[sim]` the FGD experiment runs on the trace that ships inside the wheel. About a minute (pip installs
from its cache or the local package index: no network).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

import kubegpu
from tests.paths import REPO_ROOT
from tests.test_image import BUILD

pytestmark = pytest.mark.package

SOURCE_FILES = ("pyproject.toml", "README.md", "LICENSE", "src")


def _run(args: list[str], cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "KUBEGPU_OPENB_DIR")}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False)


def _ok(result: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert result.returncode == 0, f"{result.args}\n{result.stdout}\n{result.stderr}"
    return result


def _build_wheel(tmp: Path) -> Path:
    # a copy of the sources, so building leaves no build/ or egg-info in the checkout
    source = tmp / "source"
    source.mkdir()
    for name in SOURCE_FILES:
        item = REPO_ROOT / name
        if item.is_dir():
            shutil.copytree(item, source / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            shutil.copy(item, source / name)
    _ok(
        _run(
            [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(tmp / "dist"), str(source)],
            cwd=tmp,
        )
    )
    (wheel,) = (tmp / "dist").glob("kubegpu-*.whl")
    return wheel


def test_wheel_installs_and_runs_outside_the_source_tree(tmp_path: Path) -> None:
    wheel = _build_wheel(tmp_path)
    assert wheel.name.startswith(f"kubegpu-{kubegpu.__version__}-py3-none-any")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "kubegpu/sim/data/openb/openb_pod_list_default.csv.xz" in names
    assert "kubegpu/sim/data/openb/SHA256SUMS" in names and "kubegpu/sim/data/openb/README.md" in names
    assert not any(n.startswith(("tests/", "bench/")) for n in names)

    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    cli = env_dir / "bin" / "kubegpu"
    work = tmp_path / "work"  # outside the source tree
    shutil.copytree(REPO_ROOT / "examples", work / "examples")
    pip = [str(python), "-m", "pip", "install", "--quiet", "-c", str(REPO_ROOT / "constraints.txt")]

    _ok(_run([*pip, str(wheel)], cwd=work))
    located = _ok(_run([str(python), "-c", "import kubegpu; print(kubegpu.__file__)"], cwd=work)).stdout
    assert Path(located.strip()).is_relative_to(env_dir), located
    assert _ok(_run([str(cli), "--version"], cwd=work)).stdout.strip() == f"kubegpu {kubegpu.__version__}"

    lint = _run([str(cli), "lint", "examples/"], cwd=work)
    assert lint.returncode in (0, 1), lint.stderr
    assert "GPU pod template" in lint.stdout
    gen = _run([str(cli), "gen", "webhook"], cwd=work)
    assert gen.returncode == 0 and f"image: {kubegpu.DEFAULT_IMAGE}" in gen.stdout, gen.stderr

    # the base install has no numpy: the simulator says which extra to install, in one line, exit 2
    missing = _run([str(cli), "simulate", "fgd-repro", "--seeds", "42", "--policy", "fgd"], cwd=work)
    assert missing.returncode == 2, (missing.stdout, missing.stderr)
    assert missing.stderr.strip().count("\n") == 0 and "pip install 'kubegpu[sim]'" in missing.stderr
    assert "Traceback" not in missing.stderr
    validate = _run([str(cli), "gen", "prepull", "--from", "examples/vllm-inference.yaml", "--validate"], cwd=work)
    assert validate.returncode == 2 and "pip install 'kubegpu[validate]'" in validate.stderr, validate.stderr

    _ok(_run([*pip, f"{wheel}[sim]"], cwd=work))
    run = _ok(
        _run(
            [str(cli), "simulate", "fgd-repro", "--seeds", "42", "--policy", "fgd", "--workers", "1", "-o", "csv"],
            cwd=work,
        )
    )
    header, row = run.stdout.strip().splitlines()[:2]
    assert header.startswith("workload,policy,seeds") and row.startswith("default,fgd,42"), run.stdout


def test_the_dockerfile_build_step_installs_a_working_server(tmp_path: Path) -> None:
    # the Dockerfile's own RUN line, with its absolute paths moved under tmp_path, in a copy of the sources
    source = tmp_path / "src-copy"
    source.mkdir()
    for name in (*SOURCE_FILES, "constraints.txt"):
        item = REPO_ROOT / name
        if item.is_dir():
            shutil.copytree(item, source / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            shutil.copy(item, source / name)
    (step,) = [i.arguments for i in BUILD if i.keyword == "RUN"]
    step = step.replace("/opt/kubegpu", str(tmp_path / "opt" / "kubegpu")).replace("/dist", str(tmp_path / "dist"))
    interpreter = tmp_path / "bin"
    interpreter.mkdir()
    (interpreter / "python").symlink_to(sys.executable)
    built = _run(["sh", "-c", f'PATH="{interpreter}:$PATH"; {step}'], cwd=source, timeout=600)
    assert built.returncode == 0, built.stdout + built.stderr
    assert built.stdout.strip().endswith(f"kubegpu {kubegpu.__version__}")

    image_env = tmp_path / "opt" / "kubegpu"
    before = sorted(p for p in image_env.rglob("*"))
    cli = image_env / "bin" / "kubegpu"
    for command in (["webhook", "serve", "--help"], ["audit", "--help"], ["probe", "--help"]):
        assert "Usage" in _ok(_run([str(cli), *command], cwd=tmp_path)).stdout
    python = image_env / "bin" / "python"
    _ok(
        _run([str(python), "-c", "import kubegpu.webhook.serve, kubegpu.live.client, kubegpu.live.audit"], cwd=tmp_path)
    )
    assert sorted(p for p in image_env.rglob("*")) == before  # nothing written: fit for a read-only root
