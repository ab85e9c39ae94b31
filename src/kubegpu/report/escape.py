"""What every report does to text that came from its input (file, object and key names, messages quoting values,
source lines) before printing it: the one escaping module of the text, GitHub, JUnit, SARIF and JSON reports.

A repository's names and values are untrusted. Printed as they are, a control character (ESC, CR, a newline, a C1
code) rewrites what a terminal or CI log shows, a bidirectional override or an invisible format character
reorders or hides text, a name with a newline starts a line of its own, and GitHub Actions runs a log line that
starts with `::` (after leading whitespace) or that holds `##[` anywhere as a workflow command (actions/runner
ActionCommand.TryParseV2 and TryParse). `printable` turns each such character into a visible escape (`\\n`,
`\\x1b`, `\\u202e`) and defuses both command forms; clean text, nearly all of it, is returned as it is.
"""

from __future__ import annotations

import functools
import re

# Characters never printed as they are: C0 controls but tab (newline and carriage return included), DEL, C1
# controls; format characters (Unicode category Cf: bidirectional embeddings, overrides and isolates, zero-width
# spaces and joiners, the byte-order mark, interlinear annotations, tag characters), the line and paragraph
# separators, lone surrogates (a file name's bytes that are not UTF-8, as Python decodes them) and the
# noncharacters U+FFFE and U+FFFF (not XML characters). The Cf ranges are Unicode 15.1's; the tests check them
# against the running Python's database, and that none is printable to str.isprintable (the fast path).
_UNSAFE_CLASS = (
    "\x00-\x08\x0a-\x1f\x7f-\x9f\xad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e"
    "\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\ufffe\uffff"
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0001\U000e0020-\U000e007f\ud800-\udfff"
)
_SURROGATE = re.compile("[\ud800-\udfff]")


# Compiled when first needed (clean text never needs them): compiling the class costs a millisecond at start-up.
@functools.cache
def unsafe_char() -> re.Pattern[str]:
    """One unsafe character."""
    return re.compile(f"[{_UNSAFE_CLASS}]")


@functools.cache
def _unsafe() -> re.Pattern[str]:
    """An unsafe character, a version 1 workflow command (`##[name]data`, parsed anywhere in a line) or a leading
    `::` (a version 2 workflow command once the runner trims leading whitespace), found in one search."""
    return re.compile(rf"^\s*::|##\[|[{_UNSAFE_CLASS}]")


_NAMED = {"\n": "\\n", "\r": "\\r"}


def _visible_char(char: str) -> str:
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # a byte that is not UTF-8, as os.fsdecode keeps it: shown as that byte
        return f"\\x{code - 0xDC00:02x}"
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def _visible(match: re.Match[str]) -> str:
    found = match.group()
    if found == "##[":
        return "##\\x5b"
    if len(found) == 1:
        return _visible_char(found)
    # `::` at the start once whitespace is trimmed: the first colon is escaped (and the whitespace too, if unsafe)
    return unsafe_char().sub(lambda m: _visible_char(m.group()), found[:-2]) + "\\x3a:"


def printable(text: str) -> str:
    """`text` safe to print on a terminal or in a CI log, on one line: unsafe characters as visible escapes,
    workflow commands defused; text that holds none of them is returned unchanged."""
    # Every unsafe character is one str.isprintable refuses, and that test runs in C at a few nanoseconds a
    # character, ten times faster than searching the character class: the clean text of nearly every report
    # line passes here.
    if text.isprintable() and "##[" not in text and "::" not in text:
        return text
    return _unsafe().sub(_visible, text)


def workflow_data(text: str) -> str:
    """The message of a GitHub Actions workflow command (what follows the second `::`): printable, then
    escaped as actions/toolkit's escapeData does (`%`, CR, LF)."""
    return printable(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def workflow_property(text: str) -> str:
    """A property value of a GitHub Actions workflow command (`file=`, `title=`): printable, then escaped as
    actions/toolkit's escapeProperty does (`%`, CR, LF, `:` and `,`)."""
    return workflow_data(text).replace(":", "%3A").replace(",", "%2C")


def unicode_text(text: str) -> str:
    """`text` as valid Unicode for JSON and SARIF data (strict parsers reject lone surrogates): a byte of a
    file name that is not UTF-8 becomes U+FFFD; any other text is returned unchanged."""
    if text.isascii() or _SURROGATE.search(text) is None:
        return text
    return _SURROGATE.sub("\ufffd", text)


def json_defused(encoded: str) -> str:
    """JSON text (as json.dumps writes it) with `##[` written `##\\u005b`: the same data to a JSON parser, but
    no workflow command when the report is printed in a GitHub Actions log."""
    return encoded.replace("##[", "##\\u005b") if "##[" in encoded else encoded
