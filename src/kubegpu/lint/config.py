"""Lint configuration: `kubegpu.toml` or `[tool.kubegpu]` in pyproject.toml, merged with CLI flags.

Select/ignore match rule codes by prefix (`KG1` selects KG101…) and names exactly, as ruff users expect.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from kubegpu.errors import ConfigError
from kubegpu.manifests.render import HelmSettings, RenderOptions, namespace_problem, release_problem, set_problem
from kubegpu.manifests.resources import DEFAULT_ACCELERATOR_RESOURCES
from kubegpu.manifests.roots import Root
from kubegpu.manifests.selection import Selection
from kubegpu.ruleapi import Rule, Severity
from kubegpu.ruleapi.options import OptionValueError, toml_text

CONFIG_FILE = "kubegpu.toml"
MAX_CONFIGURED_FILE_BYTES = 64 * 1024 * 1024
"""The largest max-file-size a configuration file may set: the file is the repository's, and every file read and
every render's output may take that much memory (several times that once parsed)."""
_EXAMPLES = {
    "select": '"KG1", "dshm-missing"',
    "ignore": '"KG002"',
    "accelerator-resources": '"nvidia.com/gpu"',
    "extend-accelerator-resources": '"example.com/tpu"',
    "extend-exclude": '"legacy/"',
}

_MOST_SUGGESTED = 6  # rules named in one suggestion


@dataclass(frozen=True)
class LintConfig:
    """Which rules run, at which severity, with which options."""

    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    severity: Mapping[str, Severity] = field(default_factory=dict)
    options: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    fail_on: Severity = Severity.WARNING
    accelerator_resources: tuple[str, ...] = DEFAULT_ACCELERATOR_RESOURCES
    max_file_bytes: int = 20 * 1024 * 1024
    source: str | None = None
    selection: Selection = field(default_factory=Selection)  # which files are read
    render: RenderOptions = field(default_factory=RenderOptions)  # how charts are rendered

    def __post_init__(self) -> None:
        # However the configuration was built (a file, the command line, the Python API), rules read checked options.
        if self.options:
            from kubegpu.lint.registry import all_rules  # the registry imports every rule module

            object.__setattr__(self, "options", checked_options(self.options, all_rules(), self.source))

    def enabled(self, rule: Rule) -> bool:
        if self.select and not _matches(rule, self.select):
            return False
        return not _matches(rule, self.ignore)

    def severity_of(self, rule: Rule) -> Severity:
        for key in (rule.code, rule.name):
            if key in self.severity:
                return self.severity[key]
        return rule.severity

    def with_overrides(
        self,
        select: Sequence[str] | None = None,
        ignore: Sequence[str] | None = None,
        extend_ignore: Sequence[str] = (),
        fail_on: Severity | None = None,
        max_file_bytes: int | None = None,
        exclude: Sequence[str] = (),
        respect_gitignore: bool | None = None,
        force_exclude: bool | None = None,
        helm: HelmSettings | None = None,
        allow_remote: bool | None = None,
        render_timeout: float | None = None,
        render_deadline: float | None = None,
        rendering: bool = True,
    ) -> LintConfig:
        """CLI flags win over the file: --select replaces, --ignore and --exclude add. Whether remote resources
        are fetched and how long renders may take are the command line's alone (the file is the repository's)."""
        selection = replace(
            self.selection,
            exclude=(*self.selection.exclude, *exclude),
            respect_gitignore=self.selection.respect_gitignore if respect_gitignore is None else respect_gitignore,
            force_exclude=self.selection.force_exclude if force_exclude is None else force_exclude,
        )
        render = self.render if helm is None else replace(self.render, helm=self.render.helm.merged(helm))
        render = replace(
            render,
            allow_remote=render.allow_remote if allow_remote is None else allow_remote,
            timeout_s=render.timeout_s if render_timeout is None else render_timeout,
            deadline_s=render.deadline_s if render_deadline is None else render_deadline,
            enabled=render.enabled and rendering,
        )
        return replace(
            self,
            select=tuple(select) if select else self.select,
            ignore=(*self.ignore, *(ignore or ()), *extend_ignore),
            fail_on=fail_on or self.fail_on,
            max_file_bytes=max_file_bytes or self.max_file_bytes,
            selection=selection,
            render=render,
        )


def _matches(rule: Rule, patterns: Iterable[str]) -> bool:
    for pattern in patterns:
        if pattern == "ALL" or rule.name == pattern or rule.code.startswith(pattern.upper()):
            return True
    return False


def find_config(start: Path) -> Path | None:
    """The nearest kubegpu.toml, or pyproject.toml with [tool.kubegpu], from `start` upwards."""
    directory = start if start.is_dir() else start.parent
    for folder in (directory.resolve(), *directory.resolve().parents):
        candidate = folder / CONFIG_FILE
        if candidate.is_file():
            return candidate
        pyproject = folder / "pyproject.toml"
        if pyproject.is_file() and "[tool.kubegpu" in _config_text(pyproject, errors="replace"):
            return pyproject
    return None


_CONFIG_BYTES = 4 * 1024 * 1024  # a configuration file larger than this is refused (pyproject.toml included)


def _config_text(path: Path, errors: str = "strict") -> str:
    """The text of a configuration file, at most _CONFIG_BYTES of a regular file; "" when it cannot be read
    (`errors="replace"`), else the OSError or UnicodeDecodeError."""
    from kubegpu.manifests.regular_file import NotReadable, read_regular

    try:
        return read_regular(path, _CONFIG_BYTES).decode("utf-8", errors)
    except OSError as err:
        if errors == "replace":
            return ""
        if isinstance(err, NotReadable):  # its words name --max-file-size, which is not this file's limit
            raise NotReadable(str(err).split(" (raise it")[0]) from None
        raise


def load_config(path: Path | None, known_rules: Sequence[Rule]) -> LintConfig:
    """Read and check a config file; unknown rules, severities or keys are errors naming the file."""
    if path is None:
        return LintConfig()
    import tomllib  # only runs with a config file parse TOML: its import was 2 % of a one-file lint's instructions

    try:
        text = _config_text(path)
        raw = tomllib.loads(text)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as err:
        raise ConfigError(f"cannot read configuration: {err}", file=str(path)) from err
    table: Any = raw
    prefix: tuple[str, ...] = ()
    if path.name == "pyproject.toml":
        table = raw.get("tool", {}).get("kubegpu", {})
        prefix = ("tool", "kubegpu")
    if not isinstance(table, dict):
        from kubegpu.lint.config_lines import key_line

        raise ConfigError("[tool.kubegpu] must be a table", file=str(path), line=key_line(text, prefix))
    return parse_config(table, str(path), known_rules, text, prefix)


def parse_config(
    table: Mapping[str, Any],
    source: str,
    known_rules: Sequence[Rule],
    text: str | None = None,
    prefix: tuple[str, ...] = (),
) -> LintConfig:
    """Check a configuration table; `text` (the file, whose table is at `prefix`) lets errors name lines."""
    allowed = {
        "select",
        "ignore",
        "severity",
        "rules",
        "fail-on",
        "accelerator-resources",
        "extend-accelerator-resources",
        "max-file-size",
        "extend-exclude",
        "respect-gitignore",
        "force-exclude",
        "helm",
    }
    names = {r.name: r for r in known_rules} | {r.code: r for r in known_rules}

    def error(message: str, *key: str) -> ConfigError:
        """A ConfigError at the line of `key` (a path of table names and a key) when the file shows it."""
        from kubegpu.lint.config_lines import key_line  # read only for an error

        return ConfigError(message, file=source, line=None if text is None else key_line(text, (*prefix, *key)))

    for key in table:
        if key not in allowed:
            close = difflib.get_close_matches(str(key), sorted(allowed), n=1)
            hint = f"did you mean {close[0]}?" if close else f"known: {', '.join(sorted(allowed))}"
            raise error(f"unknown setting {key!r}; {hint}", str(key))

    def strings(key: str) -> tuple[str, ...]:
        value = table.get(key, [])
        rules = key in ("select", "ignore")
        if isinstance(value, str):
            items = split_rule_names([value]) if rules else [value]
            shown = ", ".join(f'"{item}"' for item in items)
            raise error(f"'{key}' must be a list of strings, not a string: write {key} = [{shown}]", key)
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            example = _EXAMPLES.get(key, '"…"')
            raise error(f"'{key}' must be a list of strings, like {key} = [{example}]", key)
        for item in value if rules else ():
            if not is_rule_pattern(item, known_rules):
                hint = did_you_mean(item, known_rules)
                if "," in item:
                    shown = ", ".join(f'"{part}"' for part in split_rule_names([item]))
                    hint = f"; one rule per item: write {key} = [{shown}]"
                raise error(f"'{key}' names unknown rule {item!r}{hint}", key)
        return tuple(value)

    severity: dict[str, Severity] = {}
    severity_table = table.get("severity", {})
    if not isinstance(severity_table, dict):
        raise error(
            '[severity] must be a table of rule to severity, like [severity] image-tag-mutable = "info"', "severity"
        )
    for key, value in severity_table.items():
        if key not in names:
            raise error(f"[severity] names unknown rule {key!r}{did_you_mean(key, known_rules)}", "severity", key)
        try:
            severity[key] = _severity(value, source)
        except ConfigError as err:
            raise error(f"[severity] {key}: {err.message}", "severity", key) from None
    rule_tables = table.get("rules") or {}
    if not isinstance(rule_tables, dict):
        raise error("[rules] must be a table of [rules.<rule name>] tables", "rules")
    options: dict[str, Mapping[str, Any]] = {}
    for key, value in rule_tables.items():
        try:
            name, checked = _rule_options(key, value, known_rules)
        except _OptionProblem as problem:
            raise error(str(problem), "rules", *problem.path) from None
        options[name] = checked
    accelerators = DEFAULT_ACCELERATOR_RESOURCES
    if "accelerator-resources" in table:
        accelerators = strings("accelerator-resources")
    accelerators = (*accelerators, *strings("extend-accelerator-resources"))
    max_bytes = table.get("max-file-size", 20 * 1024 * 1024)
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes <= 0:
        raise error(
            f"'max-file-size' must be a positive whole number of bytes, like max-file-size = 20971520; "
            f"got {toml_text(max_bytes)}",
            "max-file-size",
        )
    if max_bytes > MAX_CONFIGURED_FILE_BYTES:
        raise error(
            f"'max-file-size' is at most {MAX_CONFIGURED_FILE_BYTES} bytes in a configuration file (a repository's "
            f"file cannot lift the bound on memory); got {max_bytes}; --max-file-size on the command line can",
            "max-file-size",
        )
    base = Path(source).parent
    flags: dict[str, Any] = {}
    for key in ("respect-gitignore", "force-exclude"):
        flags[key] = table.get(key, key == "respect-gitignore")
        if not isinstance(flags[key], bool):
            raise error(f"'{key}' must be true or false; got {toml_text(flags[key])}", key)
    try:
        render = _render_options(table.get("helm", {}), base)
    except _OptionProblem as problem:
        raise error(str(problem), "helm", *problem.path) from None
    try:
        fail_on = _severity(table.get("fail-on", "warning"), source)
    except ConfigError as err:
        raise error(f"'fail-on': {err.message}", "fail-on") from None
    selection = Selection(
        exclude=strings("extend-exclude"),
        root=base,
        respect_gitignore=flags["respect-gitignore"],
        force_exclude=flags["force-exclude"],
    )
    return LintConfig(
        selection=selection,
        render=render,
        select=strings("select"),
        ignore=strings("ignore"),
        severity=severity,
        options=options,
        fail_on=fail_on,
        accelerator_resources=tuple(accelerators),
        max_file_bytes=max_bytes,
        source=source,
    )


class _OptionProblem(ValueError):
    """A rule option table that is wrong, and the keys under [rules] that lead to the wrong value."""

    def __init__(self, message: str, *path: str) -> None:
        super().__init__(message)
        self.path = path


def _rule_options(key: str, value: Any, known_rules: Sequence[Rule]) -> tuple[str, dict[str, Any]]:
    """`[rules.<key>]` checked against the options the rule declares: (the rule's name, its checked values)."""
    rule = next((r for r in known_rules if key in (r.name, r.code)), None)
    if rule is None:
        raise _OptionProblem(f"[rules.{key}]: no rule is named {key!r}{did_you_mean(key, known_rules)}", key)
    if not isinstance(value, Mapping):
        raise _OptionProblem(f"[rules.{key}] must be a table of the rule's options, not {toml_text(value)}", key)
    checked: dict[str, Any] = {}
    for name, raw in value.items():
        option = rule.option(str(name))
        if option is None:
            known = ", ".join(o.name for o in rule.options) or "none"
            raise _OptionProblem(f"[rules.{key}]: {rule.name} has no option {name!r}; its options: {known}", key, name)
        try:
            checked[name] = option.check(raw, f"[rules.{key}] {name}")
        except OptionValueError as err:
            raise _OptionProblem(str(err), key, name) from None
    return rule.name, checked


def checked_options(
    options: Mapping[str, Any], known_rules: Sequence[Rule], source: str | None
) -> dict[str, Mapping[str, Any]]:
    """Per-rule option values (keyed by rule name or code) checked by each option's declaration, keyed by name;
    a ConfigError names `source`, the rule, the option and what is expected."""
    checked: dict[str, Mapping[str, Any]] = {}
    for key, value in options.items():
        try:
            name, values = _rule_options(str(key), value, known_rules)
        except _OptionProblem as problem:
            raise ConfigError(str(problem), file=source) from None
        checked[name] = {**checked.get(name, {}), **values}
    return checked


def _severity(value: Any, source: str) -> Severity:
    try:
        return Severity(str(value))
    except ValueError as err:
        raise ConfigError(f"severity {value!r} is not one of info, warning, error", file=source) from err


def _render_options(table: Any, base: Path) -> RenderOptions:
    """`[helm]` (values, set, release, namespace for every chart) and `[helm.charts."path"]` (one chart).

    The configuration is the repository's, so it is data only: names are checked as helm checks them, `set`
    pairs are key=value, and values files must be regular files under the configuration's folder."""
    if not isinstance(table, dict):
        raise _OptionProblem("[helm] must be a table")
    charts: dict[Path, HelmSettings] = {}
    chart_tables = table.get("charts", {})
    if not isinstance(chart_tables, dict):
        raise _OptionProblem('[helm.charts] must be a table of chart folders, like [helm.charts."charts/app"]')
    root = Root.of(base)
    for folder, settings in chart_tables.items():
        chart = (base / folder).resolve()
        charts[chart] = _helm_settings(settings, chart, f"[helm.charts.{folder!r}]", root, ("charts", folder))
    every = {k: v for k, v in table.items() if k != "charts"}
    return RenderOptions(helm=_helm_settings(every, base, "[helm]", root, ()), charts=charts)


def _helm_settings(table: Any, base: Path, where: str, root: Root, path: tuple[str, ...]) -> HelmSettings:
    """Values files are relative to `base` (the config's folder; a chart's own folder for its table) and must
    lie in `root` (the config's folder); `path`: the keys of this table under [helm], for errors."""
    known = {"values", "set", "release", "namespace"}
    if not isinstance(table, dict):
        raise _OptionProblem(f"{where}: must be a table of {sorted(known)}", *path)
    unknown = sorted(str(key) for key in set(table) - known)
    if unknown:
        raise _OptionProblem(
            f"{where}: unknown setting {unknown[0]!r}: a chart's settings are {', '.join(sorted(known))} "
            "(the configuration names no program, plugin or flag)",
            *path,
            unknown[0],
        )
    lists: dict[str, tuple[str, ...]] = {}
    for key in ("values", "set"):
        value = table.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise _OptionProblem(f"{where}: '{key}' must be a list of strings", *path, key)
        lists[key] = tuple(value)
    for key, check in (("release", release_problem), ("namespace", namespace_problem)):
        if key in table and not isinstance(table[key], str):
            raise _OptionProblem(f"{where}: '{key}' must be a string", *path, key)
        problem = check(table[key]) if key in table else None
        if problem is not None:
            raise _OptionProblem(f"{where}: '{key}': {problem}", *path, key)
    for pair in lists["set"]:
        problem = set_problem(pair)
        if problem is not None:
            raise _OptionProblem(f"{where}: 'set': {problem}", *path, "set")
    values = []
    for given in lists["values"]:
        real = Path(os.path.realpath(base / given))
        reason = root.where(real)
        if reason is not None:
            raise _OptionProblem(
                f"{where}: 'values': {given!r} leads {reason}; a values file named in the configuration must be "
                "under the configuration's folder (--helm-values takes any file)",
                *path,
                "values",
            )
        values.append(str(real))
    return HelmSettings(
        values=tuple(values), set=lists["set"], release=table.get("release"), namespace=table.get("namespace")
    )


def did_you_mean(name: str, known_rules: Sequence[Rule]) -> str:
    """`; did you mean dshm-missing?` for a mistyped rule code or name, or the rules whose name starts with a word
    given alone (`dshm`: dshm-missing, dshm-unsized, ...); else nothing."""
    word = name.strip().lower()
    starting = [r for r in known_rules if word and (r.name == word or r.name.startswith(f"{word}-"))]
    if len(starting) == 1:
        return f"; did you mean {starting[0].name}?"
    if starting:
        shown = ", ".join(f"{r.name} ({r.code})" for r in starting[:_MOST_SUGGESTED])
        more = f" and {len(starting) - _MOST_SUGGESTED} more" if len(starting) > _MOST_SUGGESTED else ""
        return f"; did you mean one of {shown}{more}?"
    candidates = [r.name for r in known_rules] + [r.code for r in known_rules]
    close = difflib.get_close_matches(name, candidates, n=1, cutoff=0.6) or difflib.get_close_matches(
        name.upper(), [r.code for r in known_rules], n=1, cutoff=0.6
    )
    return f"; did you mean {close[0]}?" if close else ""


def split_rule_names(values: Iterable[str]) -> tuple[str, ...]:
    """`--select KG1,dshm-missing --select KG5` -> ("KG1", "dshm-missing", "KG5"): each value of a repeatable
    option is a comma-separated list, as ruff reads them; blanks around items are dropped."""
    return tuple(item.strip() for value in values for item in value.split(",") if item.strip())


def rule_names_option(values: Sequence[str] | None, known_rules: Sequence[Rule], option: str) -> tuple[str, ...] | None:
    """The rules a repeatable, comma-separated command-line option names (None when it is not given); a
    ConfigError names the one unknown item, with the close match, or says that a value names no rule."""
    if values is None:
        return None
    names = split_rule_names(values)
    if not names:
        raise ConfigError(f"{option} {', '.join(repr(v) for v in values)} names no rule")
    check_rule_names(names, known_rules, option)
    return names


def is_rule_pattern(item: str, known_rules: Sequence[Rule]) -> bool:
    """A select/ignore entry: ALL, a rule name, or a code prefix (`KG`, `KG2`, `KG201`)."""
    return (
        item == "ALL"
        or any(r.name == item for r in known_rules)
        or (bool(item) and any(r.code.startswith(item.upper()) for r in known_rules))
    )


def check_rule_names(names: Iterable[str], known_rules: Sequence[Rule], option: str) -> None:
    """Every --select/--ignore entry names a rule (a code prefix, a name or ALL), or a ConfigError says which."""
    for item in names:
        if not is_rule_pattern(item, known_rules):
            raise ConfigError(f"{option} names unknown rule {item!r}{did_you_mean(item, known_rules)}")
