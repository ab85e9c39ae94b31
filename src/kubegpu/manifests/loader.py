"""Load YAML and JSON streams into Documents with the libyaml C parser, keeping node marks.

Reads like kubectl (YAML 1.1 scalars, timestamps stay strings); reports duplicate keys, alias bombs,
parse errors and non-objects as InputProblems and goes on with the rest of the stream.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import yaml

from kubegpu.errors import InputError
from kubegpu.manifests.document import Document
from kubegpu.manifests.placeholders import may_hold_placeholders

# libyaml's safe loader (PyYAML's own where libyaml is missing): every module that parses YAML reads through it
C_SAFE_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

DEFAULT_MAX_EXPANDED_NODES = 1_000_000
MAX_NESTING_DEPTH = 100
"""Mappings and lists nested deeper than this are refused: Kubernetes objects, CRD schemas included, need
a few dozen levels, and every reader of the data (rules, fix, the webhook) may then walk it recursively."""
_DOC_START = re.compile(r"^---", re.MULTILINE)


@dataclass(frozen=True)
class InputProblem:
    """Something in the input that is not a readable Kubernetes object, with where it is.

    `fatal` problems make the input unreadable (exit code 2); the others are findings.
    """

    code: str  # parse-error, duplicate-key, not-kubernetes-object, alias-bomb, unreadable-file
    file: str
    line: int
    column: int
    message: str
    fatal: bool = True
    # The problem without what lint does about it (a not-kubernetes-object is "skipped" by lint, refused by the
    # commands that need the object): each reader says its own consequence after it.
    reason: str = ""


@dataclass
class LoadResult:
    """The documents read from one input, and every problem met on the way."""

    documents: list[Document] = field(default_factory=list)
    problems: list[InputProblem] = field(default_factory=list)
    other_documents: int = 0  # documents that are not Kubernetes objects and do not look like one


def looks_like_object(data: Any) -> bool:
    """A mapping meant as a Kubernetes object: it has apiVersion or kind, or metadata with a spec or data."""
    if not isinstance(data, Mapping):
        return False
    if "apiVersion" in data or "kind" in data:
        return True
    return isinstance(data.get("metadata"), Mapping) and ("spec" in data or "data" in data)


_STR_TAG = "tag:yaml.org,2002:str"
_INT_TAG = "tag:yaml.org,2002:int"
_BOOL_TAG = "tag:yaml.org,2002:bool"
_NULL_TAG = "tag:yaml.org,2002:null"
_MAP_TAG = "tag:yaml.org,2002:map"
_SEQ_TAG = "tag:yaml.org,2002:seq"
_PLAIN_RESOLVER = yaml.resolver.Resolver()


@lru_cache(maxsize=1 << 16)
def _node_tag(kind: type[yaml.Node], value: str | None, implicit: tuple[bool, bool] | bool) -> str:
    """The tag the parser asks for an untagged node: YAML 1.1's for a plain scalar (it depends on the text alone,
    and manifests repeat their text), str for a quoted one, map or seq for collections (no path resolvers).

    Cached as a whole: the parser calls it for every node, and a cache hit runs no Python at all."""
    if kind is yaml.ScalarNode:
        if not (implicit[0] if isinstance(implicit, tuple) else implicit):
            return _STR_TAG
        tag: str = yaml.resolver.Resolver.resolve(  # type: ignore[no-untyped-call]
            _PLAIN_RESOLVER, yaml.ScalarNode, value, (True, False)
        )
        return tag
    return _MAP_TAG if kind is yaml.MappingNode else _SEQ_TAG


class NestingTooDeep(ValueError):
    """A document nests mappings and lists deeper than MAX_NESTING_DEPTH."""

    def __init__(self, limit: int = MAX_NESTING_DEPTH) -> None:
        super().__init__(f"mappings and lists nest deeper than {limit} levels: not read")


def nesting_exceeds(data: Any, limit: int = MAX_NESTING_DEPTH) -> bool:
    """Whether mappings and lists nest deeper than `limit` levels (iterative: any depth is safe to ask)."""
    stack: list[tuple[Any, int]] = [(data, 0)]
    seen: set[int] = set()
    while stack:
        value, depth = stack.pop()
        if not isinstance(value, dict | list) or id(value) in seen:
            continue
        if depth >= limit:
            return True
        seen.add(id(value))  # aliases share one object: walk it once (alias bombs are bounded elsewhere)
        children = value.values() if isinstance(value, dict) else value
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False


_NO_PATH_RESOLVERS: dict[object, object] = {}


class _MarkedLoader(C_SAFE_LOADER):  # type: ignore[misc,valid-type]
    """C-parsed, Python-constructed loader that records duplicate keys instead of hiding them.

    Tag resolution is memoised: the C parser asks Python for every scalar's tag, which was a third
    of the load time; the answer (YAML 1.1 rules, no path resolvers) depends only on the text.
    """

    resolve = staticmethod(_node_tag)

    # The parser calls these two around every node for path resolvers, of which this loader has none: C no-ops
    # (an empty dict's `get`, an empty tuple's `__len__`) instead of PyYAML's methods, two Python calls a node.
    descend_resolver = _NO_PATH_RESOLVERS.get
    ascend_resolver = ().__len__

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.duplicates: list[tuple[str, yaml.Mark]] = []

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        keys = [k.value for k, _ in node.value if k.tag == "tag:yaml.org,2002:str"]
        if len(set(keys)) != len(keys):  # rare: find which, with their marks
            seen: set[str] = set()
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:str":
                    if key_node.value in seen:
                        self.duplicates.append((key_node.value, key_node.start_mark))
                    seen.add(key_node.value)
        result: dict[Any, Any] = super().construct_mapping(node, deep=deep)
        return result

    def construct_tree(self, node: yaml.Node) -> Any:
        """Build a document's data: strings, numbers, mappings and sequences directly, other tags by PyYAML.

        Same values as `construct_document` (the constructor's generic per-node machinery was most of
        the load time); aliases still share one object, so the alias-bomb bound applies unchanged.
        """
        memo: dict[int, Any] = {}
        scalar_node, mapping_node, sequence_node = yaml.ScalarNode, yaml.MappingNode, yaml.SequenceNode
        scalars = {  # plain scalars of these tags need no bookkeeping: build them straight away
            _INT_TAG: self.construct_yaml_int,
            _BOOL_TAG: self.construct_yaml_bool,
            _NULL_TAG: self.construct_yaml_null,
        }

        def build(item: yaml.Node, depth: int = 0) -> Any:
            tag = item.tag
            item_type = type(item)
            if item_type is scalar_node:
                if tag == _STR_TAG:
                    return item.value
                text = item.value
                if tag == _INT_TAG and text.isdigit() and (text[0] != "0" or text == "0"):
                    return int(text)  # plain decimal (`replicas: 4`); octal, hex, `_` and `:` forms go below
                construct = scalars.get(tag)
                if construct is not None:
                    return construct(item)
            ident = id(item)
            if ident in memo:
                return memo[ident]
            if depth >= MAX_NESTING_DEPTH:
                raise NestingTooDeep()
            if tag == _MAP_TAG and type(item) is mapping_node:
                pairs = item.value
                mapping: dict[Any, Any] = {}
                memo[ident] = mapping
                for key, value in pairs:
                    if key.tag != _STR_TAG or type(key) is not scalar_node:
                        break  # a merge key or a complex key: PyYAML's constructor below handles it
                    # (string values, most of a manifest, inline: a call per value was a tenth of the load)
                    if value.tag == _STR_TAG and type(value) is scalar_node:
                        mapping[key.value] = value.value
                    else:
                        mapping[key.value] = build(value, depth + 1)
                else:
                    if len(mapping) != len(pairs):
                        self.construct_mapping(item)  # rare: records the duplicate keys with their marks
                    return mapping
                del memo[ident]
            elif tag == _SEQ_TAG and item_type is sequence_node:
                sequence: list[Any] = []
                memo[ident] = sequence
                sequence.extend(
                    [
                        value.value if value.tag == _STR_TAG and type(value) is scalar_node else build(value, depth + 1)
                        for value in item.value
                    ]
                )
                return sequence
            value = self.construct_object(item, deep=True)
            if nesting_exceeds(value, MAX_NESTING_DEPTH - depth):
                raise NestingTooDeep()
            memo[ident] = value
            return value

        try:
            return build(node)
        finally:
            self.constructed_objects.clear()
            self.recursive_objects.clear()
            # `build` refers to itself through its closure: break that cycle, or it and all it built would
            # live until the (paused) cyclic collector ran
            memo.clear()
            build = None  # type: ignore[assignment]  # empties the closure's cell


def _timestamp_as_string(loader: yaml.SafeLoader, node: yaml.Node) -> str:
    # kubectl (sigs.k8s.io/yaml) converts YAML to JSON, so dates stay strings.
    value = loader.construct_scalar(node)  # type: ignore[arg-type]
    return str(value)


_MarkedLoader.add_constructor("tag:yaml.org,2002:timestamp", _timestamp_as_string)


def expanded_size(data: Any, limit: int) -> int:
    """Nodes a full traversal would visit, counting each alias as its whole subtree; stops past limit."""
    memo: dict[int, int] = {}

    def size(value: Any) -> int:
        if not isinstance(value, dict | list):
            return 1
        key = id(value)
        if key in memo:
            return memo[key]
        children = value.values() if isinstance(value, dict) else value
        total = 1
        for child in children:
            total += size(child)
            if total > limit:
                break
        memo[key] = total
        return total

    return size(data)


def refuse_alias_bomb(data: Any, text: str, where: str, limit: int = DEFAULT_MAX_EXPANDED_NODES) -> None:
    """An InputError naming `where` when aliases make `data`, parsed from `text`, expand past `limit` nodes: for
    the files commands read with plain YAML (node profiles, cluster specs), as `load_text` bounds manifests."""
    if "*" in text and expanded_size(data, limit) > limit:
        raise InputError(f"aliases expand it past {limit} nodes (a YAML alias bomb)", file=where)


def load_text(name: str, text: str, *, max_expanded_nodes: int = DEFAULT_MAX_EXPANDED_NODES) -> LoadResult:
    """Parse a YAML or JSON stream; a parse error is reported and parsing resumes at the next `---`."""
    result = LoadResult()
    is_json = name.endswith(".json") or text.lstrip()[:1] in ("{", "[")
    if is_json and _json_data_only(name, text, result):
        return result
    offset_line = 0
    remaining = text
    index = 0
    check_aliases = "*" in text
    while True:
        error = _load_chunk(name, remaining, offset_line, is_json, check_aliases, max_expanded_nodes, result, index)
        index = len(result.documents) + sum(1 for p in result.problems if p.code != "duplicate-key")
        if error is None:
            break
        if is_json and not result.documents:
            _load_json_fallback(name, text, result, error)
            break
        # Resume after the broken document: at the next line that starts a document.
        error_line = error[0] - offset_line  # 1-based within `remaining`
        line_start = 0
        for _ in range(error_line - 1):
            next_newline = remaining.find("\n", line_start)
            if next_newline < 0:
                break
            line_start = next_newline + 1
        match = _DOC_START.search(remaining, max(line_start, 1))
        if match is None:
            break
        offset_line += remaining.count("\n", 0, match.start())
        remaining = remaining[match.start() :]
    if not may_hold_placeholders(text):
        for doc in result.documents:
            doc.placeholder_free = True
    return result


_OBJECT_WORDS = ("apiVersion", "kind", "metadata", "\\u")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _json_data_only(name: str, text: str, result: LoadResult) -> bool:
    """Read strict JSON that holds no Kubernetes object (request payloads, test data) the fast way; False when it
    might hold one or the YAML path could read it otherwise, which then decides.

    No key can be apiVersion, kind or metadata (not even \\u-escaped), so every value the YAML path would build is
    counted as another document and nothing else: parsed by the C JSON decoder, without node marks, the same
    count. Duplicate keys and nesting past the limit are left to the YAML path, which reports them.
    """
    if any(word in text for word in _OBJECT_WORDS) or _SURROGATE.search(text):
        return False  # lone surrogates (text decoded with surrogateescape) are the YAML path's parse error
    try:
        data, repeated = _strict_json(text)
    except (ValueError, RecursionError):
        return False
    if repeated or nesting_exceeds(data):
        return False
    _add_document(name, data, None, 1, 0, True, result, 0)
    return True


def _load_chunk(
    name: str,
    text: str,
    offset_line: int,
    is_json: bool,
    check_aliases: bool,
    max_expanded_nodes: int,
    result: LoadResult,
    index: int,
) -> tuple[int, str] | None:
    """Load documents from `text` into `result`; return (line, message) of a parse error, if any."""
    try:
        loader = _MarkedLoader(text)
    except UnicodeEncodeError as err:  # lone surrogates, e.g. from a JSON "\ud800" escape
        result.problems.append(
            InputProblem(
                "parse-error", name, 1 + offset_line, 1, f"not valid text: {err.reason} at character {err.start}"
            )
        )
        return None
    node: yaml.Node | None = None
    try:
        while loader.check_node():
            node = loader.get_node()
            if node is None:
                continue
            data = loader.construct_tree(node)
            line = node.start_mark.line + 1 + offset_line
            for key, dup_mark in loader.duplicates:
                result.problems.append(
                    InputProblem(
                        "duplicate-key",
                        name,
                        dup_mark.line + 1 + offset_line,
                        dup_mark.column + 1,
                        f"duplicate key {key!r}: kubectl and the API server reject it (strict decoding); "
                        "the YAML parser would silently keep the last value",
                        fatal=False,
                    )
                )
            loader.duplicates.clear()
            if check_aliases and expanded_size(data, max_expanded_nodes) > max_expanded_nodes:
                result.problems.append(
                    InputProblem(
                        "alias-bomb",
                        name,
                        line,
                        1,
                        f"aliases expand this document past {max_expanded_nodes} nodes (a YAML alias bomb); not read",
                    )
                )
                continue
            _add_document(name, data, node, line, offset_line, is_json, result, index)
            index += 1
    except yaml.MarkedYAMLError as err:
        mark: yaml.Mark | None = err.problem_mark or err.context_mark
        line = (mark.line + 1 if mark else 1) + offset_line
        column = mark.column + 1 if mark else 1
        problem = err.problem or str(err)
        context = f" {err.context}" if err.context else ""
        result.problems.append(
            InputProblem("parse-error", name, line, column, f"not valid YAML: {problem}{context}".strip())
        )
        return line, problem
    except NestingTooDeep as err:
        line = (node.start_mark.line + 1 if node is not None else 1) + offset_line
        result.problems.append(InputProblem("parse-error", name, line, 1, str(err)))
        return line, str(err)
    except RecursionError:
        result.problems.append(InputProblem("parse-error", name, 1 + offset_line, 1, str(NestingTooDeep())))
        return (1 + offset_line, str(NestingTooDeep())) if is_json else None
    except (yaml.YAMLError, ValueError, TypeError) as err:
        result.problems.append(
            InputProblem("parse-error", name, 1 + offset_line, 1, f"not valid YAML: {type(err).__name__}: {err}")
        )
        return (1 + offset_line, str(err)) if is_json else None
    finally:
        loader.dispose()
    return None


def _add_document(
    name: str,
    data: Any,
    node: yaml.Node | None,
    line: int,
    offset_line: int,
    is_json: bool,
    result: LoadResult,
    index: int,
) -> None:
    """Add a parsed document, expanding `kind: List` (and JSON arrays) into their items."""
    if data is None:
        return
    if isinstance(data, list) and is_json:
        for i, item in enumerate(data):
            _add_object(name, item, node, (i,), line, offset_line, is_json, result, index + i)
        return
    if isinstance(data, Mapping) and str(data.get("kind", "")).endswith("List") and isinstance(data.get("items"), list):
        for i, item in enumerate(data["items"]):
            _add_object(name, item, node, ("items", i), line, offset_line, is_json, result, index + i)
        return
    _add_object(name, data, node, (), line, offset_line, is_json, result, index)


def _add_object(
    name: str,
    data: Any,
    node: yaml.Node | None,
    prefix: tuple[str | int, ...],
    line: int,
    offset_line: int,
    is_json: bool,
    result: LoadResult,
    index: int,
) -> None:
    doc = Document(
        source=name,
        index=index,
        data=data,
        node=node,
        prefix=prefix,
        start_line=line,
        line_offset=offset_line,
        is_json=is_json,
    )
    if not isinstance(data, Mapping) or not data.get("kind") or not data.get("apiVersion"):
        if not looks_like_object(data):  # values, CI workflows, compose files, package manifests: not ours
            result.other_documents += 1
            return
        missing = " and ".join(key for key in ("apiVersion", "kind") if not data.get(key))
        loc = doc.location(())
        reason = f"document {index + 1} looks like a Kubernetes object but has no {missing}"
        result.problems.append(
            InputProblem(
                "not-kubernetes-object", name, loc.line, loc.column, f"{reason}; skipped", fatal=False, reason=reason
            )
        )
        return
    result.documents.append(doc)


def _strict_json(text: str) -> tuple[Any, list[str]]:
    """Strict JSON, keeping the last of repeated keys as the decoder does, and the keys repeated (in order)."""
    duplicates: list[str] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in items:
            if key in out:
                duplicates.append(key)
            out[key] = value
        return out

    return json.loads(text, object_pairs_hook=pairs), duplicates


def _load_json_fallback(name: str, text: str, result: LoadResult, yaml_error: tuple[int, str]) -> None:
    """Strict JSON for `.json` inputs the YAML 1.1 parser refuses (e.g. tabs); no positions then."""
    try:
        data, duplicates = _strict_json(text)
        if nesting_exceeds(data):
            raise NestingTooDeep()
    except json.JSONDecodeError as err:
        result.problems[:] = [p for p in result.problems if p.code != "parse-error"]
        result.problems.append(InputProblem("parse-error", name, err.lineno, err.colno, f"not valid JSON: {err.msg}"))
        return
    except (NestingTooDeep, RecursionError):
        result.problems[:] = [p for p in result.problems if p.code != "parse-error"]
        result.problems.append(InputProblem("parse-error", name, 1, 1, str(NestingTooDeep())))
        return
    result.problems[:] = [p for p in result.problems if p.code != "parse-error"]
    for key in duplicates:
        result.problems.append(
            InputProblem("duplicate-key", name, 1, 1, f"duplicate key {key!r}: the API server rejects it", fatal=False)
        )
    _add_document(name, data, None, 1, 0, True, result, 0)
