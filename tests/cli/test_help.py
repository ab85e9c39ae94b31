"""Every command's --help shows its options as people type them: a switch takes no value, so it shows none."""

from __future__ import annotations

from typing import Any

from typer.main import get_command
from typer.testing import CliRunner

from kubegpu.cli.main import app

runner = CliRunner()


def _walk(command: Any, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    # typer vendors its own click, so commands are told apart by what they have, not by click's classes
    found = [(path, command)]
    for name, below in getattr(command, "commands", {}).items():
        found.extend(_walk(below, (*path, name)))
    return found


def test_no_switch_shows_a_value_in_help() -> None:
    commands = _walk(get_command(app))
    assert len(commands) > 20  # every command and subcommand
    for path, _ in commands:
        result = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "200"}, terminal_width=200)
        assert result.exit_code == 0, (path, result.output)
        assert "<bool>" not in result.output and "BOOLEAN" not in result.output, (path, result.output)


def test_switches_are_flags() -> None:
    switches = 0
    for path, command in _walk(get_command(app)):
        for param in getattr(command, "params", []):
            if getattr(param.type, "name", "") == "boolean" and param.param_type_name == "option":
                switches += 1
                assert param.is_flag, f"{' '.join(path)}: {param.opts} takes a value"
    assert switches > 10
