"""Read Dockerfiles into instructions and stages, for the Dockerfile rule (the image that ships is the final stage).

Reads Dockerfiles the way BuildKit's frontend does (dockerfile v1 syntax): parser directives, line continuations,
comments, heredocs, `FROM [--platform=...] image [AS name]`, global ARG defaults, and stage-to-stage chains.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

_DIRECTIVE = re.compile(r"^#\s*([a-zA-Z][a-zA-Z0-9_-]*)\s*=\s*(.*?)\s*$")
_HEREDOC = re.compile(r"<<(-?)\s*([\"']?)([A-Za-z_][A-Za-z0-9_]*)\2")
VARIABLE = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)(?:(:[-+])([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*))")


@dataclass(frozen=True)
class Instruction:
    """One logical instruction: its keyword (upper-case), its arguments joined, and its first physical line."""

    keyword: str
    arguments: str
    line: int


@dataclass(frozen=True)
class Stage:
    """One `FROM`: the base as written, the base after ARG substitution, its stage name and its line."""

    index: int
    base: str
    resolved: str
    name: str | None
    line: int
    unresolved: tuple[str, ...]


def instructions(text: str) -> Iterator[Instruction]:
    """Logical instructions of a Dockerfile, joining continuations and skipping comments and heredoc bodies."""
    lines = text.splitlines()
    escape = "\\"
    i = 0
    while i < len(lines):  # parser directives: only at the very top, before any other line
        match = _DIRECTIVE.match(lines[i].strip())
        if not match:
            break
        if match.group(1).lower() == "escape" and match.group(2) in ("\\", "`"):
            escape = match.group(2)
        i += 1
    while i < len(lines):
        stripped = lines[i].strip()
        if not stripped or stripped.startswith("#"):
            i += 1
            continue
        first = i
        parts: list[str] = []
        while True:
            current = lines[i].rstrip()
            if current.endswith(escape) and i + 1 < len(lines):
                parts.append(current[: -len(escape)])
                i += 1
                # comment and empty lines inside a continuation are dropped, the continuation goes on
                while i < len(lines) and (not lines[i].strip() or lines[i].strip().startswith("#")):
                    i += 1
                if i >= len(lines):
                    break
                continue
            parts.append(current[: -len(escape)] if current.endswith(escape) else current)
            i += 1
            break
        joined = " ".join(part.strip() for part in parts)
        keyword, _, arguments = joined.partition(" ")
        for heredoc in _HEREDOC.finditer(arguments):
            terminator = heredoc.group(3)
            strip_tabs = heredoc.group(1) == "-"
            while i < len(lines):
                body = lines[i].lstrip("\t") if strip_tabs else lines[i]
                i += 1
                if body.rstrip() == terminator:
                    break
        yield Instruction(keyword.upper(), arguments.strip(), first + 1)


def substitute(text: str, variables: Mapping[str, str]) -> tuple[str, tuple[str, ...]]:
    """Expand `$VAR`, `${VAR}`, `${VAR:-default}` and `${VAR:+alt}`; return the text and the names left unset."""
    missing: list[str] = []

    def replace(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(4)
        value = variables.get(name)
        operator, word = match.group(2), match.group(3) or ""
        if operator == ":-":
            return value if value else word
        if operator == ":+":
            return word if value else ""
        if value is None:
            missing.append(name)
            return match.group(0)
        return value

    return VARIABLE.sub(replace, text), tuple(missing)


def _arg_default(arguments: str) -> tuple[str, str | None] | None:
    name, eq, value = arguments.strip().partition("=")
    name = name.strip()
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        return None
    if not eq:
        return name, None
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        value = value[1:-1]
    return name, value


def stages(text: str) -> list[Stage]:
    """Every build stage in order, with its base resolved from global ARG defaults where they allow."""
    global_args: dict[str, str] = {}
    result: list[Stage] = []
    for instruction in instructions(text):
        if instruction.keyword == "ARG" and not result:
            for item in _split_args(instruction.arguments):
                parsed = _arg_default(item)
                if parsed is not None and parsed[1] is not None:
                    global_args[parsed[0]] = substitute(parsed[1], global_args)[0]
        elif instruction.keyword == "FROM":
            words = [w for w in instruction.arguments.split() if not w.startswith("--")]
            if not words:
                continue
            base = words[0]
            name = words[2].lower() if len(words) >= 3 and words[1].lower() == "as" else None
            resolved, missing = substitute(base, global_args)
            result.append(Stage(len(result), base, resolved, name, instruction.line, missing))
    return result


def _split_args(arguments: str) -> list[str]:
    """`ARG A=1 B="x y"` declares several; split on whitespace outside quotes."""
    items: list[str] = []
    current = ""
    quote = ""
    for char in arguments:
        if quote:
            current += char
            if char == quote:
                quote = ""
        elif char in "\"'":
            quote = char
            current += char
        elif char.isspace():
            if current:
                items.append(current)
            current = ""
        else:
            current += char
    if current:
        items.append(current)
    return items


def root_chain(all_stages: list[Stage], stage: Stage) -> list[Stage]:
    """The chain of stages from `stage` back to the one whose base is an image (not an earlier stage)."""
    chain = [stage]
    seen = {stage.index}
    current = stage
    while True:
        earlier = {s.name: s for s in all_stages[: current.index] if s.name}
        parent = earlier.get(current.resolved.lower())
        if parent is None or parent.index in seen:
            return chain
        chain.append(parent)
        seen.add(parent.index)
        current = parent
