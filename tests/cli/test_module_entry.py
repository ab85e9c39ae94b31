"""`python -m kubegpu` runs the same command line as the console script (exit codes included)."""

from __future__ import annotations

import subprocess
import sys

import kubegpu
from tests.paths import REPO_ROOT


def _module(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kubegpu", *args], capture_output=True, text=True, timeout=120, check=False
    )


def test_python_dash_m_prints_the_version() -> None:
    done = _module("--version")
    assert done.returncode == 0
    assert done.stdout.startswith("kubegpu ")


def test_python_dash_m_lints_and_keeps_exit_codes() -> None:
    examples = str(REPO_ROOT / "examples")
    assert _module("lint", examples, "--exit-zero").returncode == 0
    assert _module("lint", examples).returncode == 1  # the examples hold findings at the default --fail-on
    missing = _module("lint", str(REPO_ROOT / "no-such-dir"))
    assert missing.returncode == 2
    assert "no-such-dir" in missing.stdout + missing.stderr


def test_version_imports_no_command_module() -> None:
    """`--version` answers before any command is read: it builds no command (it took 0.8 s importing them all)."""
    probe = (
        "import sys; from kubegpu.cli.entry import run; sys.argv = ['kubegpu', '--version']\n"
        "try:\n    run()\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith('kubegpu.cli.') and m.rsplit('.', 1)[1] in "
        "('lint', 'fix', 'gen', 'simulate', 'webhook', 'probe')))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=False)
    assert done.stdout.splitlines() == [f"kubegpu {kubegpu.__version__}", "[]"], done.stderr


def test_help_with_version_still_lists_the_commands() -> None:
    done = _module("--help", "--version")
    assert done.returncode == 0
    assert "lint" in done.stdout and "simulate" in done.stdout
