"""Leave out of rendered output the bodies of objects no rule reads, before they are parsed: a kustomization's
CustomResourceDefinitions are megabytes of schema that lint would build, hold and never look at.

Such an object keeps its `apiVersion`, `kind` and `metadata` (what the summary counts, suppressions and origin
annotations read) on their own lines; every other top-level field becomes empty lines, so the lines of the text,
and the positions of the objects kept whole, stay what the renderer printed. An object whose text is not plainly
laid out (flow style, anchors read by its header, top-level merge keys) is kept whole.
"""

from __future__ import annotations

import hashlib
import itertools
import re
from collections.abc import Callable

import yaml

from kubegpu.manifests.loader import C_SAFE_LOADER

_DOC_START = re.compile(r"^---", re.MULTILINE)
_TOP_KEY = re.compile(r"([A-Za-z_][A-Za-z0-9_.-]*)[ \t]*:(?:[ \t]|$)")
_SIMPLE_VALUE = re.compile(r"""[ \t]*(["']?)([A-Za-z0-9][A-Za-z0-9./-]*)\1[ \t]*(?:#.*)?$""")
HEADER = frozenset({"apiVersion", "kind", "metadata"})


def strip_unread(
    text: str, unread: Callable[[str, str], bool], checked: bool = False, known: dict[bytes, bool] | None = None
) -> tuple[str, int]:
    """`text` with the objects of kinds `unread(api_version, kind)` says no rule reads cut to their header, and how
    many were cut. Lines are kept: a cut field leaves its newlines.

    `checked` (a file someone wrote, not a renderer's output): an object is cut only when the YAML parser reads
    it without an error, an alias or a repeated key, so that every problem the loader reports is still reported;
    `known` remembers the answer per document text (by digest) for the run.
    """
    starts = [m.start() for m in _DOC_START.finditer(text)]
    if not starts or starts[0] != 0:
        starts.insert(0, 0)
    starts.append(len(text))
    parts: list[str] = []
    cut = 0
    for begin, end in itertools.pairwise(starts):
        chunk = text[begin:end]
        reduced = _header_only(chunk, unread)
        if reduced is None or (checked and not _well_formed_known(chunk, known)):
            parts.append(chunk)
        else:
            parts.append(reduced)
            cut += 1
    return "".join(parts), cut


def _header_only(chunk: str, unread: Callable[[str, str], bool]) -> str | None:
    """The document `chunk` cut to its header when its kind is unread and its layout plain; else None."""
    if "CustomResourceDefinition" not in chunk and len(chunk) < 4096:
        return None  # small objects cost little to build: only large ones are worth the scan
    lines = chunk.split("\n")
    blocks: list[tuple[str, int]] = []  # (top-level key, its first line)
    for number, line in enumerate(lines):
        first = line[:1]
        if first in ("", " ", "\t", "#") or (number == 0 and line.startswith("---")):
            continue
        if first == "-" and blocks:  # a block sequence that a top-level key holds, written at column 0
            continue
        match = _TOP_KEY.match(line)
        if match is None or _continues(line[match.end() :]):
            return None  # flow style, a complex key, a document marker inside: keep it whole
        blocks.append((match.group(1), number))
    keys = [key for key, _ in blocks]
    if "apiVersion" not in keys or "kind" not in keys or len(set(keys)) != len(keys):
        return None
    values: dict[str, str] = {}
    for key, number in blocks:
        if key in ("apiVersion", "kind"):
            found = _SIMPLE_VALUE.match(lines[number], lines[number].index(":") + 1)
            if found is None:
                return None
            values[key] = found.group(2)
    kind = values["kind"]
    if kind.endswith("List") or not unread(values["apiVersion"], kind):
        return None
    bounds = [number for _key, number in blocks] + [len(lines)]
    out = lines[: bounds[0]]
    for (key, number), after in zip(blocks, bounds[1:], strict=True):
        kept = lines[number:after]
        if key in HEADER:
            if any("*" in line for line in kept):
                return None  # an alias: it may name an anchor in a field cut below
            out.extend(kept)
        else:
            out.extend([""] * len(kept))
    return "\n".join(out)


_CLOSING = {"{": "}", "[": "]", '"': '"', "'": "'"}


def _continues(value: str) -> bool:
    """A top-level value that opens a flow collection or a quoted scalar it does not close on its line: its next
    lines may start at column 0 and read like keys."""
    value = value.strip()
    closing = _CLOSING.get(value[:1])
    return closing is not None and (len(value) < 2 or not value.endswith(closing))


def _well_formed_known(chunk: str, known: dict[bytes, bool] | None) -> bool:
    """`_well_formed`, asked once per distinct text when `known` is given."""
    if known is None:
        return _well_formed(chunk)
    digest = hashlib.blake2b(chunk.encode("utf-8", "surrogatepass"), digest_size=16).digest()
    answer = known.get(digest)
    if answer is None:
        answer = known[digest] = _well_formed(chunk)
    return answer


def _well_formed(chunk: str) -> bool:
    """The document parses (events only: nothing is built) without an alias and without a key repeated in a
    mapping, so the loader would report nothing in it. Doubtful cases (a complex key) say no.

    One call per event on the C parser (no generator) and the open collections' state in locals: this runs over
    every large CRD of a repository, and the per-event overhead is its whole cost."""
    scalar, mapping_start, sequence_start = yaml.ScalarEvent, yaml.MappingStartEvent, yaml.SequenceStartEvent
    ends, alias, stream_end = (yaml.MappingEndEvent, yaml.SequenceEndEvent), yaml.AliasEvent, yaml.StreamEndEvent
    keys: set[str] | None = None  # the innermost open mapping's keys so far; None inside a sequence or at the top
    key_next = False  # in that mapping, the next node is a key
    outer: list[tuple[set[str] | None, bool]] = []  # the same, for each enclosing collection
    loader = C_SAFE_LOADER(chunk)
    next_event: Callable[[], yaml.Event] = loader.get_event
    try:
        while True:
            event = next_event()
            kind = type(event)
            if kind is scalar:
                if keys is not None:
                    if key_next:
                        value: str = event.value  # type: ignore[attr-defined]
                        if value in keys:
                            return False
                        keys.add(value)
                    key_next = not key_next
            elif kind is mapping_start or kind is sequence_start:
                if keys is not None:
                    if key_next:
                        return False  # a complex key
                    key_next = True  # once this value closes, a key comes
                outer.append((keys, key_next))
                keys, key_next = (set(), True) if kind is mapping_start else (None, False)
            elif kind in ends:
                keys, key_next = outer.pop()
            elif kind is alias:
                return False
            elif kind is stream_end:
                return True
    except yaml.YAMLError:
        return False
    finally:
        loader.dispose()
