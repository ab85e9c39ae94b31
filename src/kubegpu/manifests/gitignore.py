"""gitignore patterns matched in time linear in the path: git's wildmatch rules, read as pathspec's GitIgnoreSpec
reads them, without a backtracking regex (a line such as `a*a*a*a*a*b` cannot stall a run).

A pattern is split at `/` into segment globs and `**`; each glob is matched against one path segment by the
greedy two-pointer algorithm (O(segment x glob)), and the segments by a table over (pattern part, path segment).
Where patterns are invalid (a range such as `[z-a]`, a trailing backslash) the line is dropped, as git drops it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

# Glob tokens other than a literal character (a one-character string): never one character long themselves.
_STAR = "<any run>"  # any run of characters within one segment
_ANY = "<any one>"  # any one character
# A class token: (negated, characters, ranges); a literal token is its one character.
_Class = tuple[bool, frozenset[str], tuple[tuple[str, str], ...]]
_Token = str | _Class
_GLOBSTAR = "**"


class _InvalidPattern(ValueError):
    """A line git would not use as a pattern (an invalid range, an escape with nothing after it)."""


def _glob_tokens(glob: str) -> tuple[_Token, ...]:
    """The tokens of one segment glob: characters, `?`, `*` and bracket classes (`[a-c]`, `[!x]`)."""
    tokens: list[_Token] = []
    i, end = 0, len(glob)
    while i < end:
        char = glob[i]
        i += 1
        if char == "\\":
            if i == end:
                raise _InvalidPattern("an escape with nothing after it")
            tokens.append(glob[i])
            i += 1
        elif char == "*":
            if not tokens or tokens[-1] != _STAR:  # `**` inside a segment is `*`
                tokens.append(_STAR)
        elif char == "?":
            tokens.append(_ANY)
        elif char == "[":
            found = _bracket(glob, i)
            if found is None:
                raise _InvalidPattern("a bracket without its end")
            token, i = found
            tokens.append(token)
        else:
            tokens.append(char)
    return tuple(tokens)


def _bracket(glob: str, start: int) -> tuple[_Class, int] | None:
    """The class opened at `start` - 1 and the index after its `]`; None when it does not end."""
    j = start
    end = len(glob)
    if j < end and glob[j] in "!^":
        j += 1
    if j < end and glob[j] == "]":
        j += 1
    while j < end and glob[j] != "]":
        j += 1
    if j >= end:
        return None
    negated = glob[start] in "!^"
    body = glob[start + 1 if negated else start : j]
    chars: set[str] = set()
    ranges: list[tuple[str, str]] = []
    k = 0
    while k < len(body):
        if k + 2 < len(body) and body[k + 1] == "-":
            low, high = body[k], body[k + 2]
            if low > high:
                raise _InvalidPattern("a range whose start is after its end")
            ranges.append((low, high))
            k += 3
        else:
            chars.add(body[k])
            k += 1
    return (negated, frozenset(chars), tuple(ranges)), j + 1


def _one(token: _Token, char: str) -> bool:
    if isinstance(token, str):
        return token in (_ANY, char)
    negated, chars, ranges = token
    inside = char in chars or any(low <= char <= high for low, high in ranges)
    return inside != negated


def _matcher(tokens: tuple[_Token, ...], nonempty: bool) -> Callable[[str], bool]:
    """A test of one path segment against a glob. Globs with at most one `*` go to `re` (no backtracking can
    grow past one pass); others to the two-pointer walk, which is O(segment x glob) whatever the glob."""
    if not any(t in (_STAR, _ANY) or isinstance(t, tuple) for t in tokens):
        literal = "".join(t for t in tokens if isinstance(t, str))
        return literal.__eq__
    if sum(1 for t in tokens if t == _STAR) <= 1:
        parts = [
            "[^/]*" if t == _STAR else "[^/]" if t == _ANY else re.escape(t) if isinstance(t, str) else _class_regex(t)
            for t in tokens
        ]
        regex = re.compile("".join(parts) if not nonempty else "(?=.)" + "".join(parts), re.DOTALL)
        return lambda segment: regex.fullmatch(segment) is not None

    def walk(segment: str) -> bool:
        if nonempty and not segment:
            return False
        ti = si = 0
        star_ti, star_si = -1, 0
        count, length = len(tokens), len(segment)
        while si < length:
            if ti < count and tokens[ti] == _STAR:
                star_ti, star_si = ti, si
                ti += 1
            elif ti < count and _one(tokens[ti], segment[si]):
                ti += 1
                si += 1
            elif star_ti >= 0:
                star_si += 1
                si = star_si
                ti = star_ti + 1
            else:
                return False
        while ti < count and tokens[ti] == _STAR:
            ti += 1
        return ti == count

    return walk


def _class_regex(token: _Class) -> str:
    negated, chars, ranges = token
    body = "".join(re.escape(c) for c in sorted(chars)) + "".join(
        f"{re.escape(low)}-{re.escape(high)}" for low, high in ranges
    )
    if negated:
        return f"[^/{body}]"
    return f"[{body}]" if body else "(?!)"


@dataclass(frozen=True)
class _Pattern:
    """One gitignore line: include (False for `!`), and how it matches.

    `whole`: "nonempty" (`*`, `**`: every path) or "slash" (`*/**`: paths with a folder) or "" (by segments);
    `parts`: segment matchers, None for `**`; `dir_only`: the line ended with `/`; `needle`: text every
    matching path holds (the longest literal run of a glob), tested first as most lines match no path.
    """

    include: bool
    whole: str
    parts: tuple[Callable[[str], bool] | None, ...]
    dir_only: bool
    needle: str = ""

    def priority(self, segments: Sequence[str], path: str) -> int:
        """0: no match; 1: matched a folder above the path (or the path as a folder); 2: matched the path."""
        if self.needle not in path:
            return 0
        if self.whole == "nonempty":
            return 2 if path else 0
        if self.whole == "slash":
            return 0 if "/" not in path else 1 if self.dir_only else 2
        parts = self.parts
        if len(parts) == 2 and parts[0] is None and parts[1] is not None:  # `name`: the latest segment it matches
            match = parts[1]
            last = len(segments) - 1
            for s in range(last, -1, -1):
                if match(segments[s]):
                    return 2 if s == last else 1
            return 0
        return _first_match(parts, self.dir_only, segments)


def _first_match(parts: Sequence[Callable[[str], bool] | None], dir_only: bool, segments: Sequence[str]) -> int:
    """The priority of the match a backtracking search would find first (later prefixes and longer `**` runs
    are tried first), computed from the last part to the first over every start segment: O(parts x segments)."""
    n = len(segments)
    last = len(parts) - 1
    # after[j]: the result of matching the parts after the current one from segment j (0: no match)
    after = [1 if j < n else 2 for j in range(n + 1)]  # past the last glob: `/` (a folder above) or the end
    for index in range(last, -1, -1):
        part = parts[index]
        here = [0] * (n + 1)
        if part is None and index == last:  # a trailing `/**` or `/`: something must follow the folder
            for j in range(n):
                here[j] = 1 if dir_only else 2
        elif part is None and index == 0:  # a leading `**/`: the latest start that matches, else the first
            start = next((s for s in range(n - 1, 0, -1) if after[s]), 0)
            return after[start]
        elif part is None:  # `/**/`: as many folders as possible, else none
            here = _skips(after, n)
        else:
            for j in range(n):
                if after[j + 1] and part(segments[j]):
                    here[j] = after[j + 1]
        after = here
    return after[0]


def _skips(after: Sequence[int], n: int) -> list[int]:
    """For `/**/` starting at segment j: the next part at the latest k in j+1..n-1 that matches, else at j."""
    here = [0] * (n + 1)
    latest = 0  # the largest k > j with a match, as j falls (0: none, as k > j >= 0)
    for j in range(n - 1, -1, -1):
        here[j] = after[latest] if latest else after[j]
        if after[j] and not latest:
            latest = j
    return here


def _compile(line: str) -> _Pattern | None:
    """One line of a .gitignore as a pattern; None for blanks, comments and lines git drops."""
    text = line if line.endswith("\\ ") else line.rstrip()
    if not text or text.startswith("#") or text == "/":
        return None
    include = not text.startswith("!")
    if not include:
        text = text[1:]
    segments = text.split("/")
    dir_only = not segments[-1]
    if not segments[0]:
        del segments[0]
    elif (len(segments) == 1 or (len(segments) == 2 and not segments[1])) and segments[0] != _GLOBSTAR:
        segments.insert(0, _GLOBSTAR)
    if not segments:
        return None
    if not segments[-1]:
        segments[-1] = _GLOBSTAR
    collapsed: list[str] = []
    for segment in segments:
        if not (segment == _GLOBSTAR and collapsed and collapsed[-1] == _GLOBSTAR):
            collapsed.append(segment)
    if collapsed == [_GLOBSTAR]:
        return _Pattern(include, "slash" if dir_only else "nonempty", (), dir_only)
    if collapsed == [_GLOBSTAR, "*"]:
        return _Pattern(include, "nonempty", (), dir_only)
    if collapsed == [_GLOBSTAR, "*", _GLOBSTAR]:
        return _Pattern(include, "slash", (), dir_only)
    try:
        globs = [None if segment == _GLOBSTAR else _glob_tokens(segment) for segment in collapsed]
    except _InvalidPattern:
        return None
    parts = tuple(
        None if tokens is None else _matcher(tokens, nonempty=segment == "*")
        for segment, tokens in zip(collapsed, globs, strict=True)
    )
    return _Pattern(include, "", parts, dir_only, max((_literal_runs(t) for t in globs if t), key=len, default=""))


def _literal_runs(tokens: Sequence[_Token]) -> str:
    """The longest run of literal characters in a glob."""
    best = run = ""
    for token in tokens:
        if isinstance(token, str) and len(token) == 1:
            run += token
            best = max(best, run, key=len)
        else:
            run = ""
    return best


@dataclass(frozen=True)
class IgnoreRules:
    """The patterns of one .gitignore (or of exclude settings), in order; the last that matches decides."""

    patterns: tuple[_Pattern, ...]
    truncated: bool = False  # more than `limit` patterns were given: the rest were not read

    @classmethod
    def from_lines(cls, lines: Iterable[str], limit: int | None = None) -> IgnoreRules:
        """The patterns of these lines (at most `limit`: each costs every path checked a little)."""
        patterns: list[_Pattern] = []
        for line in lines:
            pattern = _compile(line)
            if pattern is None:
                continue
            if limit is not None and len(patterns) >= limit:
                return cls(tuple(patterns), truncated=True)
            patterns.append(pattern)
        return cls(tuple(patterns))

    def match_file(self, path: str) -> bool:
        """Whether `path` (relative, `/`-separated; a folder ends with `/`) is ignored.

        A pattern that matches the path itself outranks one that matches only a folder above it; among
        equals, the last line wins (pathspec's GitIgnoreSpec, which follows git's own results)."""
        segments = path.split("/")
        best, include = 0, False
        for pattern in reversed(self.patterns):
            priority = pattern.priority(segments, path)
            if priority > best:
                best, include = priority, pattern.include
                if priority == 2:
                    break
        return include
