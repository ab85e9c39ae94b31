"""Template placeholders in manifest values: `$VAR`, `${VAR}`, `$(VAR)`, `<your-registry>`, `{{ .Values.x }}`,
`PLACEHOLDER_X` and upper-case tokens such as `IMAGE_NAME` where the field's syntax forbids upper case.

Rules keep checking what a placeholder does not decide; `render` swaps each placeholder for a neutral token so
the rest of a value (a registry, a `:latest` tag) can still be parsed.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

MARKER = "kgplaceholder"
# The words every finding uses when a placeholder decides whether it applies (such findings are info-level):
# one phrase, so that reports and the accuracy scorer can tell a hedge from a plain finding.
DEPENDS_ON = "depends on the rendered value of"
# Shell and Kubernetes variable references, angle-bracket and Go-template slots, PLACEHOLDER_ names.
_ANY_FIELD = re.compile(
    r"\$\{[^}\s]+\}|\$\([A-Za-z_][A-Za-z0-9_]*\)|\$[A-Za-z_][A-Za-z0-9_]*|<[^<>\s]+>|\{\{[^}]*\}\}"
    r"|\bPLACEHOLDER(?:_[A-Z0-9]+)*\b"
)
# In image references upper case is invalid, so an upper-case word of 2+ characters is a slot too (PROJECT_ID).
_IMAGE_EXTRA = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|[A-Z]{2,}[A-Z0-9]*")


# Every placeholder above holds one of these, and so does a YAML or JSON escape that could write one.
_SYNTAX = ("$", "<", "{{", "PLACEHOLDER", "\\")


def may_hold_placeholders(text: str) -> bool:
    """Whether a manifest's text could hold a field placeholder (`$VAR`, `<slot>`, `{{ }}`, `PLACEHOLDER_X`, or an
    escape that writes one); the upper-case words only images treat as slots are not looked for."""
    return any(mark in text for mark in _SYNTAX)


def placeholders_in(value: Any, image: bool = False) -> tuple[str, ...]:
    """The placeholders a string value holds, in order; () for anything else."""
    if not isinstance(value, str):
        return ()
    return _placeholders_in_text(value, image)


@lru_cache(maxsize=4096)  # manifests repeat their values (images, counts) thousands of times
def _placeholders_in_text(value: str, image: bool) -> tuple[str, ...]:
    found = [m.group(0) for m in _ANY_FIELD.finditer(value)]
    if image:
        rest = _ANY_FIELD.sub(" ", value)
        found.extend(m.group(0) for m in _IMAGE_EXTRA.finditer(rest))
    return tuple(found)


def is_placeholder(value: Any) -> bool:
    """True when a string value holds a placeholder (so its rendered value is unknown here)."""
    return bool(placeholders_in(value))


def render(value: str, image: bool = False) -> str:
    """`value` with every placeholder replaced by MARKER followed by its index (kgplaceholder0, ...)."""
    counter = iter(range(1 << 16))
    out = _ANY_FIELD.sub(lambda _m: f"{MARKER}{next(counter)}", value)
    if image:
        out = _IMAGE_EXTRA.sub(lambda _m: f"{MARKER}{next(counter)}", out)
    return out


# Fields that set how many pods a workload runs (the workload adapters' replica, parallelism and size fields).
COUNT_FIELDS = frozenset(
    {
        "replicas",
        "parallelism",
        "completions",
        "size",
        "numNodes",
        "numOfHosts",
        "minReplicas",
        "nodeCount",
        "pipelineParallelSize",
    }
)


def templated_counts(data: Any, path: tuple[str | int, ...] = (), depth: int = 0) -> tuple[tuple[str, str], ...]:
    """(dotted path, value) of every pod-count field whose value is a placeholder, outermost first."""
    if not _has_templated_count(data, depth):
        return ()  # most objects: no placeholder count anywhere, found without building a path per field
    out: list[tuple[str, str]] = []
    _find_templated_counts(data, path, depth, out)
    return tuple(out)


def _has_templated_count(data: Any, depth: int) -> bool:
    """Whether `_find_templated_counts` would find anything (the same walk, with no paths)."""
    if depth > 16:
        return False
    if isinstance(data, dict):
        if not COUNT_FIELDS.isdisjoint(data):
            for key in COUNT_FIELDS.intersection(data):
                if is_placeholder(data[key]):
                    return True
        for key, value in data.items():
            if isinstance(value, _CONTAINERS) and key not in _NOT_COUNTED and _has_templated_count(value, depth + 1):
                return True
    elif isinstance(data, list):
        for item in data:
            if isinstance(item, _CONTAINERS) and _has_templated_count(item, depth + 1):
                return True
    return False


def _find_templated_counts(data: Any, path: tuple[str | int, ...], depth: int, out: list[tuple[str, str]]) -> None:
    # Only mappings and lists are walked into: scalars hold no field (most of a manifest is scalars).
    if depth > 16:
        return
    if isinstance(data, dict):
        for key, value in data.items():
            if key in _NOT_COUNTED:
                continue
            if key in COUNT_FIELDS and is_placeholder(value):
                out.append((".".join(str(p) for p in (*path, str(key))), str(value)))
            elif isinstance(value, _CONTAINERS):
                _find_templated_counts(value, (*path, str(key)), depth + 1, out)
    elif isinstance(data, list):
        for i, item in enumerate(data):
            if isinstance(item, _CONTAINERS):
                _find_templated_counts(item, (*path, i), depth + 1, out)


_NOT_COUNTED = frozenset({"metadata", "status"})
_CONTAINERS = (dict, list)
