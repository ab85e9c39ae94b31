"""What a lint rule is: metadata as data, a check that yields findings, and fixes made of edits.

Follows ruff's shape: stable codes, kebab-case names, fix safety levels (safe, unsafe, display-only).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from kubegpu.manifests import Document, FieldPath, Location, ObjectRef, PodTemplate


class Severity(StrEnum):
    """How bad a finding is; `--fail-on` compares against this order."""

    INFO = "info"
    WARNING = "warning"
    ERROR = "error"

    @property
    def rank(self) -> int:
        return {"info": 0, "warning": 1, "error": 2}[self.value]


class Safety(StrEnum):
    """Whether a fix may be applied without asking: safe fixes never change what a workload asks for."""

    SAFE = "safe"
    UNSAFE = "unsafe"
    DISPLAY = "display-only"


@dataclass(frozen=True)
class Edit:
    """One JSON-Patch-like operation on a document (paths are relative to the object)."""

    op: str  # "add", "replace" or "remove"
    path: FieldPath
    value: Any = None


@dataclass(frozen=True)
class Fix:
    """A fix: what it does, how safe it is, and the edits that do it."""

    description: str
    safety: Safety
    edits: tuple[Edit, ...]


class Target(StrEnum):
    """What a rule's check receives."""

    TEMPLATE = "template"  # every pod template of every workload (GPU-only rules filter themselves)
    DOCUMENT = "document"  # every Kubernetes object (configs, HPAs, scheduler configs)
    DOCKERFILE = "dockerfile"  # the text of a Dockerfile
    INPUT = "input"  # problems met while reading (parse errors, duplicate keys)


@dataclass(frozen=True)
class Finding:
    """One problem: which rule, where, about which object, what to do, and an optional fix."""

    code: str
    name: str
    severity: Severity
    message: str
    location: Location
    obj: ObjectRef | None = None
    fix: Fix | None = None
    document: Document | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class RawFinding:
    """What a check yields: the field it is about, the message and an optional fix."""

    path: FieldPath
    message: str
    fix: Fix | None = None
    severity: Severity | None = None  # overrides the rule's default for this finding


CheckFunction = Callable[[Any, "RuleContext"], Iterator[RawFinding]]


@dataclass(frozen=True)
class Rule:
    """A rule: code (KG + 3 digits), kebab-case name, seed section, severity, summary, docs and check."""

    code: str
    name: str
    section: str
    severity: Severity
    summary: str
    target: Target
    check: CheckFunction | None  # None for INPUT rules: the loader finds those problems
    rationale: str
    gpu_only: bool = True
    fixable: bool = False
    options: Mapping[str, str] = field(default_factory=dict)  # option name -> description
    good_example: str = ""
    bad_example: str = ""

    @property
    def doc_path(self) -> str:
        return f"docs/rules/{self.code}.md"

    @property
    def help_uri(self) -> str:
        return f"https://github.com/kubegpu/kubegpu/blob/main/docs/rules/{self.code}.md"


@dataclass(frozen=True)
class RuleContext:
    """What a check may know besides its target: options, the whole input, the node model."""

    options: Mapping[str, Any]
    all_documents: tuple[Document, ...] = ()
    accelerator_resources: tuple[str, ...] = ()
    node: Any = None  # kubegpu.topology.NodeTopology when --node is given
    kubelet_config: Any = None  # a KubeletConfiguration dict when --kubelet-config is given
    smt: int | None = None
    documents_by_kind: Mapping[str, tuple[Document, ...]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # Derived once from all_documents, so a context built anywhere answers documents_of().
        if self.all_documents and not self.documents_by_kind:
            by_kind: dict[str, list[Document]] = {}
            for doc in self.all_documents:
                by_kind.setdefault(doc.kind, []).append(doc)
            object.__setattr__(self, "documents_by_kind", {k: tuple(v) for k, v in by_kind.items()})

    def documents_of(self, *kinds: str) -> tuple[Document, ...]:
        """Every object of the given kinds in the whole input (indexed once per run)."""
        if len(kinds) == 1:
            return tuple(self.documents_by_kind.get(kinds[0], ()))
        return tuple(doc for kind in kinds for doc in self.documents_by_kind.get(kind, ()))

    def option(self, rule: str, name: str, default: Any) -> Any:
        per_rule = self.options.get(rule)
        if isinstance(per_rule, Mapping) and name in per_rule:
            return per_rule[name]
        return default


def template_object(template: PodTemplate) -> ObjectRef:
    return template.document.ref
