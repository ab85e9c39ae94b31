"""How the command line ends: os._exit only for the commands where it was measured to matter (lint)."""

from __future__ import annotations

import pytest
import typer

from kubegpu.cli import common


class _FastExit(Exception):
    def __init__(self, code: int) -> None:
        self.code = code


def _app() -> typer.Typer:
    app = typer.Typer()

    @app.command()
    def done() -> None:
        raise typer.Exit(1)

    return app


def _raise_fast_exit(code: int) -> None:
    raise _FastExit(code)


def test_normal_commands_exit_through_the_interpreter(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(common.os, "_exit", _raise_fast_exit)
    monkeypatch.setattr("sys.argv", ["kubegpu"])
    with pytest.raises(SystemExit) as done:
        common.run_app(_app(), "kubegpu")
    assert done.value.code == 1


def test_fast_exit_keeps_the_exit_code(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(common.os, "_exit", _raise_fast_exit)
    monkeypatch.setattr("sys.argv", ["kubegpu"])
    with pytest.raises(_FastExit) as done:
        common.run_app(_app(), "kubegpu", fast_exit=True)
    assert done.value.code == 1


@pytest.mark.parametrize(
    ("argv", "fast"),
    [
        (["lint", "x.yaml"], True),
        (["--no-color", "lint", "x.yaml"], True),
        (["webhook", "serve"], False),
        (["fix", "x.yaml"], False),
        ([], False),
    ],
)
def test_only_lint_ends_with_os_exit(argv: list[str], fast: bool) -> None:
    assert (common.command_of(argv) in common.FAST_EXIT_COMMANDS) is fast
