"""`kubegpu lint`, `kubegpu rules` and `kubegpu explain`: argument parsing only; the work is in rules/."""

# No `from __future__ import annotations` here: typer reads these signatures at every start, and string annotations
# cost it a compile and two evals each (3 % of the instructions of a one-file lint).

import json
from enum import StrEnum
from pathlib import Path
from typing import Annotated, TextIO

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
    parse_outputs,
    write_report_file,
)
from kubegpu.errors import KubegpuError
from kubegpu.lint import (
    LintConfig,
    LintResult,
    Severity,
    all_rules,
    find_config,
    find_rule,
    lint_paths,
    load_config,
)
from kubegpu.lint.config import did_you_mean, rule_names_option, split_rule_names
from kubegpu.lint.runner import NoInputError
from kubegpu.manifests.render import DEFAULT_RENDER_DEADLINE_S, DEFAULT_RENDER_TIMEOUT_S, HelmSettings
from kubegpu.report.escape import printable


class OutputFormat(StrEnum):
    text = "text"
    json = "json"
    sarif = "sarif"
    junit = "junit"
    github = "github"


def lint(
    paths: Annotated[list[str], typer.Argument(help="Files, directories (recursive) or - for stdin.")],
    outputs: Annotated[
        list[str] | None,
        typer.Option(
            "--format",
            "-o",
            metavar="FORMAT[=FILE]",
            help="Report format: text, json, sarif, junit or github; FORMAT=FILE writes it to FILE instead of the "
            "standard output (repeatable: -o sarif=results.sarif -o text).",
        ),
    ] = None,
    config_file: Annotated[Path | None, typer.Option("--config", help="kubegpu.toml or pyproject.toml.")] = None,
    select: Annotated[list[str] | None, typer.Option(help=SELECT_HELP)] = None,
    ignore: Annotated[list[str] | None, typer.Option(help=IGNORE_HELP)] = None,
    fail_on: Annotated[
        str | None, typer.Option(help="Exit 1 on findings at or above this severity: info, warning or error.")
    ] = None,
    exit_zero: Annotated[bool, typer.Option("--exit-zero", help="Exit 0 even with findings.")] = False,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="Print the findings only: no notices and no summary.")
    ] = False,
    baseline: Annotated[
        Path | None,
        typer.Option(
            "--baseline",
            metavar="FILE",
            help="Leave out the findings this baseline holds (written by --write-baseline): only new ones are "
            "reported and fail the run.",
        ),
    ] = None,
    write_baseline: Annotated[
        Path | None,
        typer.Option(
            "--write-baseline", metavar="FILE", help="Write the run's findings to FILE as a baseline, then exit 0."
        ),
    ] = None,
    exclude: Annotated[
        list[str] | None,
        typer.Option(
            "--exclude",
            metavar="GLOB",
            help="Leave out paths matching this gitignore-style pattern (repeatable); "
            "added to extend-exclude of the config.",
        ),
    ] = None,
    respect_gitignore: Annotated[
        bool | None,
        typer.Option(
            "--respect-gitignore/--no-respect-gitignore",
            help="Skip files that git ignores, inside a git work tree (default: on).",
        ),
    ] = None,
    force_exclude: Annotated[
        bool | None,
        typer.Option(
            "--force-exclude", help="Apply the excludes to files named on the command line too (for pre-commit)."
        ),
    ] = None,
    helm_values: Annotated[
        list[str] | None,
        typer.Option(
            "--helm-values", metavar="FILE", help="Values file for every chart rendered (`helm template --values`)."
        ),
    ] = None,
    helm_set: Annotated[
        list[str] | None,
        typer.Option("--helm-set", metavar="K=V", help="Value for every chart rendered (`helm template --set`)."),
    ] = None,
    allow_remote: Annotated[
        bool,
        typer.Option(
            "--allow-remote",
            help="Let kustomize fetch remote resources (URLs, git repositories) a kustomization names; "
            "without it they are refused with a notice and nothing reaches the network.",
        ),
    ] = False,
    no_render: Annotated[
        bool,
        typer.Option(
            "--no-render",
            help="Lint plain files only: no chart or kustomization is rendered (each is counted in a notice).",
        ),
    ] = False,
    render_timeout: Annotated[
        float,
        typer.Option(
            "--render-timeout", metavar="SECONDS", min=0.1, help="Longest one chart or kustomization may render."
        ),
    ] = DEFAULT_RENDER_TIMEOUT_S,
    render_deadline: Annotated[
        float,
        typer.Option(
            "--render-deadline",
            metavar="SECONDS",
            min=0.1,
            help="Longest all of a run's renders may take together; the rest are not rendered (an error each).",
        ),
    ] = DEFAULT_RENDER_DEADLINE_S,
    stdin_filename: Annotated[
        str | None, typer.Option("--stdin-filename", help="The name findings on standard input (-) carry.")
    ] = None,
    verbose: Annotated[
        bool,
        typer.Option(
            "--verbose",
            "-v",
            help="List what was skipped (non-Kubernetes files, unchecked kinds, patch fragments) and why, and "
            "each chart and kustomization rendered with its time.",
        ),
    ] = False,
    smt: Annotated[int | None, typer.Option(help="Threads per core of the target nodes.")] = None,
    max_file_size: Annotated[int | None, typer.Option(help="Largest input file in bytes.")] = None,
    jobs: Annotated[
        int,
        typer.Option(
            "--jobs",
            "-j",
            min=0,
            help="Processes to lint with (0: one per CPU when the input is over 512 KiB per "
            "process), and charts and kustomizations rendered at once (0: one per CPU). The findings are the same.",
        ),
    ] = 0,
    node: Annotated[
        str | None,
        typer.Option(
            "--node",
            help="Node preset (`kubegpu nodes`) or profile file: checks admission (gpu-pod-unadmittable), "
            "SMT alignment and node-specific kubelet settings.",
        ),
    ] = None,
    kubelet_config: Annotated[
        Path | None,
        typer.Option(
            "--kubelet-config",
            help="KubeletConfiguration of the --node nodes (default: the kubelet's defaults); the file is linted too.",
        ),
    ] = None,
) -> None:
    """Report what in the manifests starves or strands GPUs; charts and kustomizations are rendered first."""
    try:
        reports = parse_outputs(outputs or [], [f.value for f in OutputFormat])
        known = all_rules()
        selected = rule_names_option(select, known, "--select")
        ignored = rule_names_option(ignore, known, "--ignore")
        threshold = fail_on_severity(fail_on)
        found = config_file or find_config(Path(paths[0]) if paths and paths[0] != "-" else Path.cwd())
        config = load_config(found, known) if found else LintConfig()
        helm = (
            HelmSettings(values=tuple(helm_values or ()), set=tuple(helm_set or ()))
            if helm_values or helm_set
            else None
        )
        config = config.with_overrides(
            select=selected,
            ignore=ignored,
            fail_on=threshold,
            max_file_bytes=max_file_size,
            exclude=exclude or (),
            respect_gitignore=respect_gitignore,
            force_exclude=force_exclude,
            helm=helm,
            allow_remote=allow_remote,
            render_timeout=render_timeout,
            render_deadline=render_deadline,
            rendering=not no_render,
        )
        target = node_target(node, kubelet_config, smt)
        if kubelet_config is not None:
            paths = _with_file(paths, kubelet_config)
        progress = RenderProgress.on_terminal()
        try:
            result = lint_paths(
                paths,
                config,
                jobs=jobs,
                target=target,
                stdin_name=stdin_filename,
                keep_documents=False,
                progress=progress,
            )
        finally:
            if progress is not None:
                progress.close()
        if write_baseline is not None:
            from kubegpu.report.baseline import baseline_text

            write_report_file(write_baseline, baseline_text(result))
            typer.echo(f"kubegpu: wrote {len(result.findings)} finding(s) to the baseline {write_baseline}", err=True)
            raise typer.Exit(EXIT_OK)
        if baseline is not None:
            from kubegpu.report.baseline import read_baseline, without_baseline

            result, known_before = without_baseline(result, read_baseline(baseline))
            if known_before:
                result.notices.append(f"{known_before} finding(s) in the baseline {baseline} are not reported")
    except NoInputError as err:
        raise fail(str(err)) from err
    except KubegpuError as err:
        raise fail(err) from err
    if verbose:
        _list_renders(result)
    if not quiet:
        for notice in result.notices:
            typer.echo(printable(f"kubegpu: notice: {notice}"), err=True)
    try:
        for report in reports:
            _report(result, OutputFormat(report.format), report.file, config.fail_on, verbose, quiet)
    except KubegpuError as err:
        raise fail(err) from err
    for line in result.internal_errors:
        typer.echo(printable(f"kubegpu: {line}"), err=True)
    if result.internal_errors:
        raise typer.Exit(EXIT_INTERNAL)
    if result.unreadable:  # not one input could be read: no findings would mean nothing
        typer.echo("kubegpu: no input could be read (see the findings above): nothing was linted", err=True)
        raise typer.Exit(EXIT_USAGE)
    if result.failing(config.fail_on) and not exit_zero:
        raise typer.Exit(EXIT_FINDINGS)
    raise typer.Exit(EXIT_OK)


def _report(
    result: LintResult, output: OutputFormat, file: Path | None, fail_on: Severity, verbose: bool, quiet: bool
) -> None:
    """Print the result, or write it to `file`; each format's reporter is imported only when asked for (rich is
    slow to import)."""
    import io
    import sys

    buffer = io.StringIO() if file is not None else None
    write = buffer.write if buffer is not None else sys.stdout.write
    if output is OutputFormat.text:
        from kubegpu.report import findings_text

        if buffer is not None or not sys.stdout.isatty():  # CI logs, pipes, files: plain lines, never wrapped
            findings_text.write_text(result, write, verbose=verbose, summary=not quiet)
        else:
            from rich.console import Console

            findings_text.render_text(result, Console(soft_wrap=False), verbose=verbose, summary=not quiet)
    else:
        if verbose and file is None:
            for skipped in result.skipped:
                typer.echo(printable(f"kubegpu: skipped: {skipped.file}: {skipped.reason}"), err=True)
        if output is OutputFormat.json:
            from kubegpu.report.findings_json import write_json

            write_json(result, write)
            write("\n")
        elif output is OutputFormat.sarif:
            from kubegpu.report.findings_sarif import render_sarif

            write(render_sarif(result) + "\n")
        elif output is OutputFormat.junit:
            from kubegpu.report.findings_junit import render_junit

            write(render_junit(result, fail_on) + "\n")
        else:
            from kubegpu.report.findings_github import render_github

            write(render_github(result) + "\n")
    if buffer is not None and file is not None:
        write_report_file(file, buffer.getvalue())


def _list_renders(result: LintResult) -> None:
    """--verbose: each chart and kustomization rendered, its time and outcome, and those read through others."""
    for record in result.renders:
        cut = f", {record.objects_cut} object(s) of kinds no rule reads left out" if record.objects_cut else ""
        typer.echo(printable(f"kubegpu: {record.outcome}: {record.label} in {record.seconds:.2f} s{cut}"), err=True)
    for label, through in result.rendered_through:
        more = f" and {len(through) - 2} more" if len(through) > 3 else ""
        shown = ", ".join(through[:2] if more else through)
        typer.echo(printable(f"kubegpu: read through {shown}{more}: {label}"), err=True)


class RenderProgress:
    """The progress line of a run's renders on standard error, only when it is a terminal (never in CI logs)."""

    def __init__(self, stream: "TextIO") -> None:
        self._stream = stream
        self._shown = False

    @classmethod
    def on_terminal(cls) -> "RenderProgress | None":
        import sys

        return cls(sys.stderr) if sys.stderr.isatty() else None

    def __call__(self, done: int, total: int, label: str) -> None:
        line = printable(f"kubegpu: rendered {done}/{total}: {label}")[:100]
        self._stream.write(f"\r\x1b[2K{line}")
        self._stream.flush()
        self._shown = True

    def close(self) -> None:
        if self._shown:
            self._stream.write("\r\x1b[2K")
            self._stream.flush()


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
    """List every rule: code, name, practice area, severity and summary."""
    rules = all_rules()
    if output is not OutputFormat.text:
        typer.echo(
            json.dumps(
                [
                    {
                        "code": r.code,
                        "name": r.name,
                        "practice": r.practice,
                        "severity": r.severity.value,
                        "summary": r.summary,
                        "fixable": r.fixable,
                        "doc": r.doc_path,
                    }
                    for r in rules
                ],
                indent=2,
            )
        )
        return
    from rich.console import Console

    console = Console()
    for r in rules:
        fix = " (fix)" if r.fixable else ""
        console.print(
            f"[bold]{r.code}[/bold] {r.name:<34} {r.practice:<34} {r.severity.value:<8} {r.summary}{fix}",
            soft_wrap=True,
            markup=True,
            highlight=False,
        )


def explain(
    rules: Annotated[
        list[str], typer.Argument(help="Rule codes (KG101) or names (dshm-missing); several, or comma-separated.")
    ],
) -> None:
    """Print rules' documentation pages."""
    from kubegpu.lint.docs import rule_doc  # `explain` only: lint need not import it

    pages = []
    for key in split_rule_names(rules) or [", ".join(rules)]:
        found = find_rule(key)
        if found is None:
            hint = did_you_mean(key, all_rules()) or "; `kubegpu rules` lists them"
            raise fail(f"no rule named {key!r}{hint}")
        pages.append(rule_doc(found))
    typer.echo("\n".join(pages))


def register(app: typer.Typer, gen_app: typer.Typer) -> None:
    app.command("lint")(lint)
    app.command("rules")(rules_command)
    app.command("explain")(explain)
