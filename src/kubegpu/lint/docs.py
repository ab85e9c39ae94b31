"""Rule documentation pages, generated from the rule itself (docs/rules/<CODE>.md, checked by a test)."""

from __future__ import annotations

import sys
from pathlib import Path

from kubegpu.ruleapi import Rule


def rule_doc(rule: Rule) -> str:
    """The Markdown page for one rule."""
    parts = [
        f"# {rule.code} {rule.name}",
        "",
        f"- Practice: {rule.practice}",
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
        parts += [
            f"Set under `[rules.{rule.name}]` in kubegpu.toml ([configuration](../configuration.md)); a value of the "
            "wrong type or out of range is an error naming the file and line.",
            "",
        ]
        parts += [f"- {option.doc}" for option in rule.options]
    if rule.bad_example:
        parts += ["", "## Flagged", "", "```yaml", rule.bad_example, "```"]
    if rule.good_example:
        parts += ["", "## Passes", "", "```yaml", rule.good_example, "```"]
    parts += [
        "",
        "## Suppress",
        "",
        f'Annotate the object or its pod template: `kubegpu.io/ignore: "{rule.name}: <reason>"`, add '
        f'`# kubegpu: ignore[{rule.code}]` on the line, or `ignore = ["{rule.code}"]` in kubegpu.toml.',
        "",
    ]
    return "\n".join(parts)


def _applies_to(rule: Rule) -> str:
    if rule.target.value == "template":
        return "GPU pod templates" if rule.gpu_only else "every pod template"
    return {"document": "Kubernetes objects", "dockerfile": "Dockerfiles", "input": "input files"}[rule.target.value]


OPTIONS_BEGIN = "<!-- rule options: written by `make docs` from the rules' declarations -->"
OPTIONS_END = "<!-- end of rule options -->"


def options_doc() -> str:
    """The rule options part of docs/configuration.md: every option of every rule, from its declaration."""
    from kubegpu.lint.registry import all_rules

    parts = [OPTIONS_BEGIN]
    for rule in all_rules():
        if rule.options:
            parts += ["", f"### `[rules.{rule.name}]` ({rule.code})", ""]
            parts += [f"- {option.doc}" for option in rule.options]
    parts += ["", OPTIONS_END]
    return "\n".join(parts)


def update_configuration_page(page: Path) -> bool:
    """Replace the generated rule options of `page` with `options_doc()`; False when the page has no such part."""
    text = page.read_text()
    start, end = text.find(OPTIONS_BEGIN), text.find(OPTIONS_END)
    if start < 0 or end < start:
        return False
    page.write_text(text[:start] + options_doc() + text[end + len(OPTIONS_END) :])
    return True


def write_rule_docs(folder: Path) -> list[Path]:
    """Write docs/rules/<CODE>.md for every rule and an index; return the files written."""
    from kubegpu.lint.registry import all_rules

    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for rule in all_rules():
        path = folder / f"{rule.code}.md"
        path.write_text(rule_doc(rule))
        written.append(path)
    index = folder / "README.md"
    index.write_text(rules_index())
    written.append(index)
    return written


def rules_index() -> str:
    from kubegpu.lint.registry import all_rules

    lines = ["# Rules", "", "| code | name | practice | severity | fix | summary |", "|---|---|---|---|---|---|"]
    for rule in all_rules():
        lines.append(
            f"| [{rule.code}]({rule.code}.md) | {rule.name} | {rule.practice} | {rule.severity.value} | "
            f"{'yes' if rule.fixable else ''} | {rule.summary} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    rules_folder = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/rules")
    for written_path in write_rule_docs(rules_folder):
        print(written_path)
    if update_configuration_page(rules_folder.parent / "configuration.md"):
        print(rules_folder.parent / "configuration.md")
