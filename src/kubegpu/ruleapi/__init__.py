"""The interface between the lint engine and its rules: what a rule is, what its check reads and yields, and
what a finding is. Rules import this and the models below it, never the engine (`kubegpu.lint`)."""

from kubegpu.ruleapi.rule import (
    LOOKED_UP_KINDS,
    WHOLE_INPUT_KINDS,
    CheckFunction,
    ContextError,
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
    "LOOKED_UP_KINDS",
    "WHOLE_INPUT_KINDS",
    "CheckFunction",
    "ContextError",
    "Edit",
    "Finding",
    "Fix",
    "NodeTarget",
    "RawFinding",
    "Rule",
    "RuleContext",
    "Safety",
    "Severity",
    "Target",
]
