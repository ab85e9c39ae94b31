"""What every workload kind answers, in the style of Kueue's jobframework.GenericJob: one adapter per kind family.

Each adapter is a `WorkloadKind`: the kinds (and API groups) it reads, and its answers to the same questions: its
pod templates with their paths, its gang shape (how many pods must run together) and the gang its own controller
gives it, its placement constraints, its expansion to pods for the simulator, and a few facts the commands
read (whether the API server validates its pod templates, where Kueue reads its labels). A question a kind does
not answer keeps the default given here. kubegpu.workloads.registry lists the adapters.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubegpu.manifests.document import Document, FieldPath
from kubegpu.manifests.placeholders import DEPENDS_ON
from kubegpu.manifests.template import PodTemplate

DocumentsOf = Callable[[str], Iterable[Document]]


@dataclass(frozen=True)
class GangShape:
    """A multi-pod workload: its templates, how many pods one gang unit holds and how many of them use GPUs."""

    doc: Document
    templates: tuple[PodTemplate, ...]
    gpu_templates: tuple[PodTemplate, ...]
    unit_pods: int  # pods that must run together (an LWS group; the whole job otherwise)
    unit_gpu_pods: int
    unit: str  # how the unit is described in messages
    placeholder: str = ""  # "field: value" when a pod count is a template placeholder (the shape assumes 2 pods)

    @property
    def hedge(self) -> str:
        """The words that say the finding depends on a placeholder's rendered value ('' when it does not)."""
        return f" (this {DEPENDS_ON} {self.placeholder}: it applies when that is above 1)" if self.placeholder else ""

    def roles(self, templates: Sequence[PodTemplate] | None = None) -> str:
        names = [t.role or "pods" for t in (self.templates if templates is None else templates)]
        return ", ".join(dict.fromkeys(names))


@dataclass(frozen=True)
class GangVerdict:
    """Whether a job is gang-admitted, by what, and, when it is not, why (for the message)."""

    mechanism: str | None
    reason: str = ""


@dataclass(frozen=True)
class GangMinimum:
    """A gang minimum an object sets (minAvailable, minMember) and the pods it is measured against.

    `scope` says what it covers: "job" (the whole job's gang, against all its pods), "task" (one task's pods, the
    job setting none) or "replicas" (a training operator's gang, against the job's gang unit; `elastic` when the
    job declares itself elastic, so a smaller gang is intended).
    """

    path: FieldPath
    minimum: int
    pods: int | None  # None: the gang unit of the job's shape
    scope: str
    name: str = ""  # the task's name
    elastic: bool = False


@dataclass(frozen=True)
class SimulatedPods:
    """The pods the simulator runs for an object, as one gang: the job's name, then each pod template with the
    names of the pods made from it, template by template (read lazily: each group is checked as it is reached)."""

    name: str
    groups: Iterable[tuple[Mapping[str, Any], tuple[str, ...]]]
    may_be_empty: bool = False  # no pods is no job (a TrainJob whose runtime makes none), not an error


# The questions, as the callables an adapter gives.
Templates = Callable[[Document], Iterable[PodTemplate]]
Gang = Callable[[Document, tuple[PodTemplate, ...], tuple[PodTemplate, ...]], GangShape | None]
OwnGang = Callable[[Document], GangVerdict | None]
Minimums = Callable[[Document], Iterator[GangMinimum]]
Placement = Callable[[Document, PodTemplate], str | None]
Expansion = Callable[[Document, str], SimulatedPods | None]
Bind = Callable[[Document, DocumentsOf], None]
Runtimes = Callable[[Document], Iterable[Document]]
Note = Callable[[Document], str]
Test = Callable[[Document], bool]
# (where a count of replicas that keeps pods up is written, its value now), for each such field
Floors = Callable[[Mapping[str, Any]], list[tuple[FieldPath, Any]]]
Wrapped = Callable[[Document], Iterable[Document]]


def _no_verdict(doc: Document) -> GangVerdict | None:
    return None


def _no_minimums(doc: Document) -> Iterator[GangMinimum]:
    return iter(())


def _no_placement(doc: Document, template: PodTemplate) -> str | None:
    return None


def _no_binding(doc: Document, documents_of: DocumentsOf) -> None:
    return None


def _no_runtimes(doc: Document) -> Iterable[Document]:
    return ()


def _no_note(doc: Document) -> str:
    return ""


def _nothing_wrapped(doc: Document) -> Iterable[Document]:
    return ()


def _no_floors(data: Mapping[str, Any]) -> list[tuple[FieldPath, Any]]:
    return []


def _never(doc: Document) -> bool:
    return False


def always(doc: Document) -> bool:
    """The answer of a test that holds for every object of the kind."""
    return True


@dataclass(frozen=True, eq=False, repr=False)  # compared by identity: one object per adapter (cheaper to build)
class WorkloadKind:
    """One kind family's answers (see the module docstring); each field's default is the answer of a kind that
    does not have the feature."""

    kinds: frozenset[str]
    # The pod templates of an object, with their paths (the one place a kind's layout is known).
    templates: Templates
    # API groups the adapter reads (None: any group; a Job of batch and one of Volcano are different kinds).
    groups: frozenset[str] | None = None
    # Whole objects the object wraps, whose pods are its own (an AppWrapper's components).
    wraps: Wrapped = _nothing_wrapped
    # The pods that must run together, when the kind is a distributed one (None: it never is).
    gang: Gang | None = None
    # The all-or-nothing admission the kind's own controller gives (a Volcano Job's PodGroup), or why it gives none.
    own_gang: OwnGang = _no_verdict
    # KAI Scheduler's pod-grouper gangs the kind's pods itself (one PodGroup, minMember = all pods).
    kai_gangs: bool = False
    # The kind's operator creates a PodGroup when its pods' scheduler is a gang scheduler (Volcano, coscheduling).
    operator_gang: bool = False
    # A pod count (a multi-node InferenceService's) that the gang admission rule leaves alone.
    needs_gang_admission: bool = True
    # A serving group: its leader and workers only work together (the gang message says so).
    serving_group: bool = False
    # The gang minimums the object sets (minAvailable, minMember).
    minimums: Minimums = _no_minimums
    # Kueue admits this kind partially with the job-min-parallelism annotation.
    kueue_partial_admission: bool = False
    # Where Kueue and KAI read the object's own labels and annotations (a CronJob's come from its jobTemplate).
    object_metadata: FieldPath = ("metadata",)
    # A Job whose pods may be independent workers of a work queue (not Indexed).
    work_queue: Test = _never
    # A placement constraint the kind's own fields give a template's pods (Volcano networkTopology).
    placement: Placement = _no_placement
    # Annotations on the object that keep each group's pods in one topology domain (LeaderWorkerSet, JobSet).
    exclusive_topology: tuple[str, ...] = ()
    # How to add a placement constraint for this kind (None: Kueue's topology annotations or a podAffinity).
    placement_advice: str | None = None
    # Kueue manages the kind's pods (its pod templates take Kueue's topology annotations).
    kueue_manages_pods: bool = True
    # The pod spec's schedulerName decides the scheduler (False: the kind's controller sets it).
    scheduler_settable: bool = True
    # The pods the simulator expands the object to, read strictly (None: the simulator does not read the kind).
    sim_pods: Expansion | None = None
    # The API groups in which the API server validates the kind's pod templates as whole pods.
    validated_in: frozenset[str] = frozenset()
    # The pods are built from fields other than a pod spec of the object (an operator's, a TrainJob's runtime):
    # fixes that edit pod-spec paths do not apply to them.
    synthesised: Test = _never
    # An operator builds the pods from its own fields: the volumes it adds are the pod's, written nowhere in the
    # object.
    operator_pods: bool = False
    # The object's pods are read through pod_spec (a controller completes or rebuilds them), not at their paths.
    rebuilt: Test = _never
    # Bind the object to the runtime of the input that makes its pods (a TrainJob's TrainingRuntime).
    bind: Bind = _no_binding
    # The runtimes bound to the object (they make no pods of their own).
    runtimes: Runtimes = _no_runtimes
    # Words for the object's findings: where its pods were read from.
    pod_note: Note = _no_note
    # Kinds of other objects the adapter reads (runtimes), which lint's context must hand out.
    looked_up: frozenset[str] = field(default_factory=frozenset)
    # The home directory of the kind's containers, whatever their image (KubeRay runs as user ray).
    home: str | None = None
    # Where the object holds its driver's command line, beside its containers' (a RayJob's entrypoint).
    entrypoint: FieldPath | None = None
    # Where the replicas that stay up whatever the load are written (a warm pool raises them), with their values.
    replica_floors: Floors = _no_floors
