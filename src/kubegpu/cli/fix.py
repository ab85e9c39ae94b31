"""`kubegpu fix`: argument parsing and output only; the engine is kubegpu.fix, the rules are kubegpu.rules."""

from __future__ import annotations

import difflib
import sys
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any

import typer

from kubegpu.cli.common import (
    EXIT_FINDINGS,
    EXIT_INTERNAL,
    EXIT_OK,
    EXIT_USAGE,
    IGNORE_HELP,
    SELECT_HELP,
    fail,
    fail_on_severity,
    node_target,
)
from kubegpu.errors import ConfigError, KubegpuError
from kubegpu.fix import FileOutcome, FindingLike, FixOptions, InputFile, fix_input, read_inputs, write_outcome
from kubegpu.fix.files import decode, encode, remove_leftovers
from kubegpu.lint import LintConfig, Rule, Severity, all_rules, find_config, lint_text, load_config
from kubegpu.lint.config import rule_names_option
from kubegpu.lint.engine import internal_error
from kubegpu.report.escape import printable
from kubegpu.ruleapi.options import OptionValueError

STDIN = "-"


def rule_options(rules: Sequence[Rule], queue: str | None, topology_level: str | None) -> dict[str, dict[str, Any]]:
    """Per-rule options from --queue and --topology-level, for every rule that declares such an option, checked by
    that option's declaration (a ConfigError names the command-line option)."""
    given = {"queue": ("--queue", queue), "topology-level": ("--topology-level", topology_level)}
    out: dict[str, dict[str, Any]] = {}
    for rule in rules:
        for option in rule.options:
            flag, value = given.get(option.name, ("", None))
            if value is None:
                continue
            try:
                out.setdefault(rule.name, {})[option.name] = option.check(value, flag)
            except OptionValueError as err:
                raise ConfigError(str(err)) from None
    return out


def _merge(base: Mapping[str, Mapping[str, Any]], extra: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    merged: dict[str, Any] = {name: dict(values) for name, values in base.items()}
    for name, values in extra.items():
        merged.setdefault(name, {}).update(values)
    return merged


def fix(
    paths: Annotated[list[str], typer.Argument(help="Files, directories (recursive) or - (stdin to stdout).")],
    diff: Annotated[bool, typer.Option("--diff", help="Print a unified diff; write nothing; exit 1 if any.")] = False,
    check: Annotated[bool, typer.Option("--check", help="Write nothing; exit 1 if anything would change.")] = False,
    unsafe_fixes: Annotated[
        bool, typer.Option("--unsafe-fixes", help="Also apply fixes that change scheduling or resources.")
    ] = False,
    config_file: Annotated[Path | None, typer.Option("--config", help="kubegpu.toml or pyproject.toml.")] = None,
    select: Annotated[list[str] | None, typer.Option(help=SELECT_HELP)] = None,
    ignore: Annotated[list[str] | None, typer.Option(help=IGNORE_HELP)] = None,
    queue: Annotated[str | None, typer.Option(help="Kueue LocalQueue name for fixes that add a queue label.")] = None,
    topology_level: Annotated[
        str | None, typer.Option(help="Topology level (node label key) for fixes that add a topology annotation.")
    ] = None,
    smt: Annotated[int | None, typer.Option(help="Threads per core of the target nodes.")] = None,
    node: Annotated[
        str | None, typer.Option("--node", help="Node preset (`kubegpu nodes`) or profile file, as in `kubegpu lint`.")
    ] = None,
    kubelet_config: Annotated[
        Path | None,
        typer.Option("--kubelet-config", help="KubeletConfiguration of the --node nodes, as in `kubegpu lint`."),
    ] = None,
    fail_on: Annotated[
        str | None, typer.Option(help="Exit 1 if findings at or above this remain: info, warning or error.")
    ] = None,
    exit_zero: Annotated[bool, typer.Option("--exit-zero", help="Exit 0 even if findings remain.")] = False,
    max_passes: Annotated[int, typer.Option(help="Fix-and-relint passes per file.", min=1, max=20)] = 5,
) -> None:
    """Apply rule fixes in place, keeping comments, key order, quoting, indentation and untouched documents."""
    try:
        config = _config(paths, config_file, select, ignore, fail_on, queue, topology_level)
        target = node_target(node, kubelet_config, smt)
    except KubegpuError as err:
        raise fail(err) from err
    options = FixOptions(unsafe=unsafe_fixes, max_passes=max_passes)

    def lint(name: str, text: str) -> Sequence[FindingLike]:
        result = lint_text(name, text, config, target)
        if result.internal_errors:
            raise _Internal(result.internal_errors[0])
        return result.findings

    write = not diff and not check
    items = _inputs(paths, config.max_file_bytes)
    if write:  # temp files of an earlier run killed mid-write
        _remove_leftovers(items)
    outcomes, internal = _fix_inputs(items, lint, options, write, diff)
    to_stderr = (write and any(item == STDIN for item in paths)) or diff
    _report(outcomes, write, check, unsafe_fixes, to_stderr)
    if internal:
        raise typer.Exit(EXIT_INTERNAL)
    if any(o.error is not None for o in outcomes):
        raise typer.Exit(EXIT_USAGE)
    if check or diff:
        raise typer.Exit(EXIT_FINDINGS if any(o.changed for o in outcomes) else EXIT_OK)
    failing = [r for o in outcomes for r in o.remaining if Severity(r.severity).rank >= config.fail_on.rank]
    raise typer.Exit(EXIT_FINDINGS if failing and not exit_zero else EXIT_OK)


def _config(
    paths: Sequence[str],
    config_file: Path | None,
    select: list[str] | None,
    ignore: list[str] | None,
    fail_on: str | None,
    queue: str | None,
    topology_level: str | None,
) -> LintConfig:
    """The lint configuration the fixes run with: the file found (or given), then the command line over it."""
    selected = rule_names_option(select, all_rules(), "--select")
    ignored = rule_names_option(ignore, all_rules(), "--ignore")
    found = config_file or find_config(Path(paths[0]) if paths and paths[0] != STDIN else Path.cwd())
    config = load_config(found, all_rules()) if found else LintConfig()
    config = config.with_overrides(select=selected, ignore=ignored, fail_on=fail_on_severity(fail_on))
    return replace(config, options=_merge(config.options, rule_options(all_rules(), queue, topology_level)))


def _remove_leftovers(items: Sequence[InputFile]) -> None:
    """Remove the temporary files an earlier run killed mid-write left beside the inputs."""
    for folder in dict.fromkeys(item.path.parent for item in items if item.path is not None):
        for leftover in remove_leftovers(folder):
            typer.echo(printable(f"kubegpu: removed {leftover}, left by an interrupted fix"), err=True)


def _fix_inputs(
    items: Sequence[InputFile],
    lint: Callable[[str, str], Sequence[FindingLike]],
    options: FixOptions,
    write: bool,
    diff: bool,
) -> tuple[list[FileOutcome], list[str]]:
    """Fix each input (written, printed or diffed as asked); the outcomes and the internal errors met."""
    outcomes: list[FileOutcome] = []
    internal: list[str] = []
    for item in items:
        try:
            outcome = fix_input(item, lint, options)
        except Exception as err:  # a bug, not the input's fault: this file is left alone, the others go on
            message = str(err) if isinstance(err, _Internal) else internal_error(item.name, err)
            internal.append(message)
            outcomes.append(FileOutcome(item.name, item.text or "", item.text or "", error=message))
            continue
        outcomes.append(outcome)
        if item.path is None:
            if write:
                sys.stdout.buffer.write(encode(outcome.fixed, item.bom))
                sys.stdout.flush()
        elif write:
            try:
                write_outcome(item, outcome)
            except KubegpuError as err:
                typer.echo(printable(f"kubegpu: error: {err}"), err=True)
                outcomes[-1] = replace(outcome, error=str(err), fixed=outcome.original)
        if diff and outcome.changed and outcome.error is None:
            typer.echo("".join(unified_diff(outcome)), nl=False)
    return outcomes, internal


class _Internal(Exception):
    """lint met a kubegpu bug in this file (its message is the one line to print)."""


def _inputs(paths: Sequence[str], max_bytes: int) -> list[InputFile]:
    items: list[InputFile] = []
    seen: set[tuple[int, int]] = set()  # a file named twice, or inside two folders named, is fixed once
    for raw in paths:
        if raw == STDIN:
            data = sys.stdin.buffer.read(max_bytes + 1)
            if len(data) > max_bytes:
                items.append(InputFile("<stdin>", None, None, error=f"over the {max_bytes}-byte limit"))
                continue
            try:
                text, bom = decode(data)
            except UnicodeDecodeError as err:
                items.append(InputFile("<stdin>", None, None, error=f"not UTF-8 text ({err.reason})"))
                continue
            items.append(InputFile("<stdin>", None, text, bom))
        elif not Path(raw).exists():
            items.append(InputFile(raw, Path(raw), None, error="no such file or directory"))
        else:
            items.extend(read_inputs([raw], max_bytes, seen))
    return items


def unified_diff(outcome: FileOutcome) -> list[str]:
    """The change to one file as a unified diff (a/ and b/ prefixes, like git). The file's name is printable (a
    name with a newline cannot add lines); its lines are printed as they are, as git diff prints them."""
    name = printable(outcome.name.lstrip("/"))
    lines = list(
        difflib.unified_diff(
            outcome.original.splitlines(keepends=True),
            outcome.fixed.splitlines(keepends=True),
            f"a/{name}",
            f"b/{name}",
        )
    )
    return [line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines]


def _dropped_note(texts: Sequence[str]) -> str:
    """What the summary adds when a fix removed trailing comments from the lines it rewrote."""
    if not texts:
        return ""
    quoted = ", ".join(f"'{t}'" for t in dict.fromkeys(texts))
    return f" (removed the comment {quoted} from the line it changed: it described the old value)"


def _report(outcomes: Sequence[FileOutcome], write: bool, check: bool, unsafe: bool, to_stderr: bool) -> None:
    """Per file: what was (or would be) fixed, what remains and why; then one summary line."""
    verb = "fixed" if write else "would fix"
    applied_total = files_changed = withheld = 0
    remaining_total = 0
    for outcome in outcomes:
        if outcome.error is not None:
            typer.echo(printable(f"{outcome.name}: not fixed: {outcome.error}"), err=True)
        if outcome.changed and outcome.error is None:
            files_changed += 1
            counts = Counter((a.code, a.name, a.description) for a in outcome.applied)
            dropped: dict[tuple[str, str, str], list[str]] = {}
            for a in outcome.applied:
                dropped.setdefault((a.code, a.name, a.description), []).extend(a.dropped_comments)
            applied_total += len(counts)
            typer.echo(printable(f"{outcome.name}: {verb}:"), err=to_stderr)
            for key in counts:
                code, name, description = key
                typer.echo(printable(f"  {code} {name}: {description}{_dropped_note(dropped[key])}"), err=to_stderr)
        for rest in outcome.remaining:
            remaining_total += 1
            withheld += rest.reason.startswith("unsafe fix withheld")
            typer.echo(
                printable(f"{outcome.name}:{rest.line}: {rest.code} {rest.name}: {rest.message} [{rest.reason}]"),
                err=to_stderr,
            )
        if not outcome.converged:
            typer.echo(printable(f"{outcome.name}: fixes did not settle within {outcome.passes} passes"), err=to_stderr)
    summary = f"{applied_total} fix(es) {'applied' if write else 'to apply'} in {files_changed} file(s)"
    summary += f"; {remaining_total} finding(s) remain"
    if withheld and not unsafe:
        summary += f" ({withheld} with an unsafe fix: use --unsafe-fixes)"
    typer.echo(summary, err=to_stderr)


def register(app: typer.Typer, gen_app: typer.Typer) -> None:
    app.command("fix")(fix)
