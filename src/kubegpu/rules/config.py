"""Lint configuration: `kubegpu.toml` or `[tool.kubegpu]` in pyproject.toml, merged with CLI flags.

Select/ignore match rule codes by prefix (`KG1` selects KG101…) and names exactly, as ruff users expect.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from kubegpu.errors import ConfigError
from kubegpu.manifests.resources import DEFAULT_ACCELERATOR_RESOURCES
from kubegpu.rules.base import Rule, Severity

CONFIG_FILE = "kubegpu.toml"


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
    ) -> LintConfig:
        """CLI flags win over the file: --select replaces, --ignore adds."""
        return replace(
            self,
            select=tuple(select) if select else self.select,
            ignore=(*self.ignore, *(ignore or ()), *extend_ignore),
            fail_on=fail_on or self.fail_on,
            max_file_bytes=max_file_bytes or self.max_file_bytes,
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
        if pyproject.is_file() and "[tool.kubegpu" in pyproject.read_text(errors="replace"):
            return pyproject
    return None


def load_config(path: Path | None, known_rules: Sequence[Rule]) -> LintConfig:
    """Read and check a config file; unknown rules, severities or keys are errors naming the file."""
    if path is None:
        return LintConfig()
    try:
        raw = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as err:
        raise ConfigError(f"cannot read configuration: {err}", file=str(path)) from err
    table: Any = raw
    if path.name == "pyproject.toml":
        table = raw.get("tool", {}).get("kubegpu", {})
    if not isinstance(table, dict):
        raise ConfigError("[tool.kubegpu] must be a table", file=str(path))
    return parse_config(table, str(path), known_rules)


def parse_config(table: Mapping[str, Any], source: str, known_rules: Sequence[Rule]) -> LintConfig:
    allowed = {"select", "ignore", "severity", "rules", "fail-on", "accelerator-resources",
               "extend-accelerator-resources", "max-file-size"}
    unknown = set(table) - allowed
    if unknown:
        raise ConfigError(f"unknown setting(s) {sorted(unknown)}; known: {sorted(allowed)}", file=source)
    names = {r.name: r for r in known_rules} | {r.code: r for r in known_rules}

    def strings(key: str) -> tuple[str, ...]:
        value = table.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"'{key}' must be a list of strings", file=source)
        for item in value:
            if key in ("select", "ignore") and item != "ALL" and item not in names and not any(
                r.code.startswith(item.upper()) for r in known_rules
            ):
                raise ConfigError(f"'{key}' names unknown rule {item!r}", file=source)
        return tuple(value)

    severity: dict[str, Severity] = {}
    for key, value in (table.get("severity") or {}).items():
        if key not in names:
            raise ConfigError(f"[severity] names unknown rule {key!r}", file=source)
        severity[key] = _severity(value, source)
    options: dict[str, Mapping[str, Any]] = {}
    for key, value in (table.get("rules") or {}).items():
        rule = names.get(key)
        if rule is None or not isinstance(value, dict):
            raise ConfigError(f"[rules.{key}]: unknown rule or not a table", file=source)
        bad = set(value) - set(rule.options)
        if bad:
            raise ConfigError(f"[rules.{key}]: unknown option(s) {sorted(bad)}; "
                              f"known: {sorted(rule.options) or 'none'}", file=source)
        options[rule.name] = dict(value)
    accelerators = DEFAULT_ACCELERATOR_RESOURCES
    if "accelerator-resources" in table:
        accelerators = strings("accelerator-resources")
    accelerators = (*accelerators, *strings("extend-accelerator-resources"))
    max_bytes = table.get("max-file-size", 20 * 1024 * 1024)
    if not isinstance(max_bytes, int) or max_bytes <= 0:
        raise ConfigError("'max-file-size' must be a positive number of bytes", file=source)
    return LintConfig(
        select=strings("select"),
        ignore=strings("ignore"),
        severity=severity,
        options=options,
        fail_on=_severity(table.get("fail-on", "warning"), source),
        accelerator_resources=tuple(accelerators),
        max_file_bytes=max_bytes,
        source=source,
    )


def _severity(value: Any, source: str) -> Severity:
    try:
        return Severity(str(value))
    except ValueError as err:
        raise ConfigError(f"severity {value!r} is not one of info, warning, error", file=source) from err
