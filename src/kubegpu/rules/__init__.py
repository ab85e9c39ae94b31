"""Lint rules, one module per practice, a registry, configuration and the engine that runs them."""

from kubegpu.rules.base import (
    Edit,
    Finding,
    Fix,
    NodeTarget,
    RawFinding,
    Rule,
    RuleContext,
    Safety,
    Severity,
    Target,
)
from kubegpu.rules.config import LintConfig, find_config, load_config
from kubegpu.rules.engine import LintResult, lint_loaded, lint_object, lint_paths, lint_text, load_sources
from kubegpu.rules.registry import all_rules, find_rule

__all__ = [
    "Edit",
    "Finding",
    "Fix",
    "LintConfig",
    "LintResult",
    "NodeTarget",
    "RawFinding",
    "Rule",
    "RuleContext",
    "Safety",
    "Severity",
    "Target",
    "all_rules",
    "find_config",
    "find_rule",
    "lint_loaded",
    "lint_object",
    "lint_paths",
    "lint_text",
    "load_config",
    "load_sources",
]
