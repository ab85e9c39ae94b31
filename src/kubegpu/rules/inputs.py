"""Rules for input that cannot be read as Kubernetes objects (KG0xx); the loader detects them.

They are rules so that they can be listed, explained, re-graded and ignored like every other.
"""

from __future__ import annotations

from collections.abc import Iterator

from kubegpu.manifests import ContainerRef, PodTemplate, container_resources
from kubegpu.manifests.placeholders import placeholders_in
from kubegpu.manifests.resources import ResourceValue
from kubegpu.ruleapi import RawFinding, Rule, RuleContext, Severity, Target

_PRACTICE = "input"

PARSE_ERROR = Rule(
    code="KG001",
    name="parse-error",
    practice=_PRACTICE,
    severity=Severity.ERROR,
    summary="The file is not valid YAML or JSON.",
    target=Target.INPUT,
    check=None,
    gpu_only=False,
    rationale="kubectl apply would refuse the whole file. kubegpu reports where parsing stopped and "
    "resumes at the next `---`, so the rest of the stream is still checked. A template that reads as YAML once its "
    "markers are filled (Go `{{.Name}}`, Jinja, `${var}`, a sample's `{username}`) and another tool's file with no "
    "apiVersion and kind at its top level (`mkdocs.yml`) are not findings: they are skipped, counted and listed by "
    "`--verbose`. A parse error fails the run like any error finding; only a run that could read no input at all "
    "exits 2.",
)
NOT_KUBERNETES_OBJECT = Rule(
    code="KG002",
    name="not-kubernetes-object",
    practice=_PRACTICE,
    severity=Severity.WARNING,
    summary="A document looks like a Kubernetes object but has no apiVersion or kind.",
    target=Target.INPUT,
    check=None,
    gpu_only=False,
    rationale="A mapping with `kind` but no `apiVersion` (or `metadata` and `spec` with neither) is an object "
    "kubectl would refuse; it is skipped. YAML and JSON that are not meant as objects (Helm values, CI "
    "workflows, compose files, package manifests) are not findings: they are skipped and counted in the "
    "summary, and `--verbose` lists them.",
)
DUPLICATE_KEY = Rule(
    code="KG003",
    name="duplicate-key",
    practice=_PRACTICE,
    severity=Severity.ERROR,
    summary="A mapping repeats a key; the API server's strict decoding rejects it.",
    target=Target.INPUT,
    check=None,
    gpu_only=False,
    rationale="YAML parsers silently keep the last value, so a repeated `resources:` or `volumeMounts:` "
    "hides half of what the author wrote. kubectl (strict field validation) rejects the object.",
)


def _check_quantities(template: PodTemplate, ctx: RuleContext) -> Iterator[RawFinding]:
    """Every requests/limits value of every container must parse as a quantity."""
    for container in template.containers:
        res = container_resources(container)
        for section in (res.requests, res.limits):
            for value in section.values():
                if value.error is not None:
                    yield _invalid(container, value)


def _invalid(container: ContainerRef, value: ResourceValue) -> RawFinding:
    """The finding for a value that is not a quantity (info where a template placeholder stands for it)."""
    slots = placeholders_in(value.raw)
    if slots:  # a template placeholder: the rendered manifest decides, not this file
        return RawFinding(
            value.path,
            f"container '{container.name}': {value.name} is the placeholder "
            f"{slots[0]}: checks of this value depend on its rendered value (an unrendered "
            "manifest is rejected by the API server)",
            None,
            Severity.INFO,
        )
    return RawFinding(
        value.path,
        f"container '{container.name}': {value.name}: {value.error}; an "
        "unrendered template variable? The API server rejects the object",
    )


INVALID_QUANTITY = Rule(
    code="KG004",
    name="invalid-quantity",
    practice=_PRACTICE,
    severity=Severity.ERROR,
    summary="A resource request or limit is not a Kubernetes quantity.",
    target=Target.TEMPLATE,
    check=_check_quantities,
    gpu_only=False,
    rationale="A value that is not a quantity is rejected by the API server. Template placeholders "
    "(`$GPU_PER_NODE`, `${CPUS}`, `PLACEHOLDER_GPUS`) are reported at info level instead, naming the "
    "placeholder: the rendered manifest decides. Rules that need the value skip it.",
)
ALIAS_BOMB = Rule(
    code="KG005",
    name="alias-bomb",
    practice=_PRACTICE,
    severity=Severity.ERROR,
    summary="YAML aliases expand a document past the size limit (a billion-laughs document).",
    target=Target.INPUT,
    check=None,
    gpu_only=False,
    rationale="The API server caps alias expansion since CVE-2019-11253; kubegpu refuses such documents "
    "before walking them.",
)
UNREADABLE_FILE = Rule(
    code="KG006",
    name="unreadable-file",
    practice=_PRACTICE,
    severity=Severity.ERROR,
    summary="A file cannot be read: missing, binary, not UTF-8, or over the size limit.",
    target=Target.INPUT,
    check=None,
    gpu_only=False,
    rationale="The size limit (20 MiB by default, `max-file-size` in the config or `--max-file-size`) "
    "keeps a stray archive or log from stalling a CI run.",
)
SUPPRESSION_WITHOUT_REASON = Rule(
    code="KG007",
    name="suppression-without-reason",
    practice=_PRACTICE,
    severity=Severity.WARNING,
    summary="A `kubegpu.io/ignore` annotation names a rule without a reason; it does not suppress.",
    target=Target.INPUT,
    check=None,
    gpu_only=False,
    rationale='Write `kubegpu.io/ignore: "dshm-missing: inference only, no DataLoader"` so reviewers '
    "know why a practice does not apply.",
)

RULES: tuple[Rule, ...] = (
    PARSE_ERROR,
    NOT_KUBERNETES_OBJECT,
    DUPLICATE_KEY,
    INVALID_QUANTITY,
    ALIAS_BOMB,
    UNREADABLE_FILE,
    SUPPRESSION_WITHOUT_REASON,
)
