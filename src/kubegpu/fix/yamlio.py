"""Round-trip one YAML document with ruamel.yaml: read like kubectl (YAML 1.1), write it back as it was.

Keeps comments, key order, quotes, flow/block style and the document's own indentation; plain booleans and
nulls (`yes`, `~`) keep their spelling; lines that only differ in spacing are restored from the original.
"""

from __future__ import annotations

import io
import itertools
import re
import warnings
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any

import yaml
from ruamel.yaml import YAML
from ruamel.yaml.constructor import RoundTripConstructor
from ruamel.yaml.error import MantissaNoDotYAML1_1Warning
from ruamel.yaml.nodes import ScalarNode
from ruamel.yaml.representer import RoundTripRepresenter

from kubegpu.manifests.loader import C_SAFE_LOADER

_VERSION_PREFIX = "%YAML 1.1\n---\n"
BOOL_TAG = "tag:yaml.org,2002:bool"
NULL_TAG = "tag:yaml.org,2002:null"
STR_TAG = "tag:yaml.org,2002:str"


class VerbatimScalar(str):
    """A plain boolean or null scalar kept as written (`yes`, `On`, `~`, `Null`); `tag` says what it means."""

    tag: str

    def __new__(cls, text: str, tag: str) -> VerbatimScalar:
        made = super().__new__(cls, text)
        made.tag = tag
        return made


class _Constructor(RoundTripConstructor):
    """Round-trip constructor that keeps the spelling of plain booleans and nulls."""

    def construct_verbatim_bool(self, node: Any) -> Any:
        if node.anchor:
            return super().construct_yaml_bool(node)
        return VerbatimScalar(str(self.construct_scalar(node)), BOOL_TAG)

    def construct_verbatim_null(self, node: Any) -> Any:
        text = str(self.construct_scalar(node))
        if not text or node.anchor:
            return None
        return VerbatimScalar(text, NULL_TAG)


_Constructor.add_constructor(BOOL_TAG, _Constructor.construct_verbatim_bool)
_Constructor.add_constructor(NULL_TAG, _Constructor.construct_verbatim_null)


class _Representer(RoundTripRepresenter):
    """Round-trip representer that writes VerbatimScalar back with its original text."""

    def represent_verbatim(self, data: VerbatimScalar) -> ScalarNode:
        return self.represent_scalar(data.tag, str(data))


_Representer.add_representer(VerbatimScalar, _Representer.represent_verbatim)


@dataclass(frozen=True)
class Indent:
    """A document's block indentation in ruamel's terms: mapping indent, sequence indent, dash offset."""

    mapping: int = 2
    sequence: int = 2
    offset: int = 0


_KEY_ONLY = re.compile(r"^(?P<lead>[ ]*(?:-[ ]+)*)(?P<key>[^\s#\-][^#]*?|-[^\s][^#]*?):[ \t]*(#.*)?$")
_ITEM = re.compile(r"^(?P<indent>[ ]*)-(?P<gap>[ ]+)\S")


def detect_indent(text: str) -> Indent:
    """The most common mapping indent, sequence indent and dash offset of a block YAML document."""
    mapping: Counter[int] = Counter()
    offsets: Counter[tuple[int, int]] = Counter()
    lines = [line for line in text.split("\n") if line.strip() and not line.lstrip().startswith("#")]
    for current, following in itertools.pairwise(lines):
        match = _KEY_ONLY.match(current)
        if match is None:
            continue
        key_column = len(match.group("lead"))
        item = _ITEM.match(following)
        if item is not None:
            offset = len(item.group("indent")) - key_column
            if offset >= 0:
                offsets[(offset, offset + 1 + len(item.group("gap")))] += 1
            continue
        step = len(following) - len(following.lstrip(" ")) - key_column
        if step > 0:
            mapping[step] += 1
    mapping_indent = mapping.most_common(1)[0][0] if mapping else 2
    if offsets:
        offset, sequence = offsets.most_common(1)[0][0]
    else:
        offset, sequence = 0, mapping_indent
    return Indent(mapping_indent, max(sequence, offset + 2), offset)


def preferred_quote(text: str) -> str:
    """`"` or `'`: the quote the document uses most for values (double when it uses none)."""
    double = len(re.findall(r":[ \t]+\"", text)) + len(re.findall(r"-[ \t]+\"", text))
    single = len(re.findall(r":[ \t]+'", text)) + len(re.findall(r"-[ \t]+'", text))
    return "'" if single > double else '"'


def make_yaml(indent: Indent) -> YAML:
    """A round-trip YAML instance: YAML 1.1 like kubectl, quotes kept, lines never re-wrapped."""
    handle = YAML(typ="rt")
    handle.Constructor = _Constructor
    handle.Representer = _Representer
    handle.version = (1, 1)
    handle.preserve_quotes = True
    handle.width = 1 << 30
    handle.indent(mapping=indent.mapping, sequence=indent.sequence, offset=indent.offset)
    return handle


def load_document(handle: YAML, body: str) -> Any:
    """Parse one document body (no `---` line) into a round-trip tree.

    ruamel warns about YAML 1.1 floats without a dot (`1e3`); kubectl reads those as strings and the tree keeps
    their spelling either way, so the warning is not the user's concern here.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MantissaNoDotYAML1_1Warning)
        return handle.load(body)


def dump_document(handle: YAML, tree: Any) -> str:
    """Emit a round-trip tree as one document body without the `%YAML` directive ruamel adds."""
    out = io.StringIO()
    handle.dump(tree, out)
    text = out.getvalue()
    if text.startswith(_VERSION_PREFIX):
        text = text[len(_VERSION_PREFIX) :]
    elif text.startswith("%YAML"):
        text = text.split("\n", 2)[2] if text.count("\n") >= 2 else ""
    return text


def _normal(line: str) -> str:
    stripped = line.lstrip(" ")
    return line[: len(line) - len(stripped)] + re.sub(r"\s+", "", stripped)


def restore_spacing(original: str, emitted: str, read: Callable[[str], Any] | None = None) -> str:
    """Take back original lines that the emitter only re-spelled (`{ a: 1 }`, `[{port: 80}]`, trailing blanks).

    Lines equal up to spacing are restored; with `read` (text -> data), other changed lines that sit opposite an
    original line are restored one by one while the text still reads as the same data as `emitted`.
    """
    old = original.split("\n")
    new = emitted.split("\n")
    out: list[str] = []
    candidates: list[tuple[int, str]] = []
    for tag, i1, i2, j1, j2 in _line_opcodes([_normal(x) for x in old], [_normal(x) for x in new]):
        if tag == "equal":
            out.extend(old[i1:i2])
        elif tag == "replace":
            for offset, line in _pair_lines(old[i1:i2], new[j1:j2]):
                if line is not None:
                    candidates.append((len(out) + offset, line))
            out.extend(new[j1:j2])
        else:
            out.extend(new[j1:j2])
    if read is None or not candidates:
        return "\n".join(out)
    target = _read_or_none(read, emitted)
    trial = list(out)
    for index, line in candidates:
        trial[index] = line
    if _read_or_none(read, "\n".join(trial)) == target:
        return "\n".join(trial)
    for index, line in candidates[:_MAX_LINE_TRIALS]:
        trial = list(out)
        trial[index] = line
        if _read_or_none(read, "\n".join(trial)) == target:
            out = trial
    return "\n".join(out)


_MAX_LINE_TRIALS = 40
_SMALL = 2000  # lines in the changed middle below which difflib's alignment is used
_WINDOW = 64  # lines the greedy walk looks ahead to resynchronise


def _greedy_opcodes(old: list[str], new: list[str]) -> list[tuple[str, int, int, int, int]]:
    """Opcodes by walking both texts: equal lines pair up; at a difference, the nearest resynchronisation
    within _WINDOW lines (lines inserted, or deleted) is taken, else one line is replaced. O(n * window)."""
    ops: list[tuple[str, int, int, int, int]] = []

    def emit(tag: str, i1: int, i2: int, j1: int, j2: int) -> None:
        if ops and ops[-1][0] == tag and ops[-1][2] == i1 and ops[-1][4] == j1:
            ops[-1] = (tag, ops[-1][1], i2, ops[-1][3], j2)
        else:
            ops.append((tag, i1, i2, j1, j2))

    i = j = 0
    while i < len(old) and j < len(new):
        if old[i] == new[j]:
            emit("equal", i, i + 1, j, j + 1)
            i, j = i + 1, j + 1
            continue
        step = None
        for d in range(1, _WINDOW):
            if j + d < len(new) and new[j + d] == old[i]:
                step = ("insert", i, i, j, j + d)
                break
            if i + d < len(old) and old[i + d] == new[j]:
                step = ("delete", i, i + d, j, j)
                break
        if step is None:
            step = ("replace", i, i + 1, j, j + 1)
        emit(*step)
        i, j = step[2], step[4]
    if i < len(old) or j < len(new):
        emit(
            "replace" if i < len(old) and j < len(new) else "delete" if i < len(old) else "insert",
            i,
            len(old),
            j,
            len(new),
        )
    return ops


def _line_opcodes(old: list[str], new: list[str]) -> list[tuple[str, int, int, int, int]]:
    """difflib opcodes turning `old` into `new`, in about linear time for texts that differ in a few places.

    The common head and tail are cut first; a small middle is matched by difflib, a large one by a greedy walk
    that resynchronises within a window of lines: difflib took quadratic time on a JSON List of pods
    (thousands of identical `},` lines: 2.4 s for 1,250 pods, 54.8 s for 10,000). Either way "equal" blocks
    hold equal lines only.
    """
    head = 0
    limit = min(len(old), len(new))
    while head < limit and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < limit - head and old[len(old) - 1 - tail] == new[len(new) - 1 - tail]:
        tail += 1
    ops: list[tuple[str, int, int, int, int]] = []
    if head:
        ops.append(("equal", 0, head, 0, head))
    a, b = old[head : len(old) - tail], new[head : len(new) - tail]
    middle = (
        SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
        if len(a) + len(b) <= _SMALL
        else _greedy_opcodes(a, b)
    )
    for tag, i1, i2, j1, j2 in middle:
        ops.append((tag, i1 + head, i2 + head, j1 + head, j2 + head))
    if tail:
        ops.append(("equal", len(old) - tail, len(old), len(new) - tail, len(new)))
    return ops


def _pair_lines(old: list[str], new: list[str]) -> list[tuple[int, str | None]]:
    """For each emitted line of a changed block, the original line it may stand for: same content whatever the
    indentation, else the line in the same place when both blocks have the same length."""
    pairs: list[tuple[int, str | None]] = [(j, None) for j in range(len(new))]
    content = SequenceMatcher(
        None, [re.sub(r"\s+", "", x) for x in old], [re.sub(r"\s+", "", x) for x in new], autojunk=False
    )
    for tag, i1, i2, j1, j2 in content.get_opcodes():
        if tag == "equal" or (tag == "replace" and i2 - i1 == j2 - j1):
            for k in range(j2 - j1):
                pairs[j1 + k] = (j1 + k, old[i1 + k])
    return pairs


def _read_or_none(read: Callable[[str], Any], text: str) -> Any:
    try:
        return read(text)
    except Exception:  # a trial line that breaks the document is simply not taken
        return _Unreadable()


class _Unreadable:
    """Stands for text that does not parse; equal to nothing."""

    def __eq__(self, other: object) -> bool:
        return False

    def __hash__(self) -> int:
        return 0


def comments(text: str, inline: bool = True) -> Counter[str]:
    """Every full-line comment and every `  # comment` after a value (outside balanced quotes, a close estimate)."""
    found: Counter[str] = Counter()
    for line in text.split("\n"):
        stripped = line.strip()
        if stripped.startswith("#"):
            found[stripped] += 1
            continue
        at = stripped.find(" #") if inline else -1
        if at > 0 and stripped[:at].count('"') % 2 == 0 and stripped[:at].count("'") % 2 == 0:
            found[stripped[at + 1 :]] += 1
    return found


def keeps_comments(original: str, fixed: str, inline: bool = True, lost: Counter[str] | None = None) -> bool:
    """True when every comment of `original` is still in `fixed` (without `inline`: full-line comments only,
    for edits that remove lines, whose own inline comments go with them), apart from those in `lost` (trailing
    comments the fix removed on purpose from the lines it rewrote)."""
    return not comments(original, inline) - comments(fixed, inline) - (lost or Counter())


def plain_data(text: str) -> Any:
    """What kubectl would read from one document (C loader, YAML 1.1); for before/after comparisons."""
    return yaml.load(text, Loader=C_SAFE_LOADER)


def needs_quotes(handle: YAML, value: str) -> bool:
    """True when `value` written plain would not read back as the same string under YAML 1.1."""
    resolver = handle.resolver
    tag = resolver.resolve(ScalarNode, value, (True, False))
    return bool(tag != STR_TAG)
