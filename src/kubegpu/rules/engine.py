"""Run the enabled rules over loaded inputs: the lint data flow from sources to findings.

Positions are computed only for findings; suppressions (annotation or line comment) are applied here.
"""

from __future__ import annotations

import gc
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kubegpu.manifests import (
    Document,
    InputProblem,
    Location,
    SourceText,
    discover,
    load_text,
    pod_templates,
    read_source,
    uses_accelerators,
)
from kubegpu.rules import inputs
from kubegpu.rules.base import Finding, NodeTarget, RawFinding, Rule, RuleContext, Severity, Target
from kubegpu.rules.config import LintConfig
from kubegpu.rules.processes import input_sizes, plan_processes
from kubegpu.rules.registry import all_rules

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

    @property
    def unreadable(self) -> bool:
        """True when some input could not be read at all (exit code 2)."""
        return any(f.code in inputs.FATAL_CODES for f in self.findings)

    def failing(self, threshold: Severity) -> list[Finding]:
        return [f for f in self.findings if f.severity.rank >= threshold.rank]


@dataclass(frozen=True)
class LoadedSource:
    """One input after loading: its text, objects and reading problems."""

    source: SourceText
    documents: tuple[Document, ...]
    problems: tuple[InputProblem, ...]


def load_sources(paths: Sequence[str], max_file_bytes: int) -> list[LoadedSource]:
    """Read and parse every input the user named (directories recursively, `-` for stdin)."""
    return [load_source(name, path, kind, max_file_bytes) for name, path, kind in discover(paths)]


def load_source(name: str, path: Path | None, kind: str, max_file_bytes: int) -> LoadedSource:
    """Read and parse one input found by `discover` (path None: stdin)."""
    source = read_source(name, path, kind, max_file_bytes)
    if source.text is None:
        problem = InputProblem("unreadable-file", name, 1, 1, source.error or "unreadable")
        return LoadedSource(source, (), (problem,))
    if kind == "dockerfile":
        return LoadedSource(source, (), ())
    result = load_text(name, source.text)
    return LoadedSource(source, tuple(result.documents), tuple(result.problems))


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector for a whole lint run, and collect once at the end.

    Every YAML node kept for positions, every template and finding made the collector's passes walk
    more objects: they made loading 3-4x slower than parsing and cost the rules another 20%. A lint
    run makes almost no reference cycles, and the objects it keeps die with its result.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        # Promote what was made to the oldest generation without walking it (freeze, then unfreeze),
        # so that re-enabling does not start with one young collection over the whole run.
        gc.freeze()
        gc.unfreeze()
        if was_enabled:
            gc.enable()


def lint_paths(paths: Sequence[str], config: LintConfig, jobs: int = 1, target: NodeTarget | None = None) -> LintResult:
    """Lint files, directories and `-` (stdin) with the given configuration (and node, when `target` names one).

    `jobs`: processes to use (0: one per CPU when the input is large enough); the result is the same.
    """
    inputs = list(discover(paths))
    if jobs != 1:
        sizes = input_sizes(inputs)
        processes = plan_processes(sizes, jobs)
        if processes > 1:
            from kubegpu.rules import parallel  # it builds on this module

            return parallel.lint_inputs_parallel(inputs, sizes, config, processes, target)
    with gc_paused():
        loaded = [load_source(name, path, kind, config.max_file_bytes) for name, path, kind in inputs]
        return lint_loaded(loaded, config, target=target)


def lint_text(name: str, text: str, config: LintConfig | None = None, target: NodeTarget | None = None) -> LintResult:
    """Lint one YAML/JSON stream given as text (used by tests, fix and the webhook)."""
    result = load_text(name, text)
    source = SourceText(name, text)
    return lint_loaded([LoadedSource(source, tuple(result.documents), tuple(result.problems))],
                       config or LintConfig(), target=target)


@dataclass(frozen=True)
class _RulePlan:
    """The enabled checks split by what they receive, decided once per run instead of per object."""

    document: tuple[Rule, ...]
    template_any: tuple[Rule, ...]  # rules for every pod template
    template_gpu: tuple[Rule, ...]  # rules for every template, GPU-only ones included

    @classmethod
    def of(cls, rules: Sequence[Rule]) -> _RulePlan:
        checked = [r for r in rules if r.check is not None]
        template = [r for r in checked if r.target is Target.TEMPLATE]
        return cls(
            document=tuple(r for r in checked if r.target is Target.DOCUMENT),
            template_any=tuple(r for r in template if not r.gpu_only),
            template_gpu=tuple(template),
        )


def lint_loaded(
    loaded: Sequence[LoadedSource], config: LintConfig, context_documents: Sequence[Document] | None = None,
    whole_input_shared: bool = True, target: NodeTarget | None = None,
) -> LintResult:
    """Lint loaded inputs; `context_documents` (default: theirs) is what cross-object checks may read."""
    rules = [rule for rule in all_rules() if config.enabled(rule)]
    plan = _RulePlan.of(rules)
    by_name = {rule.name: rule for rule in all_rules()}
    own_documents = tuple(doc for item in loaded for doc in item.documents)
    ctx = RuleContext(
        options=config.options,
        all_documents=own_documents if context_documents is None else tuple(context_documents),
        accelerator_resources=config.accelerator_resources,
        node=None if target is None else target.node,
        kubelet_config=None if target is None else target.kubelet_config,
        smt=None if target is None else target.smt,
        whole_input_shared=whole_input_shared,
    )
    result = LintResult(files=len(loaded), documents=len(own_documents))
    for item in loaded:
        lines = _Lines(item.source.text)
        for problem in item.problems:
            rule = by_name[problem.code]
            if config.enabled(rule):
                location = Location(problem.file, problem.line, problem.column)
                _add(result, config, rule, location, problem.message, None, None, None, lines)
        if item.source.kind == "dockerfile" and item.source.text is not None:
            for rule in rules:
                if rule.target is Target.DOCKERFILE and rule.check is not None:
                    for raw in rule.check(item.source, ctx):
                        line = raw.path[0] if raw.path and isinstance(raw.path[0], int) else 1
                        location = Location(item.source.name, line, 1)
                        _add(result, config, rule, location, raw.message, raw, None, None, lines)
        for doc in item.documents:
            _lint_document(doc, plan, ctx, config, result, lines)
    result.findings.sort(key=lambda f: (f.location.file, f.location.line, f.location.column, f.code))
    return result


def _lint_document(
    doc: Document, plan: _RulePlan, ctx: RuleContext, config: LintConfig, result: LintResult, lines: _Lines,
) -> None:
    suppressed = _annotation_suppressions(doc.metadata, doc, result, config, lines)
    for rule in plan.document:
        for raw in rule.check(doc, ctx):  # type: ignore[misc]  # the plan holds only rules with a check
            _add(result, config, rule, doc.location(raw.path), raw.message, raw, doc, suppressed, lines)
    templates = tuple(pod_templates(doc))
    result.templates += len(templates)
    for template in templates:
        is_gpu = uses_accelerators(template, ctx.accelerator_resources)
        result.gpu_templates += is_gpu
        template_suppressed = suppressed | _annotation_suppressions(
            template.metadata, doc, result, config, lines, template.metadata_path
        ) if template.metadata is not doc.metadata else suppressed
        for rule in plan.template_gpu if is_gpu else plan.template_any:
            for raw in rule.check(template, ctx):  # type: ignore[misc]
                _add(result, config, rule, template.document.location(raw.path), raw.message, raw,
                     template.document, template_suppressed, lines)


def _add(
    result: LintResult, config: LintConfig, rule: Rule, location: Location, message: str,
    raw: RawFinding | None, doc: Document | None, suppressed: set[str] | None, lines: _Lines,
) -> None:
    if suppressed and (rule.code in suppressed or rule.name in suppressed):
        result.suppressed += 1
        return
    if lines.has_comments and lines.ignores(location.line, rule):
        result.suppressed += 1
        return
    severity = config.severity.get(rule.code) or config.severity.get(rule.name) or (
        raw.severity if raw is not None and raw.severity is not None else rule.severity)
    result.findings.append(Finding(
        code=rule.code, name=rule.name, severity=severity, message=message, location=location,
        obj=doc.ref if doc is not None else None, fix=raw.fix if raw is not None else None, document=doc,
    ))


def _annotation_suppressions(
    metadata: Mapping[str, Any], doc: Document, result: LintResult, config: LintConfig, lines: _Lines,
    metadata_path: tuple[str | int, ...] | None = ("metadata",),
) -> set[str]:
    """Rules named in `kubegpu.io/ignore: "<rule>: <reason>; <rule>: <reason>"`."""
    annotations = metadata.get("annotations") if isinstance(metadata, Mapping) else None
    if not isinstance(annotations, Mapping) or IGNORE_ANNOTATION not in annotations:
        return set()
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
                _add(result, config, rule, doc.location(path),
                     f"'{IGNORE_ANNOTATION}' names {', '.join(rules)} without a reason "
                     f"(write '{rules[0] if rules else 'RULE'}: why it does not apply'); not suppressed",
                     None, doc, None, lines)
            continue
        names.update(rules)
    return names


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

