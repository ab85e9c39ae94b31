"""What every command shares: turning a KubegpuError into one line and exit 2, output helpers."""

from __future__ import annotations

import difflib
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from kubegpu.errors import ConfigError, InputError, KubegpuError
from kubegpu.report.escape import printable

if TYPE_CHECKING:
    from kubegpu.lint import NodeTarget, Severity

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3  # a kubegpu bug: "internal error while reading FILE"; the other files' results are still printed

# --select and --ignore of every command: each value is a comma-separated list, and the option repeats (as in ruff).
SELECT_HELP = "Only these rules: codes by prefix, or names; comma-separated, repeatable (--select KG1,dshm-missing)."
IGNORE_HELP = "Skip these rules: codes by prefix, or names; comma-separated, repeatable (--ignore KG4,KG002)."


def fail(error: KubegpuError | str) -> typer.Exit:
    """Print a user error as one line on stderr and return the Exit to raise (code 2)."""
    typer.echo(printable(f"kubegpu: error: {error}"), err=True)
    return typer.Exit(EXIT_USAGE)


# Commands that end with os._exit once their output is flushed: measured on `kubegpu lint` of 2000 workloads,
# where tearing down the interpreter (freeing every parsed document object by object) took longer than the lint.
# Never a long-running server (the webhook), which must shut down normally.
FAST_EXIT_COMMANDS = frozenset({"lint"})


def positive_ints(text: str, option: str) -> tuple[int, ...]:
    """`1,4,16` given to `option` -> (1, 4, 16); InputError unless every item is a whole number of at least 1."""
    try:
        values = tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise InputError(f"{option} must be comma-separated whole numbers, not {text!r}") from None
    if not values or any(v < 1 for v in values):
        raise InputError(f"{option} must list numbers of at least 1, not {text!r}")
    return values


def fail_on_severity(value: str | None) -> Severity | None:
    """--fail-on's value, or a ConfigError with the close match ("did you mean error?")."""
    from kubegpu.lint import Severity

    if value is None:
        return None
    try:
        return Severity(value.lower())
    except ValueError:
        close = difflib.get_close_matches(value.lower(), [s.value for s in Severity], n=1)
        hint = f"; did you mean {close[0]}?" if close else ""
        raise ConfigError(f"--fail-on {value!r} is not one of info, warning, error{hint}") from None


def command_of(argv: list[str]) -> str:
    """The command word of a command line (its first word that is not an option), or ''."""
    return next((word for word in argv if not word.startswith("-")), "")


def run_app(app: typer.Typer, prog: str, fast_exit: bool = False, command: str = "") -> None:
    """Run the app and exit; a KubegpuError escaping a command is reported without a traceback, and so is
    a missing optional dependency (which extra of `command` to install).

    With `fast_exit` (FAST_EXIT_COMMANDS only) the process ends with os._exit once output is flushed,
    skipping the interpreter's teardown; otherwise it exits normally.
    """
    code: int = EXIT_OK
    try:
        app(prog_name=prog, standalone_mode=True)
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else (0 if done.code is None else EXIT_USAGE)
        if isinstance(done.code, str):
            typer.echo(done.code, err=True)
    except KubegpuError as err:  # a command forgot to catch it: still one line, exit 2
        typer.echo(printable(f"kubegpu: error: {err}"), err=True)
        code = EXIT_USAGE
    except ModuleNotFoundError as err:
        from kubegpu.cli.extras import missing_extra  # only when a module is missing

        problem = missing_extra(err, command or None)
        if problem is None:
            raise
        typer.echo(f"kubegpu: error: {problem}", err=True)
        code = EXIT_USAGE
    except typer.Abort:
        code = 130
    except Exception as err:  # a bug that escaped a command: one line and its own exit code, not 1 ("findings")
        typer.echo(printable(f"kubegpu: internal error: {type(err).__name__}: {err}"), err=True)
        code = EXIT_INTERNAL
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (BrokenPipeError, OSError):  # `kubegpu lint … | head`: the reader left
        code = code or EXIT_OK
        devnull = os.open(os.devnull, os.O_WRONLY)  # nothing more to say: keep the final flush quiet
        os.dup2(devnull, sys.stdout.fileno())
    if fast_exit:
        os._exit(code)
    sys.exit(code)


def node_target(node: str | None, kubelet_config: Path | None, smt: int | None) -> NodeTarget:
    """The node `lint` and `fix` check against: --node (preset or profile), --kubelet-config (read by the one
    KubeletConfiguration reader) and --smt."""
    from kubegpu.lint import NodeTarget

    if kubelet_config is not None and node is None:
        raise typer.BadParameter("--kubelet-config describes the kubelet of the --node nodes; give --node too")
    topology = None
    if node is not None:
        from kubegpu.topology.presets import load_node

        topology = load_node(node)
    config = None
    if kubelet_config is not None:
        from kubegpu.kubelet.config import read_kubelet_config_data

        config = read_kubelet_config_data(str(kubelet_config))
    return NodeTarget(topology, config, smt)


@dataclass(frozen=True)
class ReportOutput:
    """One `-o FORMAT[=FILE]`: the format, and the file it goes to (None: the standard output)."""

    format: str
    file: Path | None


def parse_outputs(values: list[str], formats: list[str]) -> list[ReportOutput]:
    """`-o sarif=results.sarif -o text` as reports to write; text to the standard output when none is given. At
    most one report goes to the standard output, and one file takes one report; ConfigError otherwise."""
    reports: list[ReportOutput] = []
    for value in values or [formats[0]]:
        name, eq, file = value.partition("=")
        if name not in formats:
            raise ConfigError(f"-o {value!r}: the format is one of {', '.join(formats)} (FORMAT or FORMAT=FILE)")
        if eq and not file:
            raise ConfigError(f"-o {value!r}: name the file after '=' (for instance -o {name}=report.{name})")
        reports.append(ReportOutput(name, Path(file) if eq else None))
    if sum(1 for r in reports if r.file is None) > 1:
        raise ConfigError("only one -o may print to the standard output: give the others a file (-o FORMAT=FILE)")
    files = [os.path.abspath(r.file) for r in reports if r.file is not None]
    if len(files) != len(set(files)):
        raise ConfigError("two -o options name the same file")
    return reports


def write_report_file(path: Path, text: str) -> None:
    """Write a report to `path` whole or not at all (a temporary file renamed over it); InputError on failure."""
    from kubegpu.manifests.atomic import write_atomic

    write_atomic(path, text)
