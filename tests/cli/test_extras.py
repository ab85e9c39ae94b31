"""A command whose optional extra is not installed says, in one line, which extra to install (exit 2).

The extras come from the package metadata (pyproject.toml); the missing modules are simulated by
blocking their import in a fresh interpreter (`sys.modules[name] = None`), as a base install lacks them.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from kubegpu.cli.extras import extras_of_module, missing_extra
from tests.paths import REPO_ROOT

PYPROJECT = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())
REQUIREMENTS = [
    f'{requirement}; extra == "{extra}"'
    for extra, requirements in PYPROJECT["project"]["optional-dependencies"].items()
    for requirement in requirements
]
# what `pip install kubegpu` does not bring
OPTIONAL = (
    "numpy",
    "matplotlib",
    "highspy",
    "starlette",
    "uvicorn",
    "lightkube",
    "httpx2",
    "httpcore2",
    "kubernetes_validate",
)
# blocked too when the base commands run: the webhook's metrics library, which the server extra brings
BLOCKED = (*OPTIONAL, "prometheus_client")


def _missing(name: str, command: str | None) -> str | None:
    problem = missing_extra(ModuleNotFoundError(f"No module named {name!r}", name=name), command, REQUIREMENTS)
    return None if problem is None else problem.extra


@pytest.mark.parametrize(
    ("module", "command", "extra"),
    [
        ("numpy", "simulate", "sim"),
        ("matplotlib.pyplot", "simulate", "sim"),
        ("numpy", "audit", "cluster"),
        ("lightkube", "audit", "cluster"),
        ("uvicorn", "webhook", "server"),
        ("starlette", "webhook", "server"),
        ("kubernetes_validate", "gen", "validate"),
        ("numpy", None, "sim"),
        ("yaml", "lint", None),  # a base dependency: a broken install, not a missing extra
        ("no_such_module", "simulate", None),
    ],
)
def test_missing_module_names_its_extra(module: str, command: str | None, extra: str | None) -> None:
    assert _missing(module, command) == extra


def test_every_optional_module_belongs_to_an_extra_and_base_needs_none() -> None:
    for module in OPTIONAL:
        assert extras_of_module(module, REQUIREMENTS), module
    base = " ".join(PYPROJECT["project"]["dependencies"]).lower()
    assert not any(name.replace("_", "-") in base for name in OPTIONAL)


def test_all_and_dev_pull_every_extra() -> None:
    extras = PYPROJECT["project"]["optional-dependencies"]
    assert extras["all"] == ["kubegpu[sim,server,cluster,validate,loadbench]"]
    assert "kubegpu[all]" in extras["dev"]


def _run_without(blocked: tuple[str, ...], *args: str, tmp: Path) -> subprocess.CompletedProcess[str]:
    code = (
        "import sys\n"
        f"for name in {blocked!r}: sys.modules[name] = None\n"
        f"sys.argv = ['kubegpu', *{list(args)!r}]\n"
        "from kubegpu.cli.entry import run\n"
        "run()\n"
    )
    return subprocess.run(
        [sys.executable, "-c", code], cwd=tmp, capture_output=True, text=True, timeout=120, check=False
    )


@pytest.mark.parametrize(
    ("args", "extra"),
    [
        (("simulate", "fgd-repro", "--seeds", "42"), "sim"),
        (("simulate", "--help"), "sim"),
        (("webhook", "serve", "--tls-cert", "c.pem", "--tls-key", "k.pem"), "server"),
        (("audit", "--snapshot", "cluster.json"), "cluster"),
    ],
)
def test_command_without_its_extra_is_one_line_exit_2(args: tuple[str, ...], extra: str, tmp_path: Path) -> None:
    (tmp_path / "cluster.json").write_text('{"kind": "List", "items": []}')
    result = _run_without(BLOCKED, *args, tmp=tmp_path)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert result.stderr.strip() == (
        f"kubegpu: error: `kubegpu {args[0]}` needs the optional '{extra}' dependencies: pip install 'kubegpu[{extra}]'"
    )


@pytest.mark.parametrize(
    "args",
    [
        ("--help",),
        ("--version",),
        ("lint", "examples/"),
        ("gen", "webhook"),
        ("gen", "probe-job"),
        ("gen", "audit-rbac"),
        ("nodes",),
        ("explain", "KG201"),
    ],
)
def test_base_commands_run_without_any_extra(args: tuple[str, ...]) -> None:
    result = _run_without(BLOCKED, *args, tmp=REPO_ROOT)
    assert result.returncode in (0, 1), (args, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
