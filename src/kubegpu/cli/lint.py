"""`kubegpu lint`, `kubegpu rules` and `kubegpu explain`: argument parsing only; the work is in rules/."""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from kubegpu.cli.common import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, fail, node_target
from kubegpu.errors import KubegpuError
from kubegpu.rules import (
    LintConfig,
    LintResult,
    Severity,
    all_rules,
    find_config,
    find_rule,
    lint_paths,
    load_config,
)
from kubegpu.rules.docs import rule_doc


class OutputFormat(StrEnum):
    text = "text"
    json = "json"
    sarif = "sarif"
    junit = "junit"
    github = "github"


def lint(
    paths: Annotated[list[str], typer.Argument(help="Files, directories (recursive) or - for stdin.")],
    output: Annotated[OutputFormat, typer.Option("--format", "-o", help="Report format.")] = OutputFormat.text,
    config_file: Annotated[Path | None, typer.Option("--config", help="kubegpu.toml or pyproject.toml.")] = None,
    select: Annotated[list[str] | None, typer.Option(help="Only these rules (codes by prefix, or names).")] = None,
    ignore: Annotated[list[str] | None, typer.Option(help="Skip these rules (codes by prefix, or names).")] = None,
    fail_on: Annotated[Severity | None, typer.Option(help="Exit 1 on findings at or above this severity.")] = None,
    exit_zero: Annotated[bool, typer.Option("--exit-zero", help="Exit 0 even with findings.")] = False,
    smt: Annotated[int | None, typer.Option(help="Threads per core of the target nodes.")] = None,
    max_file_size: Annotated[int | None, typer.Option(help="Largest input file in bytes.")] = None,
    jobs: Annotated[int, typer.Option(
        "--jobs", "-j", min=0, help="Processes to lint with (0: one per CPU when the input is over 512 KiB per "
        "process). The findings are the same.")] = 0,
    node: Annotated[str | None, typer.Option(
        "--node", help="Node preset (`kubegpu nodes`) or profile file: checks admission (gpu-pod-unadmittable), "
        "SMT alignment and node-specific kubelet settings.")] = None,
    kubelet_config: Annotated[Path | None, typer.Option(
        "--kubelet-config", help="KubeletConfiguration of the --node nodes (default: the kubelet's defaults); "
        "the file is linted too.")] = None,
) -> None:
    """Report what in the manifests starves or strands GPUs (seed section 13)."""
    try:
        found = config_file or find_config(Path(paths[0]) if paths and paths[0] != "-" else Path.cwd())
        config = load_config(found, all_rules()) if found else LintConfig()
        config = config.with_overrides(select=select, ignore=ignore, fail_on=fail_on, max_file_bytes=max_file_size)
        target = node_target(node, kubelet_config, smt)
        if kubelet_config is not None:
            paths = _with_file(paths, kubelet_config)
        result = lint_paths(paths, config, jobs=jobs, target=target)
    except KubegpuError as err:
        raise fail(err) from err
    _report(result, output)
    if result.unreadable:
        raise typer.Exit(EXIT_USAGE)
    if result.failing(config.fail_on) and not exit_zero:
        raise typer.Exit(EXIT_FINDINGS)
    raise typer.Exit(EXIT_OK)


def _report(result: LintResult, output: OutputFormat) -> None:
    """Print the result; each format's reporter is imported only when asked for (rich is slow to import)."""
    if output is OutputFormat.text:
        from rich.console import Console

        from kubegpu.report import findings_text

        findings_text.render_text(result, Console(soft_wrap=False))
        return
    if output is OutputFormat.json:
        from kubegpu.report.findings_json import render_json as render
    elif output is OutputFormat.sarif:
        from kubegpu.report.findings_sarif import render_sarif as render
    elif output is OutputFormat.junit:
        from kubegpu.report.findings_junit import render_junit as render
    else:
        from kubegpu.report.findings_github import render_github as render
    typer.echo(render(result))


def _with_file(paths: list[str], extra: Path) -> list[str]:
    """`paths` plus `extra`, unless one of them already names it or a folder above it."""
    target = extra.resolve()
    for item in paths:
        if item == "-":
            continue
        given = Path(item).resolve()
        if given == target or given in target.parents:
            return paths
    return [*paths, str(extra)]


def rules_command(
    output: Annotated[OutputFormat, typer.Option("--format", "-o")] = OutputFormat.text,
) -> None:
    """List every rule: code, name, seed section, severity and summary."""
    rules = all_rules()
    if output is not OutputFormat.text:
        typer.echo(json.dumps([
            {"code": r.code, "name": r.name, "section": r.section, "severity": r.severity.value,
             "summary": r.summary, "fixable": r.fixable, "doc": r.doc_path} for r in rules
        ], indent=2))
        return
    from rich.console import Console

    console = Console()
    for r in rules:
        fix = " (fix)" if r.fixable else ""
        console.print(f"[bold]{r.code}[/bold] {r.name:<34} {r.section:<6} {r.severity.value:<8} {r.summary}{fix}",
                      soft_wrap=True, markup=True, highlight=False)


def explain(rule: Annotated[str, typer.Argument(help="A rule code (KG101) or name (dshm-missing).")]) -> None:
    """Print a rule's documentation page."""
    found = find_rule(rule)
    if found is None:
        raise fail(f"no rule named {rule!r}; `kubegpu rules` lists them")
    typer.echo(rule_doc(found))


def register(app: typer.Typer, gen_app: typer.Typer) -> None:
    app.command("lint")(lint)
    app.command("rules")(rules_command)
    app.command("explain")(explain)
