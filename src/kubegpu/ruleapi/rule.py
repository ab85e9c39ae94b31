"""What a lint rule is: metadata as data, a check that yields findings, and fixes made of edits.

Follows ruff's shape: stable codes, kebab-case names, fix safety levels (safe, unsafe, display-only).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from kubegpu.manifests import Document, FieldPath, Location, ObjectRef, PodTemplate
from kubegpu.ruleapi.options import RuleOption
from kubegpu.workloads import looked_up_kinds

if TYPE_CHECKING:
    from kubegpu.topology.model import NodeTopology


class Severity(StrEnum):
    """How bad a finding is; `--fail-on` compares against this order."""

    INFO = "info"
    WARNING = "warning"
    ERROR = "error"

    @property
    def rank(self) -> int:
        return _SEVERITY_RANKS[self]


_SEVERITY_RANKS: Mapping[Severity, int] = {Severity.INFO: 0, Severity.WARNING: 1, Severity.ERROR: 2}


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


@dataclass(frozen=True, slots=True)  # a monorepo run keeps a hundred thousand until the report
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


@dataclass(frozen=True, slots=True)
class RawFinding:
    """What a check yields: the field it is about, the message and an optional fix."""

    path: FieldPath
    message: str
    fix: Fix | None = None
    severity: Severity | None = None  # overrides the rule's default for this finding


CheckFunction = Callable[[Any, "RuleContext"], Iterator[RawFinding]]


@dataclass(frozen=True)
class Rule:
    """A rule: code (KG + 3 digits), kebab-case name, practice, severity, summary, docs and check."""

    code: str
    name: str
    practice: str  # the practice of the GPU performance guide it checks, in words
    severity: Severity
    summary: str
    target: Target
    check: CheckFunction | None  # None for INPUT rules: the loader finds those problems
    rationale: str
    gpu_only: bool = True
    fixable: bool = False
    options: tuple[RuleOption[Any], ...] = ()  # [rules.<name>] in kubegpu.toml: checked when it is read
    good_example: str = ""
    bad_example: str = ""
    # DOCUMENT rules: the only kinds they can report on (None: any kind), so that the engine does not call them
    # for the other objects of a monorepo.
    kinds: frozenset[str] | None = None

    def option(self, name: str) -> RuleOption[Any] | None:
        return next((option for option in self.options if option.name == name), None)

    @property
    def doc_path(self) -> str:
        return f"docs/rules/{self.code}.md"

    @property
    def help_uri(self) -> str:
        return f"https://github.com/kubegpu/kubegpu/blob/main/docs/rules/{self.code}.md"


# What a check may read besides its own object. Checks look objects of these kinds up (documents_of):
LOOKED_UP_KINDS = frozenset(
    {
        *looked_up_kinds(),  # the runtimes workloads are bound to: gang policy, container resources, /dev/shm
        "Workload",
        "PodGroup",  # the gang a pod template names
        "LocalModelCache",
        "ClusterLocalModel",
        "PersistentVolumeClaim",  # where model weights are cached
        "ComputeDomain",
        "ResourceClaimTemplate",
        "ResourceClaim",  # GB200 NVLink domains
        "KubeSchedulerConfiguration",  # bin-packing profiles
        "ConfigMap",  # Python code a GPU container mounts (model downloads)
    }
)
# ...and checks of objects of these kinds read the whole input (whole_input): an autoscaler's scale
# target, a PodGroup's or Workload's member pods can be any object.
WHOLE_INPUT_KINDS = frozenset({"HorizontalPodAutoscaler", "ScaledObject", "PodGroup", "Workload"})


class ContextError(LookupError):
    """A check read other objects outside the declared lookups (a rule bug: declare the kind above)."""


@dataclass(frozen=True)
class NodeTarget:
    """The node an input is linted against: its hardware (--node), the KubeletConfiguration document of its
    kubelet (--kubelet-config, as kubegpu.kubelet.config.read_kubelet_config_data reads it) and an SMT level
    (--smt). Empty: no node-dependent checks."""

    node: NodeTopology | None = None
    kubelet_config: Mapping[str, Any] | None = None
    smt: int | None = None


@dataclass(frozen=True)
class RuleContext:
    """What a check may know besides its target: options, other objects of the input, the node model.

    Other objects are read only through `documents_of` (kinds in LOOKED_UP_KINDS) and `whole_input`
    (from checks of WHOLE_INPUT_KINDS objects). That contract lets `lint --jobs` give each process
    only the objects its checks can read; `whole_input_shared` is False when the input's other
    objects were left out because no object of those kinds is in it.
    """

    options: Mapping[str, Any]  # rule name -> option -> checked value; rules read them through RuleOption.read
    all_documents: tuple[Document, ...] = ()
    accelerator_resources: tuple[str, ...] = ()
    node: NodeTopology | None = None  # when --node is given
    kubelet_config: Mapping[str, Any] | None = None  # the KubeletConfiguration document of --kubelet-config
    smt: int | None = None
    documents_by_kind: Mapping[str, tuple[Document, ...]] = field(default_factory=dict)
    whole_input_shared: bool = True

    def __post_init__(self) -> None:
        # Derived once from all_documents, so a context built anywhere answers documents_of().
        if self.all_documents and not self.documents_by_kind:
            by_kind: dict[str, list[Document]] = {}
            for doc in self.all_documents:
                by_kind.setdefault(doc.kind, []).append(doc)
            object.__setattr__(self, "documents_by_kind", {k: tuple(v) for k, v in by_kind.items()})

    def documents_of(self, *kinds: str) -> tuple[Document, ...]:
        """Every object of the given kinds in the whole input (indexed once per run)."""
        undeclared = set(kinds) - LOOKED_UP_KINDS
        if undeclared:
            raise ContextError(f"a check looks up {sorted(undeclared)}: add them to LOOKED_UP_KINDS")
        if len(kinds) == 1:
            return tuple(self.documents_by_kind.get(kinds[0], ()))
        return tuple(doc for kind in kinds for doc in self.documents_by_kind.get(kind, ()))

    def whole_input(self, about: Document) -> tuple[Document, ...]:
        """Every object of the input, for the check of `about` (an object of a WHOLE_INPUT_KINDS kind)."""
        if about.kind not in WHOLE_INPUT_KINDS:
            raise ContextError(f"a check of a {about.kind} reads the whole input: add it to WHOLE_INPUT_KINDS")
        if not self.whole_input_shared:
            raise ContextError("the whole input was not shared with this process")
        return self.all_documents


def template_object(template: PodTemplate) -> ObjectRef:
    return template.document.ref
