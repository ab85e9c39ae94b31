"""The lint engine: it reads the inputs, runs the registered rules with their configuration and context, applies
suppressions and returns the findings. The public Python entry points of lint (and the rule interface it uses)."""

from kubegpu.lint.config import LintConfig, find_config, load_config
from kubegpu.lint.engine import LintResult, lint_loaded, lint_object, lint_text, load_sources
from kubegpu.lint.registry import all_rules, find_rule
from kubegpu.lint.runner import lint_paths
from kubegpu.ruleapi import (
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
