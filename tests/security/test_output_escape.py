"""The one escaping module of the reports (report/escape.py), checked against the Unicode database and against
how GitHub Actions' runner reads workflow commands (actions/runner src/Runner.Common/ActionCommand.cs)."""

from __future__ import annotations

import json
import re
import sys

from hypothesis import given
from hypothesis import strategies as st

from kubegpu.report.escape import (
    json_defused,
    printable,
    unicode_text,
    unsafe_char,
    workflow_data,
    workflow_property,
)
from tests.security.logs import active, runner_parse_v2


def test_every_control_format_and_separator_character_is_escaped() -> None:
    """The character class covers Cc (but tab), Cf, Cs, Zl and Zp of the running Python's Unicode database."""
    missed = [
        hex(code) for code in range(sys.maxunicode + 1) if active(chr(code)) and not unsafe_char().match(chr(code))
    ]
    assert missed == []


def test_no_escaped_character_is_printable_to_the_fast_path() -> None:
    """printable() returns text that str.isprintable() accepts unchanged: that is only right if every character
    the class escapes is one isprintable() refuses."""
    class_members = [chr(code) for code in range(sys.maxunicode + 1) if unsafe_char().match(chr(code))]
    assert class_members and not [hex(ord(c)) for c in class_members if c.isprintable()]
    assert "\ufffe" in class_members and "\uffff" in class_members  # not XML characters


def test_escapes_are_visible_and_name_the_character() -> None:
    assert printable("a\nb\rc") == "a\\nb\\rc"
    assert printable("\x1b]8;;http://x\x07link") == "\\x1b]8;;http://x\\x07link"
    assert printable("\x9b31m") == "\\x9b31m"  # C1 CSI
    assert printable("admin\u202egnp.yaml") == "admin\\u202egnp.yaml"
    assert printable("a\u2066b\u2069") == "a\\u2066b\\u2069"
    assert printable("zero\u200bwidth") == "zero\\u200bwidth"
    assert printable("tag\U000e0041") == "tag\\U000e0041"
    assert printable("bad\udcff.yaml") == "bad\\xff.yaml"  # a byte that is not UTF-8, as os.fsdecode keeps it
    assert printable("tab\tstays") == "tab\tstays"


def test_workflow_commands_are_defused() -> None:
    assert printable("::error::x") == "\\x3a:error::x"
    assert printable(" \t::warning file=a::b") == " \t\\x3a:warning file=a::b"
    assert printable("\n::error::x") == "\\n\\x3a:error::x"  # one line, and its start is no command either
    assert printable("ok ##[add-mask]secret") == "ok ##\\x5badd-mask]secret"
    assert printable("a::b") == "a::b"  # only a leading :: is a command


@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=40))
def test_clean_text_is_returned_unchanged(text: str) -> None:
    if text.isprintable() and "##[" not in text and not text.lstrip().startswith("::"):
        assert printable(text) == text


def _hostile_text() -> st.SearchStrategy[str]:
    """Arbitrary text, weighted towards what attacks a terminal or a CI log."""
    pieces = st.sampled_from(
        [
            "\n",
            "\r",
            "\x1b[",
            "\x1b]8;;",
            "\x07",
            "\x9b",
            "\x85",
            "\u202e",
            "\u2066",
            "\u200b",
            "\ufeff",
            "\u2028",
            "::",
            "::error file=x::",
            "##[",
            "##[add-mask]",
            "%0A",
            "%",
            ",",
            ":",
            " ",
            "\t",
            "\udcff",
            "\ud800",
            "\x00",
        ]
    )
    any_char = st.characters(min_codepoint=0, max_codepoint=sys.maxunicode)  # surrogates included
    return st.lists(st.one_of(pieces, st.text(alphabet=any_char, max_size=4)), max_size=12).map("".join)


@given(_hostile_text())
def test_printable_text_holds_nothingactive(text: str) -> None:
    shown = printable(text)
    assert not any(active(c) for c in shown)
    assert "##[" not in shown and not shown.lstrip().startswith("::")
    shown.encode("utf-8")  # strict: no surrogate is left to crash a UTF-8 stdout


@given(_hostile_text(), _hostile_text())
def test_workflow_command_properties_and_data_read_back(file: str, message: str) -> None:
    """One annotation line, whatever the file name and message hold: the runner reads back the printable
    name and message, and no other command."""
    line = f"::error file={workflow_property(file)},line=3::{workflow_data(message)}"
    assert "\n" not in line and "\r" not in line and "##[" not in line
    parsed = runner_parse_v2(line)
    assert parsed is not None
    name, properties, data = parsed
    assert name == "error"
    assert properties == ({"file": printable(file)} if file else {}) | {"line": "3"}  # the runner drops empty values
    assert data == printable(message)


@given(_hostile_text())
def test_json_data_is_exact_valid_unicode_and_defused(text: str) -> None:
    encoded = json_defused(json.dumps(unicode_text(text)))
    assert "##[" not in encoded
    decoded = json.loads(encoded)
    decoded.encode("utf-8")  # no lone surrogate: strict JSON parsers (I-JSON, RFC 7493) accept it
    assert decoded == re.sub("[\ud800-\udfff]", "\ufffd", text)
