"""Lint large inputs in several processes, each parsing and linting its own share of the files.

Checks that read other objects (a TrainJob's runtime, an HPA's target, a PodGroup's pods) still see them:
before linting, the processes swap the plain data of the objects such checks can read (RuleContext's
contract: the looked-up kinds, or everything when an object whose check reads the whole input is
there); only findings come back.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import pickle
import threading
import traceback
from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from kubegpu.collector import gc_paused
from kubegpu.lint.config import LintConfig
from kubegpu.lint.engine import (
    LintResult,
    LoadedSource,
    Prepared,
    in_order,
    lint_loaded,
    lint_streaming,
    load_source,
)
from kubegpu.lint.processes import Input
from kubegpu.manifests import Document, Location, ObjectRef
from kubegpu.manifests.sources import HELM, KUSTOMIZE
from kubegpu.ruleapi import LOOKED_UP_KINDS, WHOLE_INPUT_KINDS, Finding, Fix, NodeTarget, Severity
from kubegpu.workloads.expand import with_embedded

# One input file: its position in discovery order, display name, path (None for stdin) and kind.
_Entry = tuple[int, str, Path | None, str]
# The plain data of one parsed object, enough to rebuild a Document without its node tree.
_PortableDocument = tuple[str, int, Any, tuple[str | int, ...], int, int, bool]


class ParallelLintError(RuntimeError):
    """A worker process failed (a bug, not bad input: input problems are findings)."""


@dataclass(frozen=True)
class _Share:
    """What one process lints: entries in discovery order."""

    entries: tuple[_Entry, ...]


def lint_inputs_parallel(
    inputs: Sequence[Input], sizes: Sequence[int], config: LintConfig, processes: int, target: NodeTarget | None = None
) -> LintResult:
    """Lint discovered inputs of these sizes with `processes` processes (this one included), as one would."""
    shares = _split(inputs, sizes, processes)
    fork = multiprocessing.get_context("fork")
    workers: list[tuple[Any, Connection]] = []
    try:
        for share in shares[1:]:
            ours, theirs = fork.Pipe()
            worker = fork.Process(target=_worker, args=(share, config, target, theirs), daemon=True)
            worker.start()
            theirs.close()
            workers.append((worker, ours))
        with gc_paused():
            loaded = _load(shares[0], config)
            # Share every object only when some check reads the whole input; else only the looked-up kinds.
            wanted = [_receive(connection) == b"1" for _worker_process, connection in workers]
            whole = _reads_whole_input(loaded) or any(wanted)
            for _worker_process, connection in workers:
                connection.send_bytes(b"1" if whole else b"0")
            own = _portable(shares[0], loaded, whole)
            blobs = _swap(pickle.dumps(own, pickle.HIGHEST_PROTOCOL), [c for _w, c in workers])
            for i, (_worker_process, connection) in enumerate(workers):
                connection.send_bytes(pickle.dumps([b for j, b in enumerate(blobs) if j != i], pickle.HIGHEST_PROTOCOL))
            portable = dict(own)
            for blob in blobs:
                portable.update(pickle.loads(blob))
            everything = _all_documents(shares[0], loaded, portable)
            result = lint_loaded(loaded, config, context_documents=everything, whole_input_shared=whole, target=target)
            _gather(result, workers)
    finally:
        _reap(workers)
    return in_order(result)


def _swap(own: bytes, connections: Sequence[Connection]) -> list[bytes]:
    """Send `own` to every worker while receiving theirs, so that both sides pickle and send at once."""
    senders = [
        threading.Thread(target=_send_quietly, args=(connection, own), daemon=True) for connection in connections
    ]
    for sender in senders:
        sender.start()
    try:
        return [_receive(connection) for connection in connections]
    finally:
        for sender in senders:
            sender.join()


def _send_quietly(connection: Connection, payload: bytes) -> None:
    with contextlib.suppress(OSError):  # the worker died; receiving from it reports that
        connection.send_bytes(payload)


def _split(inputs: Sequence[Input], sizes: Sequence[int], processes: int) -> list[_Share]:
    """Shares of about equal bytes (largest files first into the lightest share); stdin stays here."""
    entries = [(i, name, path, kind) for i, (name, path, kind) in enumerate(inputs)]
    bins: list[list[_Entry]] = [[] for _ in range(processes)]
    loads = [0] * processes
    for size, entry in sorted(zip(sizes, entries, strict=True), key=lambda item: -item[0]):
        # stdin, charts and kustomizations stay here: findings of rendered inputs are merged across them
        target = 0 if entry[2] is None or entry[3] in (HELM, KUSTOMIZE) else loads.index(min(loads))
        bins[target].append(entry)
        loads[target] += size
    return [_Share(tuple(sorted(b))) for b in bins]


def _load(share: _Share, config: LintConfig) -> list[LoadedSource]:
    return [
        load_source(name, path, kind, config.max_file_bytes, config.render) for _i, name, path, kind in share.entries
    ]


def _reads_whole_input(loaded: Sequence[LoadedSource]) -> bool:
    return any(doc.kind in WHOLE_INPUT_KINDS for item in loaded for doc in item.documents)


def _portable(share: _Share, loaded: Sequence[LoadedSource], whole: bool) -> list[tuple[int, list[_PortableDocument]]]:
    """The plain data of the share's objects: all of them, or only those of kinds that checks look up."""
    return [
        (
            entry[0],
            [
                (d.source, d.index, d.data, d.prefix, d.start_line, d.line_offset, d.is_json)
                for d in (item.documents if whole else with_embedded(item.documents))
                if whole or d.kind in LOOKED_UP_KINDS
            ],
        )
        for entry, item in zip(share.entries, loaded, strict=True)
    ]


def _all_documents(
    share: _Share, loaded: Sequence[LoadedSource], portable: dict[int, list[_PortableDocument]]
) -> tuple[Document, ...]:
    """Every object of the input in discovery order: this share's own, the others' rebuilt without nodes."""
    own = {entry[0]: item.documents for entry, item in zip(share.entries, loaded, strict=True)}
    out: list[Document] = []
    for index in sorted(own.keys() | portable.keys()):
        if index in own:
            out.extend(own[index])
        else:
            out.extend(
                Document(
                    source=source,
                    index=i,
                    data=data,
                    prefix=prefix,
                    start_line=line,
                    line_offset=offset,
                    is_json=is_json,
                )
                for source, i, data, prefix, line, offset, is_json in portable[index]
            )
    return tuple(out)


def _worker(share: _Share, config: LintConfig, target: NodeTarget | None, connection: Connection) -> None:
    """A forked process: load the share, swap data with the parent, lint, send the findings back."""
    try:
        with gc_paused():
            loaded = _load(share, config)
            connection.send_bytes(_OK + (b"1" if _reads_whole_input(loaded) else b"0"))
            whole = connection.recv_bytes() == b"1"
            connection.send_bytes(_OK + pickle.dumps(_portable(share, loaded, whole), pickle.HIGHEST_PROTOCOL))
            portable: dict[int, list[_PortableDocument]] = dict(pickle.loads(connection.recv_bytes()))
            for blob in pickle.loads(connection.recv_bytes()):
                portable.update(pickle.loads(blob))
            everything = _all_documents(share, loaded, portable)
            result = lint_loaded(loaded, config, context_documents=everything, whole_input_shared=whole, target=target)
            connection.send_bytes(_OK + _payload(result))
    except EOFError:  # the parent is gone or failed: nothing to report to
        pass
    except BaseException:  # reported to the parent, which raises it
        connection.send_bytes(_FAILED + traceback.format_exc().encode())
    finally:
        connection.close()


def lint_streaming_parallel(
    inputs: Sequence[Input],
    sizes: Sequence[int],
    config: LintConfig,
    processes: int,
    prepared: Prepared,
    target: NodeTarget | None = None,
) -> LintResult:
    """Stream the inputs in `processes` processes: each lints its share file by file.

    No object data is exchanged: the objects checks look up were loaded before forking (`prepared`), so
    every process has them; only findings and counts come back.
    """
    shares = _split(inputs, sizes, processes)
    fork = multiprocessing.get_context("fork")
    workers: list[tuple[Any, Connection]] = []
    try:
        for share in shares[1:]:
            ours, theirs = fork.Pipe(duplex=False)
            worker = fork.Process(
                target=_stream_worker, args=(inputs, share, prepared, config, target, theirs), daemon=True
            )
            worker.start()
            theirs.close()
            workers.append((worker, ours))
        with gc_paused():
            result = lint_streaming(inputs, [entry[0] for entry in shares[0].entries], prepared, config, target)
            _gather(result, workers)
    finally:
        _reap(workers)
    return in_order(result)


def _gather(result: LintResult, workers: list[tuple[Any, Connection]]) -> None:
    """Merge every worker's answer into `result`, in worker order."""
    for _worker_process, connection in workers:
        _merge(result, pickle.loads(_receive(connection)))


def _reap(workers: list[tuple[Any, Connection]]) -> None:
    """Close each worker's connection and end its process (killed when it does not exit in 5 s)."""
    for process, connection in workers:
        connection.close()
        process.join(timeout=5)
        if process.is_alive():
            process.kill()


def _payload(result: LintResult) -> bytes:
    """A process's result as the parent merges it (`_merge`): counts, the findings as columns, and the lists."""
    payload = (
        (
            result.files,
            result.documents,
            result.templates,
            result.gpu_templates,
            result.suppressed,
            result.generic,
            result.unread,
        ),
        _columns(result.findings),
        (result.skipped, result.notices, result.checked, result.internal_errors),
    )
    return pickle.dumps(payload, pickle.HIGHEST_PROTOCOL)


def _stream_worker(
    inputs: Sequence[Input],
    share: _Share,
    prepared: Prepared,
    config: LintConfig,
    target: NodeTarget | None,
    connection: Connection,
) -> None:
    """A forked process: stream its share of the inputs, send the findings and counts back."""
    try:
        with gc_paused():
            result = lint_streaming(inputs, [entry[0] for entry in share.entries], prepared, config, target)
            connection.send_bytes(_OK + _payload(result))
    except BaseException:  # reported to the parent, which raises it
        connection.send_bytes(_FAILED + traceback.format_exc().encode())
    finally:
        connection.close()


_OK = b"k"
_FAILED = b"x"
# Findings as columns: the tables of what findings repeat, each entry sent once (rule code, name and severity;
# files; field paths; objects; fixes; messages), and per finding its index into each table and its line and
# column, as machine integers.
_Columns = tuple[
    list[tuple[str, str, str]],
    list[str],
    list[tuple[str | int, ...]],
    list[tuple[str, str, str | None, str] | None],
    list[Fix | None],
    list[str],
    list[bytes],
]


def _columns(findings: Sequence[Finding]) -> _Columns:
    """The findings as columns: a monorepo's findings repeat a few thousand messages, paths and objects, and
    pickling those once and the rest as integer arrays costs about a third of pickling a tuple per finding
    (the parent's findings then share their messages too)."""
    rules: dict[tuple[str, str, str], int] = {}
    files: dict[str, int] = {}
    paths: dict[tuple[str | int, ...], int] = {}
    objects: dict[int, int] = {}  # by identity: the findings of one object share its ref
    refs: list[tuple[str, str, str | None, str] | None] = []
    fixes: dict[int, int] = {}  # by identity: reports' fixes are shared descriptions
    fix_list: list[Fix | None] = []
    messages: dict[str, int] = {}
    columns: tuple[array[int], ...] = tuple(array("i") for _ in range(_COLUMNS))
    rule_at, file_at, line_at, column_at, path_at, object_at, fix_at, message_at = (c.append for c in columns)
    for finding in findings:
        where, obj, fix = finding.location, finding.obj, finding.fix
        rule_at(rules.setdefault((finding.code, finding.name, finding.severity.value), len(rules)))
        file_at(files.setdefault(where.file, len(files)))
        line_at(where.line)
        column_at(where.column)
        path_at(paths.setdefault(where.path, len(paths)))
        index = objects.setdefault(id(obj), len(objects))
        if index == len(refs):
            refs.append(None if obj is None else (obj.kind, obj.name, obj.namespace, obj.api_version))
        object_at(index)
        index = fixes.setdefault(id(fix), len(fixes))
        if index == len(fix_list):
            fix_list.append(fix)
        fix_at(index)
        message_at(messages.setdefault(finding.message, len(messages)))
    return (list(rules), list(files), list(paths), refs, fix_list, list(messages), [c.tobytes() for c in columns])


_COLUMNS = 8  # rule, file, line, column, path, object, fix, message


def _findings(columns: _Columns) -> list[Finding]:
    """The findings `_columns` sent, rebuilt (mapped over the columns: no interpreted loop per finding)."""
    rules, files, paths, refs, fixes, messages, raw = columns
    rule_at, file_at, line_at, column_at, path_at, object_at, fix_at, message_at = (array("i", c) for c in raw)
    severities = {s.value: s for s in Severity}
    codes = [code for code, _name, _severity in rules]
    names = [name for _code, name, _severity in rules]
    levels = [severities[severity] for _code, _name, severity in rules]
    objects = [None if ref is None else ObjectRef(*ref) for ref in refs]
    locations = map(Location, map(files.__getitem__, file_at), line_at, column_at, map(paths.__getitem__, path_at))
    return list(
        map(
            Finding,
            map(codes.__getitem__, rule_at),
            map(names.__getitem__, rule_at),
            map(levels.__getitem__, rule_at),
            map(messages.__getitem__, message_at),
            locations,
            map(objects.__getitem__, object_at),
            map(fixes.__getitem__, fix_at),
        )
    )


def _receive(connection: Connection) -> bytes:
    try:
        message = connection.recv_bytes()
    except EOFError as err:
        raise ParallelLintError("a lint worker process ended without an answer") from err
    if message[:1] != _OK:
        raise ParallelLintError(f"a lint worker process failed:\n{message[1:].decode(errors='replace')}")
    return message[1:]


def _merge(into: LintResult, part: tuple[tuple[int, int, int, int, int, int, int], _Columns, Any]) -> None:
    counts, columns, (skipped, notices, checked, internal_errors) = part
    into.skipped.extend(skipped)
    into.notices.extend(notices)
    into.checked.extend(checked)
    into.internal_errors.extend(internal_errors)
    into.files += counts[0]
    into.documents += counts[1]
    into.templates += counts[2]
    into.gpu_templates += counts[3]
    into.suppressed += counts[4]
    into.generic += counts[5]
    into.unread += counts[6]
    into.findings.extend(_findings(columns))
