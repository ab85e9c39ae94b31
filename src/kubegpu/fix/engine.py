"""The fix loop: lint, apply the allowed fixes document by document, re-read, lint again; at most N passes.

Only documents with edits go through the round-trip parser; every other byte of the stream is kept as it was.
One planner serves files (`fix_text`) and single objects (`fix_object`, which the admission webhook turns into
a JSON Patch): the same order, overlap deferral, parent creation and pass loop.
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml
from ruamel.yaml.error import YAMLError

from kubegpu.fix import comments, jsondoc, patch, textpatch, yamlio
from kubegpu.fix.model import (
    REASON_DISPLAY,
    REASON_NO_FIX,
    REASON_UNSAFE,
    AppliedFix,
    FileOutcome,
    FixOptions,
    Remaining,
)
from kubegpu.fix.protocols import DISPLAY_ONLY, SAFE, UNSAFE, FindingLike, FixLike, LintFunction
from kubegpu.fix.stream import chunk_of_line, cut_chunk, split_stream
from kubegpu.manifests import Document, FieldPath, LoadResult, load_text

_FATAL_PROBLEMS = ("parse-error", "alias-bomb")


@dataclass(frozen=True)
class _Planned:
    """A fix chosen for this pass, with its edits' paths from the root of the parsed document."""

    finding: FindingLike
    fix: FixLike
    paths: tuple[FieldPath, ...]


@dataclass
class _PassResult:
    text: str
    applied: list[AppliedFix] = field(default_factory=list)
    skipped: dict[tuple[str, int], str] = field(default_factory=dict)


def allowed(fix: FixLike, options: FixOptions) -> bool:
    """Safe fixes always; unsafe ones with --unsafe-fixes; display-only ones never."""
    safety = str(fix.safety)
    return safety == SAFE or (safety == UNSAFE and options.unsafe)


def fix_text(name: str, text: str, lint: LintFunction, options: FixOptions | None = None) -> FileOutcome:
    """Fix one YAML/JSON stream: returns the fixed text and what was applied and what remains (and why)."""
    options = options or FixOptions()
    before = load_text(name, text)
    fatal = [p for p in before.problems if p.code in _FATAL_PROBLEMS]
    if fatal:
        first = fatal[0]
        return FileOutcome(
            name,
            text,
            text,
            error=f"line {first.line}: {first.message}",
            remaining=_remaining(lint(name, text), {}, options),
        )
    current = text
    applied: list[AppliedFix] = []
    skipped: dict[tuple[str, int], str] = {}
    findings = lint(name, current)
    passes = 0
    converged = True
    while True:
        candidates = [f for f in findings if f.fix is not None and f.document is not None and allowed(f.fix, options)]
        if not candidates:
            break
        if passes >= options.max_passes:
            converged = False
            break
        passes += 1
        result = _fix_pass(name, current, candidates, options.text_edits)
        skipped.update(result.skipped)
        if result.text == current:
            break
        problem = _broken(name, before, result.text)
        if problem is not None:
            return FileOutcome(
                name,
                text,
                text,
                error=f"{problem}; file left untouched",
                remaining=_remaining(lint(name, text), {}, options),
            )
        applied.extend(result.applied)
        current = result.text
        findings = lint(name, current)
    return FileOutcome(
        name,
        text,
        current,
        tuple(applied),
        _remaining(findings, skipped, options),
        tuple(sorted(set(skipped.values()))),
        None,
        passes,
        converged,
    )


def _remaining(
    findings: Sequence[FindingLike], skipped: dict[tuple[str, int], str], options: FixOptions
) -> tuple[Remaining, ...]:
    out = []
    for f in findings:
        if f.fix is None:
            reason = REASON_NO_FIX
        elif str(f.fix.safety) == DISPLAY_ONLY:
            reason = REASON_DISPLAY
        elif not allowed(f.fix, options):
            reason = REASON_UNSAFE
        else:
            reason = skipped.get((f.code, f.location.line), "the fix did not converge within the pass limit")
        out.append(Remaining(f.code, f.name, str(f.severity), f.location.line, f.message, reason))
    return tuple(out)


def _broken(name: str, before: LoadResult, fixed: str) -> str | None:
    """Why the fixed stream is worse than the original as input (new parse errors, lost documents), or None."""
    after = load_text(name, fixed)
    for code in (*_FATAL_PROBLEMS, "duplicate-key"):
        if sum(p.code == code for p in after.problems) > sum(p.code == code for p in before.problems):
            problem = next(p for p in after.problems if p.code == code)
            return f"the fixed text would not read back (line {problem.line}: {problem.message})"
    if len(after.documents) != len(before.documents):
        return f"the fixed text would hold {len(after.documents)} objects instead of {len(before.documents)}"
    return None


_ClaimPath = tuple[object, ...]


class _Claims:
    """Paths claimed by this pass's fixes in one document; `overlaps` asks in time linear in the path's length
    (comparing with every claimed path made a List of n pods take n² steps)."""

    def __init__(self) -> None:
        self.paths: set[_ClaimPath] = set()
        self.prefixes: set[_ClaimPath] = set()  # every prefix of every claimed path, the paths included

    def overlaps(self, path: _ClaimPath) -> bool:
        """Whether `path` is a prefix of a claimed path or has one as a prefix."""
        return path in self.prefixes or any(path[:k] in self.paths for k in range(len(path) + 1))

    def add(self, path: _ClaimPath) -> None:
        self.paths.add(path)
        self.prefixes.update(path[:k] for k in range(len(path) + 1))


def _fix_pass(name: str, text: str, candidates: Sequence[FindingLike], text_edits: bool = True) -> _PassResult:
    """Apply each candidate fix whose edits do not touch what an earlier fix in this pass touched."""
    chunks = split_stream(text)
    json_mode = all(f.document is not None and f.document.is_json for f in candidates)
    json_data: Any = None
    if json_mode:
        try:
            json_data = jsondoc.parse_json(text)
        except ValueError:
            json_mode = False
    result = _PassResult(text)

    def key_of(doc: Document) -> int:
        return 0 if json_mode else chunk_of_line(chunks, doc.start_line)

    plans = _plan(candidates, key_of, result)
    if json_mode:
        chosen = _select(json_data, plans.get(0, []), patch.Style(round_trip=False), result)
        if chosen:
            _record(result, chosen)
            result.text = jsondoc.dump_json(json_data, text, jsondoc.detect_json_style(text))
        return result
    pieces = [chunk.text for chunk in chunks]
    for index, planned in plans.items():
        pieces[index] = _fix_chunk(pieces[index], planned, result, text_edits)
    result.text = "".join(pieces)
    return result


def _plan(
    candidates: Sequence[FindingLike], key_of: Callable[[Document], int], result: _PassResult
) -> dict[int, list[_Planned]]:
    """This pass's fixes per document key, in (line, code) order; a fix whose edits touch a path an earlier fix
    of the same document claimed waits for the next pass (noted in `result.skipped`)."""
    plans: dict[int, list[_Planned]] = {}
    claimed: dict[int, _Claims] = {}
    for finding in sorted(candidates, key=lambda f: (f.location.line, f.code)):
        doc = finding.document
        fix = finding.fix
        assert doc is not None and fix is not None
        key = key_of(doc)
        paths = tuple((*doc.prefix, *edit.path) for edit in fix.edits)
        unique: list[_ClaimPath] = [tuple(_Append() if p == patch.APPEND else p for p in path) for path in paths]
        taken = claimed.setdefault(key, _Claims())
        if any(taken.overlaps(u) for u in unique):
            result.skipped[(finding.code, finding.location.line)] = (
                "its edits overlap another fix's; retried after re-linting"
            )
            continue
        for u in unique:
            taken.add(u)
        plans.setdefault(key, []).append(_Planned(finding, fix, paths))
    return plans


class _Append:
    """A stand-in for `-` that equals nothing else, so two appends to one list never overlap."""

    def __eq__(self, other: object) -> bool:
        return self is other

    def __hash__(self) -> int:
        return id(self)


def _select(
    tree: Any,
    planned: Sequence[_Planned],
    style: patch.Style,
    result: _PassResult,
    ops: list[dict[str, Any]] | None = None,
    owners: list[int] | None = None,
) -> list[_Planned]:
    """Apply whole fixes to `tree` in order, skipping (and noting) each fix whose path is gone; the applied ones.
    With `ops`, append the RFC 6902 operations of every applied edit (parents it creates first), and with `owners`
    the index (among the applied ones) of the fix each operation belongs to."""
    chosen: list[_Planned] = []
    for item in planned:
        created: set[FieldPath] = set()
        reason = None
        for edit, path in zip(item.fix.edits, item.paths, strict=True):
            reason = patch.check_edit(tree, edit.op, path, created)
            if reason is not None:
                break
            created.add(path)
        if reason is not None:
            result.skipped[(item.finding.code, item.finding.location.line)] = f"not applied: {reason}"
            continue
        for edit, path in zip(item.fix.edits, item.paths, strict=True):
            if ops is not None:
                added = patch.json_patch(tree, edit.op, path, edit.value)
                ops.extend(added)
                if owners is not None:
                    owners.extend(len(chosen) for _ in added)
            patch.apply_edit(tree, edit.op, path, edit.value, style)
        chosen.append(item)
    return chosen


# The findings of one object (the fixed object is linted again after each pass).
ObjectLint = Callable[[Mapping[str, Any]], Sequence[FindingLike]]


@dataclass(frozen=True)
class ObjectOutcome:
    """What fixing one object did: the fixed object, the fixes applied (in order), the findings of the fixed
    object, and the RFC 6902 operations that turn the original into it (`patch_owner`: for each operation, the
    index in `applied` of the fix it belongs to)."""

    fixed: dict[str, Any]
    applied: tuple[AppliedFix, ...]
    remaining: tuple[FindingLike, ...]
    patch: tuple[dict[str, Any], ...]
    passes: int = 0
    patch_owner: tuple[int, ...] = ()


def fix_object(
    obj: Mapping[str, Any],
    lint: ObjectLint,
    options: FixOptions | None = None,
    findings: Sequence[FindingLike] | None = None,
) -> ObjectOutcome:
    """Fix one object (plain JSON data, e.g. an admission request's pod) with the fix loop of `fix_text`: the
    allowed fixes in the same order, overlapping ones deferred to a re-lint, at most `options.max_passes`
    passes. `findings` are those of `obj` when the caller already has them."""
    options = options or FixOptions()
    current: dict[str, Any] = copy.deepcopy(dict(obj))
    found: Sequence[FindingLike] = lint(current) if findings is None else findings
    applied: list[AppliedFix] = []
    ops: list[dict[str, Any]] = []
    owner: list[int] = []
    passes = 0
    while passes < options.max_passes:
        candidates = [f for f in found if f.fix is not None and f.document is not None and allowed(f.fix, options)]
        if not candidates:
            break
        passes += 1
        result = _PassResult("")
        planned = _plan(candidates, lambda doc: doc.index, result)
        chosen: list[_Planned] = []
        for key in sorted(planned):
            owners: list[int] = []
            chosen_here = _select(current, planned[key], _PLAIN, result, ops, owners)
            owner.extend(len(applied) + len(chosen) + n for n in owners)
            chosen.extend(chosen_here)
        if not chosen:
            break
        _record(result, chosen)
        applied.extend(result.applied)
        found = lint(current)
    return ObjectOutcome(current, tuple(applied), tuple(found), tuple(ops), passes, tuple(owner))


_PLAIN = patch.Style(round_trip=False)


def _record(result: _PassResult, chosen: Sequence[_Planned], dropped: Sequence[comments.DroppedComment] = ()) -> None:
    for n, item in enumerate(chosen):
        doc = item.finding.document
        result.applied.append(
            AppliedFix(
                item.finding.code,
                item.finding.name,
                item.fix.description,
                str(item.fix.safety),
                item.finding.location.line,
                doc.index if doc is not None else 0,
                item.paths,
                tuple(d.text for d in dropped if d.owner == n),
            )
        )


def _fix_chunk(text: str, planned: Sequence[_Planned], result: _PassResult, text_edits: bool = True) -> str:
    """Apply fixes to one document: as text insertions when simple, else through the round-trip emitter;
    either way the result must read back as exactly the intended data, or the chunk is kept as it was."""
    parts = cut_chunk(text)

    def skip(reason: str, items: Sequence[_Planned]) -> str:
        for item in items:
            result.skipped[(item.finding.code, item.finding.location.line)] = reason
        return text

    if parts is None:
        return skip("not applied: the document starts on its '---' line, which kubegpu does not rewrite", planned)
    try:
        expected = yamlio.plain_data(parts.body)
        chosen = _select(expected, planned, patch.Style(round_trip=False), result)
    except (yaml.YAMLError, patch.PatchError) as err:
        return skip(f"not applied: {err}", planned)
    if not chosen:
        return text
    indent = yamlio.detect_indent(parts.body)
    quote = yamlio.preferred_quote(parts.body)
    edits = [
        (n, e.op, p, e.value) for n, item in enumerate(chosen) for e, p in zip(item.fix.edits, item.paths, strict=True)
    ]
    done = _text_path(parts.body, edits, indent, quote, expected) if text_edits else None
    if done is None:
        done = _round_trip_path(parts.body, edits, indent, quote, expected)
    if done is None:
        return skip(
            "not applied: the rewritten document would not read back as the intended edit with every comment kept",
            chosen,
        )
    body, dropped = done
    _record(result, chosen, dropped)
    return parts.join(body)


_OwnedEdit = tuple[int, str, FieldPath, Any]  # (index of the fix in this pass, op, path, value)


def _settle_comments(
    body: str, fixed: str, edits: Sequence[_OwnedEdit], expected: Any, removes: bool
) -> tuple[str, list[comments.DroppedComment]] | None:
    """Drop the trailing comments of the lines the edits rewrote, then check the result: it reads as the intended
    data and every other comment is still there (without inline ones when lines were removed with theirs)."""
    fixed, dropped = comments.drop_stale_comments(body, fixed, edits)
    if yamlio.plain_data(fixed) != expected:
        return None
    allowed_loss = Counter(d.text for d in dropped)
    return (fixed, dropped) if yamlio.keeps_comments(body, fixed, inline=not removes, lost=allowed_loss) else None


def _text_path(
    body: str, edits: Sequence[_OwnedEdit], indent: yamlio.Indent, quote: str, expected: Any
) -> tuple[str, list[comments.DroppedComment]] | None:
    if not textpatch.usable(body):
        return None
    try:
        fixed = textpatch.apply_text_edits(body, [(op, p, v) for _n, op, p, v in edits], indent, quote)
        return _settle_comments(body, fixed, edits, expected, removes=False)
    except (textpatch.Unsupported, yaml.YAMLError):
        return None


def _round_trip_path(
    body: str, edits: Sequence[_OwnedEdit], indent: yamlio.Indent, quote: str, expected: Any
) -> tuple[str, list[comments.DroppedComment]] | None:
    handle = yamlio.make_yaml(indent)
    try:
        tree = yamlio.load_document(handle, body)
        style = patch.Style(True, quote, lambda v: yamlio.needs_quotes(handle, v))
        for _n, op, path, value in edits:
            patch.apply_edit(tree, op, path, value, style)
        emitted = yamlio.dump_document(handle, tree)
        actual = yamlio.plain_data(emitted)
    except (YAMLError, yaml.YAMLError, patch.PatchError, ValueError):
        return None
    if actual != expected:
        return None
    restored = yamlio.restore_spacing(body, emitted, yamlio.plain_data)
    try:
        result = restored if yamlio.plain_data(restored) == actual else emitted
    except yaml.YAMLError:  # a restored line did not fit the re-emitted lines around it
        result = emitted
    removes = any(op == "remove" for _n, op, _path, _value in edits)
    try:
        return _settle_comments(body, result, edits, expected, removes)
    except yaml.YAMLError:
        return None
