"""How a terminal and a GitHub Actions log read what a report prints: the characters they act on or hide, and
the runner's reading of a version 2 workflow command (actions/runner src/Runner.Common/ActionCommand.cs)."""

from __future__ import annotations

import unicodedata

# Every category a terminal or log may act on or not show: controls, format characters, surrogates, separators.
_ACTIVE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})


def active(char: str) -> bool:
    """A character a terminal acts on or does not show (a tab is neither)."""
    return char != "\t" and unicodedata.category(char) in _ACTIVE_CATEGORIES


def log_problems(text: str) -> list[str]:
    """What in printed `text` a terminal or the runner would act on: active characters, lines that are workflow
    commands (a leading `::` once trimmed) and version 1 commands (`##[` anywhere)."""
    problems = sorted({f"character {hex(ord(c))}" for c in text if c not in "\n" and active(c)})
    for line in text.split("\n"):
        if line.lstrip().startswith("::"):
            problems.append(f"workflow command line: {line[:80]!r}")
        if "##[" in line:
            problems.append(f"version 1 workflow command: {line[:80]!r}")
    return problems


def runner_parse_v2(line: str) -> tuple[str, dict[str, str], str] | None:
    """A version 2 workflow command as actions/runner's ActionCommand.TryParseV2 reads a log line: (command,
    properties, data) unescaped, or None. Transcribed from its documented behaviour for the test."""
    message = line.lstrip()
    if not message.startswith("::"):
        return None
    end = message.find("::", 2)
    if end < 0:
        return None
    info = message[2:end]
    name, _, props = info.partition(" ")
    properties: dict[str, str] = {}
    for item in props.strip().split(","):
        key, sep, value = item.partition("=")
        if item and sep and key and value:
            properties[key] = (
                value.replace("%0D", "\r")
                .replace("%0A", "\n")
                .replace("%3A", ":")
                .replace("%2C", ",")
                .replace("%25", "%")
            )
    data = message[end + 2 :].replace("%0D", "\r").replace("%0A", "\n").replace("%25", "%")
    return name, properties, data
