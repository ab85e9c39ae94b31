"""The one registry of lint rules: every rule module's RULES, in code order.

Adding a rule module means adding it to the tuple below; codes and names must be unique.
"""

from __future__ import annotations

from functools import cache

from kubegpu.ruleapi import Rule
from kubegpu.rules import (
    admission,
    binpack,
    coldstart,
    dockerfile,
    gang,
    images,
    inputs,
    kubelet_config,
    models,
    placement,
    qos,
    shm,
)

_MODULES = (
    inputs,
    qos,
    shm,
    kubelet_config,
    images,
    models,
    coldstart,
    dockerfile,
    gang,
    placement,
    binpack,
    admission,
)


@cache
def all_rules() -> tuple[Rule, ...]:
    """Every rule, sorted by code; raises if two rules share a code or a name."""
    rules = sorted((rule for module in _MODULES for rule in module.RULES), key=lambda r: r.code)
    codes = [r.code for r in rules]
    names = [r.name for r in rules]
    if len(set(codes)) != len(codes) or len(set(names)) != len(names):
        raise ValueError("duplicate rule code or name in the registry")
    return tuple(rules)


def find_rule(key: str) -> Rule | None:
    """A rule by code (case-insensitive) or by name."""
    for rule in all_rules():
        if rule.code == key.upper() or rule.name == key:
            return rule
    return None
