"""`python -m kubegpu` runs the same command line as the console script (exit codes included)."""

from __future__ import annotations

import subprocess
import sys

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
