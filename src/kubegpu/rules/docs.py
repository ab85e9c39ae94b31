"""Rule documentation pages, generated from the rule itself (docs/rules/<CODE>.md, checked by a test)."""

from __future__ import annotations

from kubegpu.rules.base import Rule


def rule_doc(rule: Rule) -> str:
    """The Markdown page for one rule."""
    parts = [
        f"# {rule.code} {rule.name}",
        "",
        f"- Seed section: {rule.section}",
        f"- Default severity: {rule.severity.value}",
        f"- Applies to: {_applies_to(rule)}",
        f"- Fix: {'yes' if rule.fixable else 'no'}",
        "",
        rule.summary,
        "",
        "## Why",
        "",
        rule.rationale,
    ]
    if rule.options:
        parts += ["", "## Options", ""]
        parts += [f"- `{name}`: {text}" for name, text in rule.options.items()]
    if rule.bad_example:
        parts += ["", "## Flagged", "", "```yaml", rule.bad_example, "```"]
    if rule.good_example:
        parts += ["", "## Passes", "", "```yaml", rule.good_example, "```"]
    parts += [
        "",
        "## Suppress",
        "",
        f"Annotate the object or its pod template: `kubegpu.io/ignore: \"{rule.name}: <reason>\"`, add "
        f"`# kubegpu: ignore[{rule.code}]` on the line, or `ignore = [\"{rule.code}\"]` in kubegpu.toml.",
        "",
    ]
    return "\n".join(parts)


def _applies_to(rule: Rule) -> str:
    if rule.target.value == "template":
        return "GPU pod templates" if rule.gpu_only else "every pod template"
    return {"document": "Kubernetes objects", "dockerfile": "Dockerfiles", "input": "input files"}[rule.target.value]
