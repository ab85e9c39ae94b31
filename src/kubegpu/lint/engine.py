"""Run the enabled rules over loaded inputs: the lint data flow from sources to findings.

Positions are computed only for findings; suppressions (annotation or line comment) are applied here.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field, replace
from functools import lru_cache
from operator import attrgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kubegpu.deadline import Deadline, DeadlineExceeded
from kubegpu.lint.config import LintConfig
from kubegpu.lint.inventory import Skipped, partial_object, skipped_file, unchecked_kind, unread_kind
from kubegpu.lint.registry import all_rules
from kubegpu.manifests import (
    Document,
    InputProblem,
    Location,
    SourceText,
    as_mapping,
    discover,
    format_path,
    load_text,
    read_source,
    uses_accelerators,
)
from kubegpu.manifests.embedded import embedded
from kubegpu.manifests.recognise import NotAManifest, not_a_manifest
from kubegpu.manifests.regular_file import read_regular
from kubegpu.manifests.render import RenderOptions, render_chart, render_kustomization
from kubegpu.manifests.sources import HELM, KUSTOMIZE, WalkReport
from kubegpu.manifests.template import release
from kubegpu.ruleapi import (
    LOOKED_UP_KINDS,
    WHOLE_INPUT_KINDS,
    Finding,
    Fix,
    NodeTarget,
    RawFinding,
    Rule,
    RuleContext,
    Safety,
    Severity,
    Target,
)
from kubegpu.rules import inputs
from kubegpu.workloads import Coverage, coverage, generic_note, kind_of, pod_templates
from kubegpu.workloads.expand import bind_runtimes, with_embedded

if TYPE_CHECKING:
    from kubegpu.manifests.origins import HelmOrigins, KustomizeOrigins
    from kubegpu.manifests.render_run import RenderRecord

IGNORE_ANNOTATION = "kubegpu.io/ignore"
_LINE_IGNORE = re.compile(r"#\s*kubegpu:\s*ignore\[([A-Za-z0-9_,\- ]+)\]")


@dataclass
class LintResult:
    """Findings in stable order, plus what was read (for summaries and exit codes)."""

    findings: list[Finding] = field(default_factory=list)
    files: int = 0
    documents: int = 0
    templates: int = 0
    gpu_templates: int = 0
    suppressed: int = 0
    generic: int = 0  # objects of kinds with no known mapping whose pod specs a generic search found
    skipped: list[Skipped] = field(default_factory=list)  # files and objects not linted, with why
    notices: list[str] = field(default_factory=list)  # "chart x: not rendered: helm not found"
    checked: list[tuple[str, str, str]] = field(default_factory=list)  # (file, kind, name) of each object linted
    internal_errors: list[str] = field(default_factory=list)  # "internal error while reading FILE: ..." (exit 3)
    unread: int = 0  # inputs nothing could be read from: unreadable, unparseable as a whole, not rendered
    renders: list[RenderRecord] = field(default_factory=list)  # each chart and kustomization rendered, in order
    rendered_through: list[tuple[str, list[str]]] = field(default_factory=list)  # (kustomization, its includers)

    @property
    def skipped_files(self) -> list[Skipped]:
        return [s for s in self.skipped if s.kind == "file"]

    @property
    def skipped_templates(self) -> list[Skipped]:
        return [s for s in self.skipped if s.kind == "template"]

    @property
    def skipped_objects(self) -> list[Skipped]:
        return [s for s in self.skipped if s.kind == "object"]

    @property
    def partial_objects(self) -> list[Skipped]:
        return [s for s in self.skipped if s.kind == "partial"]

    @property
    def unreadable(self) -> bool:
        """True when no input could be read at all: kubegpu could not do its job (exit code 2). An input that
        cannot be read among others that can is a finding (KG001, KG005, KG006), like any other."""
        return self.files > 0 and self.unread >= self.files

    def failing(self, threshold: Severity) -> list[Finding]:
        # The failing severities first, then a set test per finding: comparing ranks cost two property calls each.
        levels = frozenset(s for s in Severity if s.rank >= threshold.rank)
        return [f for f in self.findings if f.severity in levels]


@dataclass(frozen=True)
class LoadedSource:
    """One input after loading: its text, objects and reading problems."""

    source: SourceText
    documents: tuple[Document, ...]
    problems: tuple[InputProblem, ...]
    other_documents: int = 0  # documents that are not Kubernetes objects
    origins: HelmOrigins | KustomizeOrigins | None = None  # rendered input: where its objects came from
    label: str | None = None  # "chart charts/x", "kustomization overlays/prod": named in its findings
    notice: str | None = None  # why a chart or kustomization was not rendered
    not_manifest: NotAManifest | None = None  # why a file that does not parse is skipped: a template, another tool's


def load_sources(paths: Sequence[str], max_file_bytes: int) -> list[LoadedSource]:
    """Read and parse every input the user named (directories recursively, `-` for stdin)."""
    walk = WalkReport()
    inputs = list(discover(paths, report=walk))
    render = RenderOptions().for_run(walk.roots)
    return [load_source(name, path, kind, max_file_bytes, render) for name, path, kind in inputs]


def load_source(
    name: str,
    path: Path | None,
    kind: str,
    max_file_bytes: int,
    render: RenderOptions | None = None,
) -> LoadedSource:
    """Read and parse one input found by `discover` (path None: stdin); charts and kustomizations are rendered."""
    if kind in (HELM, KUSTOMIZE) and path is not None:
        return _load_rendered(name, path, kind, render or RenderOptions(), max_file_bytes)
    source = read_source(name, path, kind, max_file_bytes)
    if source.text is None:
        problem = InputProblem("unreadable-file", name, 1, 1, source.error or "unreadable")
        return LoadedSource(source, (), (problem,))
    if kind == "dockerfile":
        return LoadedSource(source, (), ())
    text = source.text
    if render is not None and render.unread is not None:  # a reports-only run: bodies no rule reads never built
        from kubegpu.manifests.unread import strip_unread

        text = strip_unread(text, render.unread, checked=True, known=render.well_formed)[0]
        source = replace(source, text=text)
    return _load_file(source, text)


def _load_file(source: SourceText, text: str) -> LoadedSource:
    """Parse a file's text; a template or another tool's file that does not parse is skipped, not a parse error."""
    result = load_text(source.name, text)
    unparsed = not_a_manifest(source.name, text, result)
    if unparsed is not None:
        return LoadedSource(source, (), (), not_manifest=unparsed)
    return LoadedSource(source, tuple(result.documents), tuple(result.problems), result.other_documents)


def _load_rendered(name: str, folder: Path, kind: str, render: RenderOptions, max_file_bytes: int) -> LoadedSource:
    """Render a chart or kustomization with the real program; its objects keep where they came from."""
    # origins (3 dataclasses) is imported by the functions of rendered inputs only: 1 % of a one-file lint's start-up
    from kubegpu.manifests.origins import HelmOrigins, KustomizeOrigins, display

    label = f"chart {display(folder)}" if kind == HELM else f"kustomization {display(folder)}"
    rendered = render.results.get(Path(os.path.realpath(folder)))  # rendered once, before the run's lint
    if rendered is None:
        rendered = (
            render_chart(folder, render, max_file_bytes)
            if kind == HELM
            else render_kustomization(folder, render, max_file_bytes)
        )
    if rendered.text is None:
        source = SourceText(name, None, kind, rendered.error or rendered.notice, folder)
        problems: tuple[InputProblem, ...] = ()
        if rendered.error is not None:
            main = display(folder / "Chart.yaml") if kind == HELM else display(_kustomization_file(folder))
            problems = (InputProblem("parse-error", main, 1, 1, rendered.error),)
        return LoadedSource(source, (), problems, label=label, notice=rendered.notice)
    result = load_text(name, rendered.text)
    origins: HelmOrigins | KustomizeOrigins = (
        HelmOrigins(folder, rendered.text)
        if kind == HELM
        else KustomizeOrigins(rendered.workdir or folder, rendered.root, render.unread)
    )
    return LoadedSource(
        SourceText(name, rendered.text, kind, None, folder),
        tuple(result.documents),
        tuple(result.problems),
        result.other_documents,
        origins,
        label,
    )


def _kustomization_file(folder: Path) -> Path:
    from kubegpu.manifests.sources import KUSTOMIZATION_FILES

    return next((folder / n for n in KUSTOMIZATION_FILES if (folder / n).is_file()), folder / KUSTOMIZATION_FILES[0])


# Searched in the raw bytes, starting at the literal `kind` (which the regex engine finds fast): a quote before
# it would make every position a candidate start, and decoding every file first cost as much again.
_KIND = re.compile(rb"""kind["']?\s*:\s*["']?([A-Za-z0-9]+)""")


@dataclass
class Prepared:
    """What streaming needs first: the inputs loaded up front (by index) and the objects checks look up."""

    first: dict[int, LoadedSource]
    looked_up: list[Document]
    # Every object rules read, when some check reads the whole input: without their node trees (positions are
    # asked only of the object being linted), in discovery order; None when no check does.
    whole: list[Document] | None = None


@dataclass
class Early:
    """The first pass over plain files, made while charts and kustomizations render: each file's kinds (from its
    text), the files holding looked-up kinds loaded, and, when one holds a whole-input kind, every file's objects
    that rules read, without node trees."""

    kinds: dict[Path, set[str]]
    loaded: dict[Path, LoadedSource]
    whole: dict[Path, list[Document]] | None


def read_early(inputs: Sequence[tuple[str, Path | None, str]], config: LintConfig) -> Early:
    """The first pass over the plain files (`Early`), which the runner makes while the renders run."""
    plain = [(name, path, kind) for name, path, kind in inputs if path is not None and kind == "manifest"]
    early = Early({}, {}, None)
    for name, path, kind in plain:
        assert path is not None
        try:
            kinds = {found.decode() for found in set(_KIND.findall(read_regular(path, config.max_file_bytes)))}
        except OSError:
            continue
        early.kinds[path] = kinds
        if kinds & LOOKED_UP_KINDS:
            early.loaded[path] = load_source(name, path, kind, config.max_file_bytes, config.render)
    if any(kinds & WHOLE_INPUT_KINDS for kinds in early.kinds.values()):
        early.whole = {}
        for name, path, kind in plain:
            assert path is not None
            if path in early.kinds and path not in early.loaded:
                early.whole[path] = _readable(load_source(name, path, kind, config.max_file_bytes, config.render))
    return early


def _readable(item: LoadedSource) -> list[Document]:
    """The objects of `item` rules read, without their node trees (for whole-input checks)."""
    every = all_rules()
    found = []
    for doc in item.documents:
        if not unread_kind(doc.api_version, doc.kind, every):
            doc.drop_nodes()
            found.append(doc)
    return found


def prepare_streaming(
    inputs: Sequence[tuple[str, Path | None, str]], config: LintConfig, early: Early | None = None
) -> Prepared | None:
    """Find, by the text alone, the files holding kinds that checks look up, and load them (with standard
    input); rendered inputs are read from their text the same way. When some object's check reads the whole
    input, every object rules read is read once more, without its node tree, for the checks' context."""
    first: dict[int, LoadedSource] = {}
    rendered_lookups: list[Document] = []
    whole = False
    for index, (name, path, kind) in enumerate(inputs):
        kinds: set[str] = set()
        done = None if path is None else config.render.results.get(Path(os.path.realpath(path)))
        if kind in (HELM, KUSTOMIZE) and done is not None and done.text is not None:
            # Rendered output is read like a file: its looked-up objects kept now, the rest when it is linted.
            kinds = {found.decode() for found in set(_KIND.findall(done.text.encode()))}
            if kinds & LOOKED_UP_KINDS:
                assert path is not None
                item = load_source(name, path, kind, config.max_file_bytes, config.render)
                rendered_lookups.extend(d for d in with_embedded(item.documents) if d.kind in LOOKED_UP_KINDS)
                del item
        elif path is None or kind in (HELM, KUSTOMIZE):
            item = load_source(name, path, kind, config.max_file_bytes, config.render)
            first[index] = item
            kinds = {doc.kind for doc in with_embedded(item.documents)}
        elif kind != "dockerfile":
            if early is not None and path in early.kinds:  # read while the renders ran
                kinds = early.kinds[path]
            else:
                try:
                    kinds = {kind.decode() for kind in set(_KIND.findall(read_regular(path, config.max_file_bytes)))}
                except OSError:
                    continue  # not a regular file, too big or unreadable: reported when loaded
            if kinds & LOOKED_UP_KINDS:
                found = early.loaded.get(path) if early is not None else None
                first[index] = found or load_source(name, path, kind, config.max_file_bytes, config.render)
        whole = whole or bool(kinds & WHOLE_INPUT_KINDS)
    # Objects written as text in another (an Argo step that creates a runtime) are looked up like any other.
    looked_up = [doc for item in first.values() for doc in with_embedded(item.documents) if doc.kind in LOOKED_UP_KINDS]
    ready = early.whole if early is not None else None
    return Prepared(first, looked_up + rendered_lookups, _whole_input(inputs, config, first, ready) if whole else None)


def _whole_input(
    inputs: Sequence[tuple[str, Path | None, str]],
    config: LintConfig,
    first: Mapping[int, LoadedSource],
    ready: Mapping[Path, list[Document]] | None,
) -> list[Document]:
    """Every object of the input that rules read (kinds no rule reads left out: no whole-input check reads them),
    each file's without its node trees, read one file at a time (`ready`: those read while the renders ran): what
    whole-input checks see while the input is streamed file by file."""
    found: list[Document] = []
    for index, (name, path, kind) in enumerate(inputs):
        if index in first:
            found.extend(first[index].documents)
        elif ready is not None and path is not None and path in ready:
            found.extend(ready[path])
        elif kind != "dockerfile" and path is not None:
            found.extend(_readable(load_source(name, path, kind, config.max_file_bytes, config.render)))
    return found


def lint_streaming(
    inputs: Sequence[tuple[str, Path | None, str]],
    indices: Iterable[int],
    prepared: Prepared,
    config: LintConfig,
    target: NodeTarget | None = None,
) -> LintResult:
    """Lint the inputs at `indices` file by file, keeping only the looked-up objects and the findings.

    Each file's objects are freed before the next is read (their derived facts are forgotten, so reference
    counting frees them); rendered inputs are linted together, their findings merged across overlays.
    """
    total = LintResult()
    parts: list[_RenderedFindings] = []
    plan = _RulePlan.of(config)
    # One context for every file: what checks may look up is the same for all, and indexing it per file cost
    # a pass over every looked-up object per file (and a new tuple per file, which checks' caches key on).
    readable = prepared.looked_up if prepared.whole is None else prepared.whole
    context = _context(config, with_embedded(readable), prepared.whole is not None, target)
    messages: dict[str, str] = {}  # findings that say the same thing share one text (a quarter are distinct)
    for index in indices:
        name, path, kind = inputs[index]
        item = (
            prepared.first[index]
            if index in prepared.first
            else load_source(name, path, kind, config.max_file_bytes, config.render)
        )
        _absorb(
            total,
            lint_loaded(
                [item],
                config,
                plan=plan,
                keep_documents=False,
                ordered=False,  # lint_paths orders the whole run (the same order: files never tie)
                context=context,
                messages=messages,
                rendered_parts=parts,  # a rendered input's findings, moved to the files people edit, merged below
            ),
        )
        if index not in prepared.first:
            for doc in item.documents:
                release(doc)
        del item
    total.findings.extend(_merged(parts))
    return total


def _absorb(total: LintResult, part: LintResult) -> None:
    """Add one file's result to the run's, letting go of the objects its findings came from."""
    total.files += part.files
    total.documents += part.documents
    total.templates += part.templates
    total.gpu_templates += part.gpu_templates
    total.suppressed += part.suppressed
    total.generic += part.generic
    total.findings.extend(_detached(f) if f.document is not None else f for f in part.findings)
    total.skipped.extend(part.skipped)
    total.notices.extend(part.notices)
    total.checked.extend(part.checked)
    total.internal_errors.extend(part.internal_errors)
    total.unread += part.unread


def _detached(finding: Finding) -> Finding:
    """The finding without the object it came from (built directly: `dataclasses.replace` costs more)."""
    return Finding(
        finding.code, finding.name, finding.severity, finding.message, finding.location, finding.obj, finding.fix
    )


def lint_text(
    name: str,
    text: str,
    config: LintConfig | None = None,
    target: NodeTarget | None = None,
    deadline: Deadline | None = None,
) -> LintResult:
    """Lint one YAML/JSON stream given as text (used by tests, fix and the webhook).

    `deadline`: checked between rules, templates and findings; past it DeadlineExceeded propagates (the webhook).
    """
    loaded = _load_file(SourceText(name, text), text)
    if deadline is not None:
        deadline.check("linting")
    return lint_loaded(
        [loaded],
        config or LintConfig(),
        target=target,
        deadline=deadline,
    )


def lint_object(
    name: str, obj: Mapping[str, Any], config: LintConfig | None = None, deadline: Deadline | None = None
) -> LintResult:
    """Lint one object given as data (the webhook's pod, already parsed from JSON): as `lint_text` lints its
    JSON text, without parsing it again; every position is the object's first line, as on one-line JSON."""
    doc = Document(source=name, index=0, data=obj, is_json=True)
    return lint_loaded([LoadedSource(SourceText(name, ""), (doc,), ())], config or LintConfig(), deadline=deadline)


@dataclass(frozen=True)
class _RulePlan:
    """The enabled checks split by what they receive, decided once per run instead of per object or file."""

    enabled: tuple[Rule, ...]
    by_name: Mapping[str, Rule]  # every rule, enabled or not (input problems name theirs)
    document: tuple[Rule, ...]  # rules for objects of any kind
    document_of_kind: Mapping[str, tuple[Rule, ...]]  # rules for the kinds some rules read only
    template_any: tuple[Rule, ...]  # rules for every pod template
    template_gpu: tuple[Rule, ...]  # rules for every template, GPU-only ones included

    def document_rules(self, kind: str) -> tuple[Rule, ...]:
        """The document rules for an object of `kind`, in the registry's order."""
        return self.document_of_kind.get(kind, self.document)

    @classmethod
    def of(cls, config: LintConfig) -> _RulePlan:
        every = all_rules()
        enabled = tuple(rule for rule in every if config.enabled(rule))
        checked = [r for r in enabled if r.check is not None]
        template = [r for r in checked if r.target is Target.TEMPLATE]
        document = [r for r in checked if r.target is Target.DOCUMENT]
        kinds = {kind for r in document if r.kinds is not None for kind in r.kinds}
        return cls(
            enabled=enabled,
            by_name={rule.name: rule for rule in every},
            document=tuple(r for r in document if r.kinds is None),
            document_of_kind={k: tuple(r for r in document if r.kinds is None or k in r.kinds) for k in kinds},
            template_any=tuple(r for r in template if not r.gpu_only),
            template_gpu=tuple(template),
        )


def lint_loaded(
    loaded: Sequence[LoadedSource],
    config: LintConfig,
    context_documents: Sequence[Document] | None = None,
    whole_input_shared: bool = True,
    target: NodeTarget | None = None,
    plan: _RulePlan | None = None,
    keep_documents: bool = True,
    ordered: bool = True,
    context: RuleContext | None = None,
    messages: dict[str, str] | None = None,
    deadline: Deadline | None = None,
    rendered_parts: list[_RenderedFindings] | None = None,
) -> LintResult:
    """Lint loaded inputs; `context_documents` (default: theirs) is what cross-object checks may read.

    `plan`: the rules `config` enables, when the caller lints file after file with the same configuration.
    `keep_documents=False`: findings do not hold the objects they came from (reports only: no fixes).
    `ordered=False`: findings in the order found, for a caller that puts the whole run in order once.
    `context`: the checks' context, when the caller lints file after file with the same one (it then stands
    for `context_documents`, `whole_input_shared` and `target`).
    `messages`: the texts of findings already made in this run (reports only), which equal ones share.
    `deadline`: checked before each object, rule, pod template and finding; DeadlineExceeded is raised, not recorded.
    `rendered_parts`: where the findings of rendered inputs go, moved to their sources but not yet merged across
    the inputs that render the same file (for a caller that lints rendered inputs one at a time, then merges).
    """
    if plan is None:
        plan = _RulePlan.of(config)
    # Objects an Argo resource template creates from its manifest text are objects of the input too.
    own_documents = with_embedded(doc for item in loaded for doc in item.documents)
    ctx = (
        context
        if context is not None
        else _context(
            config,
            own_documents if context_documents is None else with_embedded(context_documents),
            whole_input_shared,
            target,
        )
    )
    bind_runtimes(own_documents, ctx.documents_of)  # the one expansion admit and gen use (workloads.expand)
    result = LintResult(files=len(loaded), documents=len(own_documents))
    rendered: list[tuple[LoadedSource, int, int]] = []
    for item in loaded:
        first = len(result.findings)
        try:
            _lint_item(item, plan, ctx, config, result, keep_documents, messages, deadline)
            if item.origins is not None:
                rendered.append((item, first, len(result.findings)))
        except DeadlineExceeded:
            raise
        except Exception as err:  # a bug, not the input's fault: say so, and go on with the other files
            result.internal_errors.append(internal_error(item.source.name, err))
    if rendered:
        parts = [_located(item, result.findings[first:end], not keep_documents) for item, first, end in rendered]
        moved = {index for _item, first, end in rendered for index in range(first, end)}
        result.findings[:] = [f for index, f in enumerate(result.findings) if index not in moved]
        if rendered_parts is not None:
            rendered_parts.extend(parts)
        else:
            result.findings.extend(_merged(parts))
    return in_order(result) if ordered else result


# A monorepo's run sorts tens of thousands of findings: attrgetter builds each key in C, a lambda in Python.
_FINDING_ORDER = attrgetter("location.file", "location.line", "location.column", "code")


def _lint_item(
    item: LoadedSource,
    plan: _RulePlan,
    ctx: RuleContext,
    config: LintConfig,
    result: LintResult,
    keep_documents: bool,
    messages: dict[str, str] | None,
    deadline: Deadline | None,
) -> None:
    """Lint one loaded input: its notice, why it is skipped, its parse problems, a Dockerfile's rules, and each of
    its objects (those an Argo resource template creates included)."""
    lines = _Lines(item.source.text)
    if item.notice is not None:
        result.notices.append(f"{item.label}: {item.notice}")
    skipped = (
        None
        if item.origins is not None or item.source.text is None or item.source.kind == "dockerfile"
        else skipped_file(
            item.source.name, len(item.documents), len(item.problems), item.other_documents, item.not_manifest
        )
    )
    if skipped is not None:
        result.skipped.append(skipped)
    if not item.documents and any(problem.fatal for problem in item.problems):
        result.unread += 1
    for problem in item.problems:
        rule = plan.by_name[problem.code]
        if config.enabled(rule):
            location = Location(problem.file, problem.line, problem.column)
            _add(result, config, rule, location, problem.message, None, None, None, lines)
    if item.source.kind == "dockerfile" and item.source.text is not None:
        for rule in plan.enabled:
            if rule.target is Target.DOCKERFILE and rule.check is not None:
                for raw in rule.check(item.source, ctx):
                    line = raw.path[0] if raw.path and isinstance(raw.path[0], int) else 1
                    location = Location(item.source.name, line, 1)
                    _add(result, config, rule, location, raw.message, raw, None, None, lines)
    # Rendered inputs keep their objects until their findings are moved to the files people edit.
    keep = keep_documents or item.origins is not None
    for doc in item.documents:
        _lint_document(doc, plan, ctx, config, result, lines, keep, messages, deadline)
        inner = embedded(doc)
        for embedded_doc in inner.documents:
            _lint_document(embedded_doc, plan, ctx, config, result, lines, keep, messages, deadline)
            if not keep:
                embedded_doc.drop_nodes()
        if inner.unread:
            result.skipped.extend(Skipped(u.file, u.reason, "object") for u in inner.unread)
        if not keep:  # streamed: its findings are located, and nothing reads its nodes again
            doc.drop_nodes()
    _record_checked(result, item)


def _context(
    config: LintConfig, documents: tuple[Document, ...], whole_input_shared: bool, target: NodeTarget | None
) -> RuleContext:
    """What checks may know besides their target: `documents` to look up, the options and the node."""
    return RuleContext(
        options=config.options,
        all_documents=documents,
        accelerator_resources=config.accelerator_resources,
        node=None if target is None else target.node,
        kubelet_config=None if target is None else target.kubelet_config,
        smt=None if target is None else target.smt,
        whole_input_shared=whole_input_shared,
    )


def internal_error(name: str, err: BaseException) -> str:
    """The one line reporting a kubegpu bug met while reading `name` (exit code 3)."""
    return f"internal error while reading {name}: {type(err).__name__}: {err}"


def in_order(result: LintResult) -> LintResult:
    """Findings, skipped inputs and checked objects in a stable order, however many processes linted."""
    result.findings.sort(key=_FINDING_ORDER)
    result.skipped.sort(key=lambda s: (s.file, s.kind, s.reason))
    result.checked.sort()
    return result


@dataclass(frozen=True)
class _RenderedFindings:
    """One rendered input's findings, moved to the template, resource or patch line they came from, and the files
    it renders (a kustomization's), so that inputs rendering the same file can be merged."""

    label: str
    findings: list[Finding]
    files: frozenset[str]


def _located(item: LoadedSource, findings: Sequence[Finding], detach: bool) -> _RenderedFindings:
    """Move findings on the rendered objects of `item` to the template, resource or patch line (`detach`: let go
    of the objects they came from, once located)."""
    from kubegpu.manifests.origins import KustomizeOrigins

    origins = item.origins
    assert origins is not None
    files = frozenset(origins.files(item.documents)) if isinstance(origins, KustomizeOrigins) else frozenset()
    moved = []
    for finding in findings:
        doc = finding.document
        where = origins.locate(doc, finding.location.path) if doc is not None else None
        if where is None:
            where = _render_location(item, finding.location)
        finding = replace(finding, location=where)
        moved.append(_detached(finding) if detach else finding)
    return _RenderedFindings(item.label or "", moved, files)


def _merged(parts: Sequence[_RenderedFindings]) -> list[Finding]:
    """The findings of rendered inputs, each once.

    A base rendered by several overlays gives the same finding once per overlay: it is kept once, and
    when only some of the kustomizations that render that file have it, the finding says which.
    """
    by_key: dict[tuple[str, str, int, int, str], int] = {}
    found: list[Finding] = []
    seen_in: list[list[str]] = []
    renders: dict[str, list[str]] = {}  # source file -> labels of the inputs that render it
    for part in parts:
        for file in part.files:
            renders.setdefault(file, []).append(part.label)
    for part in parts:
        for finding in part.findings:
            where = finding.location
            key = (finding.code, where.file, where.line, where.column, where.dotted_path)
            earlier = by_key.get(key)
            if earlier is not None:
                seen_in[earlier].append(part.label)
                continue
            by_key[key] = len(found)
            found.append(finding)
            seen_in.append([part.label])
    for index, labels in enumerate(seen_in):
        finding = found[index]
        produced_by = set(labels)
        renderers = set(renders.get(finding.location.file, ()))
        if len(renderers) > 1 and produced_by < renderers:
            note = "only in " + ", ".join(sorted(produced_by))
        elif len(renderers) > 1:
            continue  # every kustomization that renders the file has it
        else:
            note = labels[0]
        found[index] = replace(finding, message=f"{finding.message} [{note}]")
    return found


def _record_checked(result: LintResult, item: LoadedSource) -> None:
    """Name each object linted by the file a person edits (for reports that list clean objects)."""
    origins = item.origins
    for doc in with_embedded(item.documents):
        if unchecked_kind(doc) is not None or partial_object(doc) is not None:
            continue
        file = doc.source
        if origins is not None:
            where = origins.locate(doc, ())
            file = where.file if where is not None else _render_location(item, Location(file, 1, 1)).file
        result.checked.append((file, doc.kind, doc.ref.name))


def _render_location(item: LoadedSource, where: Location) -> Location:
    """A rendered object whose origin is unknown: its chart's or kustomization's main file."""
    from kubegpu.manifests.origins import display

    folder = item.source.path
    if folder is None:
        return where
    main = folder / "Chart.yaml" if item.source.kind == HELM else _kustomization_file(folder)
    return Location(display(main), 1, 1, where.path)


def _lint_document(
    doc: Document,
    plan: _RulePlan,
    ctx: RuleContext,
    config: LintConfig,
    result: LintResult,
    lines: _Lines,
    keep: bool = True,
    messages: dict[str, str] | None = None,
    deadline: Deadline | None = None,
) -> None:
    if deadline is not None:
        deadline.check("linting")
    unchecked = unchecked_kind(doc)
    if unchecked is not None:
        result.skipped.append(unchecked)
    partial = partial_object(doc)
    if partial is not None:
        result.skipped.append(partial)
        return
    suppressed = _annotation_suppressions(doc.metadata, doc, result, config, lines)
    for rule in plan.document_rules(doc.kind):
        for raw in rule.check(doc, ctx):  # type: ignore[misc]  # the plan holds only rules with a check
            if deadline is not None:
                deadline.check("linting")
            _add(result, config, rule, doc.location(raw.path), raw.message, raw, doc, suppressed, lines, keep, messages)
    templates = tuple(pod_templates(doc))
    result.templates += len(templates)
    # A kind read generically says so in its findings; a synthesised pod (an operator's CR) takes no pod-spec fix.
    generic = bool(templates) and coverage(doc) is Coverage.GENERIC
    result.generic += generic
    adapter = kind_of(doc)
    synthesised = adapter is not None and adapter.synthesised(doc)
    read_from = "" if adapter is None else adapter.pod_note(doc)
    for template in templates:
        is_gpu = uses_accelerators(template, ctx.accelerator_resources)
        result.gpu_templates += is_gpu
        template_suppressed = suppressed
        if template.metadata is not doc.metadata:
            own = _annotation_suppressions(template.metadata, doc, result, config, lines, template.metadata_path)
            if own:
                template_suppressed = suppressed | own
        for rule in plan.template_gpu if is_gpu else plan.template_any:
            if deadline is not None:
                deadline.check("linting")
            for raw in rule.check(template, ctx):  # type: ignore[misc]
                if deadline is not None:  # a rule's findings come one container at a time
                    deadline.check("linting")
                message = raw.message
                if generic:
                    message = f"{message} ({generic_note(doc)} at {format_path(template.path)})"
                if read_from:
                    message = f"{message} ({read_from})"
                if synthesised and raw.fix is not None:
                    raw = replace(raw, fix=None)
                _add(
                    result,
                    config,
                    rule,
                    template.document.location(raw.path),
                    message,
                    raw,
                    template.document,
                    template_suppressed,
                    lines,
                    keep,
                    messages,
                )


def _add(
    result: LintResult,
    config: LintConfig,
    rule: Rule,
    location: Location,
    message: str,
    raw: RawFinding | None,
    doc: Document | None,
    suppressed: AbstractSet[str] | None,
    lines: _Lines,
    keep: bool = True,
    messages: dict[str, str] | None = None,
) -> None:
    """Record a finding unless it is suppressed; `keep`: the finding holds the object it came from; `messages`:
    equal messages share the first one's text (a monorepo's findings repeat a few thousand texts)."""
    if suppressed and (rule.code in suppressed or rule.name in suppressed):
        result.suppressed += 1
        return
    if lines.has_comments and lines.ignores(location.line, rule):
        result.suppressed += 1
        return
    severity = raw.severity if raw is not None and raw.severity is not None else rule.severity
    if config.severity:  # most runs configure no severity: no lookups then
        severity = config.severity.get(rule.code) or config.severity.get(rule.name) or severity
    fix = raw.fix if raw is not None else None
    if fix is not None and not keep:
        fix = _described(fix.description, fix.safety)  # reports only: what the fix does, not its edits
    if doc is not None and doc.embedded_in:  # an object written as text in another: say so; no edit reaches it
        message = f"{message} ({doc.embedded_in})"
        fix = None
    if messages is not None:
        message = messages.setdefault(message, message)
    # Positional: a monorepo makes tens of thousands, and keywords cost a fifth more per frozen object.
    result.findings.append(
        Finding(
            rule.code,
            rule.name,
            severity,
            message,
            location,
            doc.ref if doc is not None else None,
            fix,
            doc if keep else None,
        )
    )


@lru_cache(maxsize=4096)
def _described(description: str, safety: Safety) -> Fix:
    """A fix as a report shows it, without its edits: shared by the findings that describe it alike, so that a
    monorepo's findings do not keep (or send between processes) edits that no report applies."""
    return Fix(description, safety, ())


def _annotation_suppressions(
    metadata: Mapping[str, Any],
    doc: Document,
    result: LintResult,
    config: LintConfig,
    lines: _Lines,
    metadata_path: tuple[str | int, ...] | None = ("metadata",),
) -> AbstractSet[str]:
    """Rules named in `kubegpu.io/ignore: "<rule>: <reason>; <rule>: <reason>"`."""
    annotations = as_mapping(metadata).get("annotations")
    if annotations is None or IGNORE_ANNOTATION not in as_mapping(annotations):
        return _NO_NAMES  # (most objects: no set made for them)
    names: set[str] = set()
    for entry in re.split(r"[;\n]", str(annotations[IGNORE_ANNOTATION])):
        entry = entry.strip()
        if not entry:
            continue
        rule_part, _, reason = entry.partition(":")
        rules = [r.strip() for r in rule_part.split(",") if r.strip()]
        if not reason.strip():
            path = (*(metadata_path or ("metadata",)), "annotations", IGNORE_ANNOTATION)
            rule = inputs.SUPPRESSION_WITHOUT_REASON
            if config.enabled(rule):
                _add(
                    result,
                    config,
                    rule,
                    doc.location(path),
                    f"'{IGNORE_ANNOTATION}' names {', '.join(rules)} without a reason "
                    f"(write '{rules[0] if rules else 'RULE'}: why it does not apply'); not suppressed",
                    None,
                    doc,
                    None,
                    lines,
                )
            continue
        names.update(rules)
    return names


_NO_NAMES: AbstractSet[str] = frozenset()


class _Lines:
    """Per-line `# kubegpu: ignore[CODE,name]` comments, parsed only when a finding asks."""

    def __init__(self, text: str | None) -> None:
        self._text = text
        self.has_comments = text is not None and "kubegpu:" in text
        self._lines: list[str] | None = None

    def ignores(self, line: int, rule: Rule) -> bool:
        if not self.has_comments or self._text is None:
            return False
        if self._lines is None:
            self._lines = self._text.splitlines()
        for number in (line, line - 1):
            if 1 <= number <= len(self._lines):
                match = _LINE_IGNORE.search(self._lines[number - 1])
                if match:
                    names = {n.strip() for n in match.group(1).split(",")}
                    if rule.code in names or rule.name in names:
                        return True
        return False
