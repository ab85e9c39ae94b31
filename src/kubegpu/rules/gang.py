"""Gang scheduling rules (KG5xx): multi-pod GPU jobs need all-or-nothing admission, with a gang size that covers them.

Follows Kueue v0.14 (queue-name label, job-min-parallelism), Volcano v1.12 (Job minAvailable, PodGroup minMember,
scheduling.k8s.io/group-name), KAI Scheduler v0.9 (pod-grouper: kubeflow/ray/LWS gangs, one PodGroup per batch
Job pod), scheduler-plugins coscheduling (scheduling.x-k8s.io/pod-group) and the native Workload API (KEP-4671:
v1.35 spec.workloadRef, v1.36 spec.schedulingGroup.podGroupName).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from kubegpu.manifests import (
    Document,
    FieldPath,
    PodTemplate,
    as_mapping,
    get_path,
    is_mapping,
    mapping_items,
    uses_accelerators,
)
from kubegpu.manifests.document import format_path
from kubegpu.manifests.template import int_field
from kubegpu.ruleapi import Edit, Fix, RawFinding, Rule, RuleContext, Safety, Severity, Target
from kubegpu.ruleapi.options import RuleOption, queue_name
from kubegpu.workloads import GangMinimum, GangShape, GangVerdict, gang_shape, kind_of, pod_templates, shaped_kinds
from kubegpu.workloads.stack import stack_of

_PRACTICE = "gang scheduling"
KUEUE_QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
KUEUE_MIN_PARALLELISM = "kueue.x-k8s.io/job-min-parallelism"
KAI_QUEUE_LABEL = "kai.scheduler/queue"
KAI_SCHEDULER = "kai-scheduler"
KAI_POD_GROUP_ANNOTATION = "pod-group-name"
VOLCANO_SCHEDULER = "volcano"
VOLCANO_GROUP_ANNOTATIONS = ("scheduling.k8s.io/group-name", "scheduling.volcano.sh/group-name")
COSCHEDULING_LABELS = ("scheduling.x-k8s.io/pod-group", "pod-group.scheduling.sigs.k8s.io")
COSCHEDULING_SCHEDULER = "scheduler-plugins-scheduler"
# Operators (training-operator, mpi-operator) create a PodGroup when their gang scheduler is the pods' scheduler.
OPERATOR_GANG_SCHEDULERS = frozenset({VOLCANO_SCHEDULER, COSCHEDULING_SCHEDULER})
PODGROUP_GROUPS = {
    "scheduling.volcano.sh": "Volcano",
    "scheduling.x-k8s.io": "coscheduling",
    "scheduling.sigs.k8s.io": "coscheduling",
    "scheduling.run.ai": "KAI",
}
NATIVE_GROUP = "scheduling.k8s.io"
# The kinds a job shape can be worked out for (their adapters answer `gang`): the gang and topology rules report on
# these only. Kinds whose pods form one distributed program (training ranks, a multi-host model replica); RayCluster,
# RayService and StatefulSet count only when they are one: two or more GPU workers of a fixed-size Ray cluster,
# a StatefulSet whose GPU containers start a distributed launcher.
SHAPED_KINDS = shaped_kinds()


def _group(doc: Document) -> str:
    group, slash, _version = doc.api_version.partition("/")
    return group if slash else ""


def is_work_queue_job(doc: Document) -> bool:
    """A Job (or CronJob) that is not Indexed: its pods may be independent workers, not ranks of one job."""
    adapter = kind_of(doc)
    return adapter is not None and adapter.work_queue(doc)


def relative_path(doc: Document, template: PodTemplate, path: FieldPath) -> FieldPath:
    """A template path made relative to `doc` (templates embedded in an AppWrapper live in an inner document)."""
    inner = template.document
    if inner is doc:
        return path
    return (*inner.prefix[len(doc.prefix) :], *path)


def job_shape(doc: Document, ctx: RuleContext) -> GangShape | None:
    """The job's shape when it is a GPU workload of a distributed kind with a known pod count; else None."""
    return gang_shape(doc, tuple(ctx.accelerator_resources))


def _object_metadata(doc: Document) -> Mapping[str, Any]:
    """The object's own metadata as Kueue reads it (a CronJob's is its jobTemplate's)."""
    adapter = kind_of(doc)
    path = ("metadata",) if adapter is None else adapter.object_metadata
    return doc.metadata if path == ("metadata",) else as_mapping(get_path(doc.data, path))


def object_labels(doc: Document) -> Mapping[str, Any]:
    """The labels Kueue reads for this object (a CronJob's come from its jobTemplate)."""
    return as_mapping(_object_metadata(doc).get("labels"))


def object_annotations(doc: Document) -> Mapping[str, Any]:
    return as_mapping(_object_metadata(doc).get("annotations"))


def kueue_managed(doc: Document) -> bool:
    """Kueue admits the workload: the queue-name label (or the deprecated annotation) on the job object."""
    meta = _object_metadata(doc)
    return bool(
        as_mapping(meta.get("labels")).get(KUEUE_QUEUE_LABEL)
        or as_mapping(meta.get("annotations")).get(KUEUE_QUEUE_LABEL)
    )


def _scheduler(template: PodTemplate) -> str:
    value = template.spec.get("schedulerName")
    return str(value) if value else "default-scheduler"


def native_group(template: PodTemplate) -> tuple[str, str] | None:
    """The Workload API reference of a pod template: ("workload", name/group) or ("podgroup", name)."""
    spec = template.spec
    if "workloadRef" not in spec and "schedulingGroup" not in spec:
        return None  # most pods: neither field
    ref = as_mapping(spec.get("workloadRef"))
    if ref.get("name"):
        return "workload", f"{ref.get('name')}/{ref.get('podGroup') or ''}"
    group = as_mapping(spec.get("schedulingGroup")).get("podGroupName")
    if group:
        return "podgroup", str(group)
    return None


def podgroup_reference(template: PodTemplate) -> tuple[str, str] | None:
    """(scheduler family, PodGroup name) a pod template points at through labels or annotations."""
    annotations = template.annotations
    if annotations:  # (most templates have none: their key look-ups are skipped)
        for key in VOLCANO_GROUP_ANNOTATIONS:
            if annotations.get(key):
                return "Volcano", str(annotations[key])
    labels = template.labels
    if labels:
        for key in COSCHEDULING_LABELS:
            if labels.get(key):
                return "coscheduling", str(labels[key])
    if annotations and annotations.get(KAI_POD_GROUP_ANNOTATION):
        return "KAI", str(annotations[KAI_POD_GROUP_ANNOTATION])
    return None


_KAI_ONLY = frozenset({KAI_SCHEDULER})


_NO_MECHANISM = GangVerdict(None)  # the common answer, made once


def gang_verdict(shape: GangShape, ctx: RuleContext) -> GangVerdict:
    """Which all-or-nothing mechanism covers every pod of the job, if any."""
    doc = shape.doc
    if kueue_managed(doc):
        return GangVerdict(f"Kueue ({KUEUE_QUEUE_LABEL}: {object_labels(doc).get(KUEUE_QUEUE_LABEL)})")
    adapter = kind_of(doc)
    own = adapter.own_gang(doc) if adapter is not None else None
    if own is not None:  # the kind's controller gangs it (a Volcano Job's PodGroup), or says why it may not
        return own
    templates = shape.templates
    natives = [native_group(t) for t in templates]
    if all(natives):
        basic = [ref for ref in natives if ref is not None and _native_policy(ref, doc, ctx) == "basic"]
        if basic:
            return GangVerdict(
                None, f"its pods reference the Workload API group {basic[0][1]!r}, whose policy is 'basic' (no gang)"
            )
        return GangVerdict("the Workload API (a gang PodGroup)")
    refs = [podgroup_reference(t) for t in templates]
    if all(refs):
        family = refs[0][0] if refs[0] else ""
        return GangVerdict(f"a {family} PodGroup ({refs[0][1] if refs[0] else ''})")
    return _scheduler_verdict(shape, {_scheduler(t) for t in templates}, refs)


def _scheduler_verdict(shape: GangShape, schedulers: set[str], refs: list[tuple[str, str] | None]) -> GangVerdict:
    """The verdict the pods' scheduler (and their partial PodGroup references, or a misplaced queue label) give."""
    doc, templates = shape.doc, shape.templates
    adapter = kind_of(doc)
    if schedulers == _KAI_ONLY:
        if adapter is not None and adapter.kai_gangs:
            return GangVerdict("KAI Scheduler (its pod-grouper gangs this kind)")
        return GangVerdict(
            None,
            f"KAI's pod-grouper does not gang a {doc.kind}: a batch Job's pods each get their "
            f"own PodGroup; annotate the pods with {KAI_POD_GROUP_ANNOTATION} pointing at a PodGroup "
            "with minMember, or use a kind KAI gangs (PyTorchJob, MPIJob, RayJob, LeaderWorkerSet)",
        )
    operator_gang = adapter is not None and adapter.operator_gang
    if len(schedulers) == 1 and schedulers <= OPERATOR_GANG_SCHEDULERS and operator_gang:
        return GangVerdict(f"the operator's PodGroup for {next(iter(schedulers))}")
    if any(refs):
        partial = [t for t, ref in zip(templates, refs, strict=True) if ref is None]
        if partial:
            return GangVerdict(None, f"only some roles join a PodGroup; {shape.roles(partial)} do not")
    if VOLCANO_SCHEDULER in schedulers:
        return GangVerdict(
            None,
            "schedulerName: volcano alone is not a gang: Volcano gives pods without a "
            "scheduling.k8s.io/group-name annotation a PodGroup of one member; use a Volcano Job "
            "or a PodGroup with minMember",
        )
    if any(t.labels.get(KUEUE_QUEUE_LABEL) for t in templates):
        return GangVerdict(
            None,
            f"the {KUEUE_QUEUE_LABEL} label sits on the pod template, but Kueue reads it "
            f"from the {doc.kind}'s own metadata.labels",
        )
    return _NO_MECHANISM


def _native_policy(ref: tuple[str, str], doc: Document, ctx: RuleContext) -> str | None:
    """'gang' or 'basic' when the referenced Workload group or PodGroup is in the input; None otherwise."""
    kind, key = ref
    for other in ctx.documents_of("Workload", "PodGroup"):
        if _group(other) != NATIVE_GROUP or not _same_namespace(other, doc):
            continue
        name = str(other.metadata.get("name") or "")
        if kind == "workload" and other.kind == "Workload":
            workload, _, group = key.partition("/")
            if name != workload:
                continue
            for entry in mapping_items(
                get_path(other.data, ("spec", "podGroups")) or get_path(other.data, ("spec", "podGroupTemplates"))
            ):
                if entry.get("name") == group:
                    policy = as_mapping(entry.get("policy") or entry.get("schedulingPolicy"))
                    return "gang" if "gang" in policy else ("basic" if "basic" in policy else None)
        if kind == "podgroup" and other.kind == "PodGroup" and name == key:
            policy = as_mapping(get_path(other.data, ("spec", "schedulingPolicy")))
            return "gang" if "gang" in policy else ("basic" if "basic" in policy else None)
    return None


def _same_namespace(a: Document, b: Document) -> bool:
    na, nb = a.metadata.get("namespace"), b.metadata.get("namespace")
    return na is None or nb is None or na == nb


def metadata_anchor(doc: Document) -> FieldPath:
    meta = doc.data.get("metadata") if is_mapping(doc.data) else None
    if is_mapping(meta):
        return ("metadata", "labels") if "labels" in meta else ("metadata",)
    return ("kind",)


# --- KG501 ---------------------------------------------------------------------------------------------------


def _check_gang_missing(doc: Document, ctx: RuleContext) -> Iterator[RawFinding]:
    shape = job_shape(doc, ctx)
    adapter = kind_of(doc)
    if shape is None or shape.unit_pods < 2 or adapter is None or not adapter.needs_gang_admission:
        return
    if shape.unit_gpu_pods < 2:  # one accelerator pod (and CPU pods beside it): no accelerators held while waiting
        return
    verdict = gang_verdict(shape, ctx)
    if verdict.mechanism is not None:
        return
    queue = QUEUE.read(ctx, "gang-missing")
    fix = None
    if queue:
        labels_path: FieldPath = (*adapter.object_metadata, "labels")
        fix = Fix(
            f"add the Kueue label {KUEUE_QUEUE_LABEL}: {queue} to the {doc.kind} (Kueue then suspends it "
            "until the whole workload fits its quota)",
            Safety.UNSAFE,
            (Edit("add", (*labels_path, KUEUE_QUEUE_LABEL), str(queue)),),
        )
    serving = " (a serving group: its leader and workers only work together)" if adapter.serving_group else ""
    reason = f"; {verdict.reason}" if verdict.reason else ""
    work_queue = is_work_queue_job(doc)
    if work_queue:
        reason += (
            "; this Job is not Indexed, so its pods may be independent workers of a work queue (then "
            "suppress this finding with a reason); distributed ranks need completionMode: Indexed"
        )
    yield RawFinding(
        metadata_anchor(doc),
        f"{doc.kind} '{doc.ref.name}' needs {shape.unit} ({shape.roles()}) running at once{serving}, but nothing "
        f"admits them all-or-nothing{reason}: the scheduler binds pods one by one, so partly placed jobs hold "
        f"{stack_of(doc, shape.gpu_templates).device}s "
        f"while they wait and can deadlock each other; add the label {KUEUE_QUEUE_LABEL} to the {doc.kind}, or use "
        "Volcano (PodGroup minMember), KAI Scheduler, coscheduling or the Workload API"
        + ("" if queue else " (give --queue or the rule option `queue` for an automatic fix)")
        + shape.hedge,
        fix,
        Severity.INFO if work_queue or shape.placeholder else None,
    )


# --- KG502 ---------------------------------------------------------------------------------------------------


def _check_gang_partial(doc: Document, ctx: RuleContext) -> Iterator[RawFinding]:
    if doc.kind == "PodGroup" and (_group(doc) in PODGROUP_GROUPS or _group(doc) == NATIVE_GROUP):
        yield from _check_podgroup(doc, ctx)
        return
    if doc.kind == "Workload" and _group(doc) == NATIVE_GROUP:
        yield from _check_workload(doc, ctx)
        return
    shape = job_shape(doc, ctx)
    adapter = kind_of(doc)
    if shape is None or shape.unit_pods < 2 or adapter is None:
        return
    for minimum in adapter.minimums(doc):
        yield from _check_minimum(minimum, shape)
    if adapter.kueue_partial_admission and kueue_managed(doc):
        parallelism = int_field(object_annotations(doc).get(KUEUE_MIN_PARALLELISM), None)
        if parallelism is not None and parallelism < shape.unit_pods:
            yield RawFinding(
                ("metadata", "annotations", KUEUE_MIN_PARALLELISM),
                f"{KUEUE_MIN_PARALLELISM}: {parallelism} lets Kueue admit this Job with only {parallelism} of "
                f"its {shape.unit_pods} pods (partial admission); a distributed training job with a fixed "
                "world size then never completes its rendezvous",
                severity=Severity.INFO,
            )


def _check_minimum(gang: GangMinimum, shape: GangShape) -> Iterator[RawFinding]:
    """A gang minimum the object sets, against the pods it counts (a minimum above them is unschedulable)."""
    minimum = gang.minimum
    if gang.scope == "replicas":  # a training operator's gang, against the job's gang unit
        if minimum < shape.unit_pods and not gang.elastic:
            yield RawFinding(
                gang.path,
                f"{format_path(gang.path[1:])} is {minimum} but the job has {shape.unit_pods} "
                f"pods ({shape.roles()}): the gang starts with {minimum} and the others wait holding "
                "nothing, while the started ranks hold their GPUs waiting for the rest (this job has no "
                f"elasticPolicy); set it to {shape.unit_pods} or remove it",
            )
    elif gang.scope == "job":  # the whole job's gang, against every pod of its tasks
        total = gang.pods or 0
        if minimum > total:
            yield RawFinding(
                gang.path,
                f"minAvailable {minimum} is more than the {total} pods of the "
                "tasks: Volcano's admission webhook rejects the Job",
                severity=Severity.ERROR,
            )
        elif minimum < total:
            yield RawFinding(
                gang.path,
                f"minAvailable {minimum} is below the {total} pods of the tasks ({shape.roles()}): "
                f"Volcano starts the job once {minimum} pods fit and the other {total - minimum} wait, "
                f"while the started ranks hold their GPUs; set minAvailable: {total} unless the job is "
                "elastic",
            )
    elif gang.pods is not None and minimum < gang.pods:  # one task's gang, the job setting none
        yield RawFinding(
            gang.path,
            f"task '{gang.name}' has minAvailable {minimum} of {gang.pods} replicas and the "
            "Job sets no minAvailable, so Volcano's gang is the sum of the task minimums: the job "
            f"starts without {gang.pods - minimum} of these pods",
        )


def _referencing_pods(group_doc: Document, ctx: RuleContext) -> tuple[int | None, bool]:
    """Pods in the input that belong to a PodGroup document, and whether any of them uses GPUs."""
    name = str(group_doc.metadata.get("name") or "")
    native = _group(group_doc) == NATIVE_GROUP
    family = PODGROUP_GROUPS.get(_group(group_doc))
    total: int | None = 0
    gpu = False
    for doc in ctx.whole_input(group_doc):
        if doc is group_doc or not _same_namespace(doc, group_doc):
            continue
        for template in pod_templates(doc):
            if native:
                ref = native_group(template)
                match = ref == ("podgroup", name)
            else:
                found = podgroup_reference(template)
                match = found is not None and found[1] == name and family == found[0]
            if not match:
                continue
            gpu = gpu or uses_accelerators(template, ctx.accelerator_resources)
            total = None if total is None or template.replicas is None else total + template.replicas
    return total, gpu


def _check_podgroup(doc: Document, ctx: RuleContext) -> Iterator[RawFinding]:
    if _group(doc) == NATIVE_GROUP:
        path: FieldPath = ("spec", "schedulingPolicy", "gang", "minCount")
    else:
        path = ("spec", "minMember")
    minimum = int_field(get_path(doc.data, path), None)
    if minimum is None:
        return
    pods, gpu = _referencing_pods(doc, ctx)
    if not gpu or not pods:
        return
    yield from _compare(path, f"PodGroup '{doc.ref.name}'", minimum, pods)


def _compare(path: FieldPath, what: str, minimum: int, pods: int) -> Iterator[RawFinding]:
    field = path[-1]
    if minimum < pods:
        yield RawFinding(
            path,
            f"{what} has {field} {minimum} but {pods} GPU-job pods in the input belong to it: the "
            f"scheduler starts the group once {minimum} fit and the other {pods - minimum} wait while the "
            f"started pods hold their GPUs; set {field}: {pods}",
        )
    elif minimum > pods:
        yield RawFinding(
            path,
            f"{what} has {field} {minimum} but only {pods} pods in the input belong to it: the "
            "group never becomes schedulable",
            severity=Severity.ERROR,
        )


def _check_workload(doc: Document, ctx: RuleContext) -> Iterator[RawFinding]:
    name = str(doc.metadata.get("name") or "")
    key = "podGroups" if isinstance(get_path(doc.data, ("spec", "podGroups")), list) else "podGroupTemplates"
    for i, group in enumerate(mapping_items(get_path(doc.data, ("spec", key)))):
        policy_key = "policy" if "policy" in group else "schedulingPolicy"
        minimum = int_field(get_path(group, (policy_key, "gang", "minCount")), None)
        if minimum is None:
            continue
        pods: int | None = 0
        gpu = False
        for other in ctx.whole_input(doc):
            if not _same_namespace(other, doc):
                continue
            for template in pod_templates(other):
                if native_group(template) != ("workload", f"{name}/{group.get('name')}"):
                    continue
                gpu = gpu or uses_accelerators(template, ctx.accelerator_resources)
                pods = None if pods is None or template.replicas is None else pods + template.replicas
        if gpu and pods:
            yield from _compare(
                ("spec", key, i, policy_key, "gang", "minCount"),
                f"Workload '{name}' group '{group.get('name')}'",
                minimum,
                pods,
            )


QUEUE = RuleOption[str | None](
    name="queue",
    help="Kueue LocalQueue for the fix's kueue.x-k8s.io/queue-name label (`kubegpu fix --queue` sets it)",
    expected="a LocalQueue name: lowercase letters, digits, '-' and '.', starting and ending with a letter or digit, "
    "at most 63 characters",
    example='"team-a"',
    parse=queue_name,
    default=None,
    default_text="none: the fix needs one",
)

GANG_MISSING = Rule(
    code="KG501",
    name="gang-missing",
    practice=_PRACTICE,
    severity=Severity.WARNING,
    summary="A multi-pod GPU job has no all-or-nothing admission (Kueue, Volcano, KAI, coscheduling, Workload API).",
    target=Target.DOCUMENT,
    kinds=SHAPED_KINDS,
    check=_check_gang_missing,
    fixable=True,
    options=(QUEUE,),
    rationale="Distributed training needs every rank at once. The default scheduler binds pods one at a time, so "
    "two jobs that each got half their pods both hold GPUs and wait forever. Kueue admits a whole workload or "
    "nothing (label kueue.x-k8s.io/queue-name on the job object, not on its pod template); Volcano Jobs and "
    "PodGroups gang by minMember; KAI gangs PyTorchJob, TFJob, MPIJob, XGBoostJob, JAXJob, Ray and LeaderWorkerSet "
    "workloads (but gives each batch Job pod, and each PaddleJob or MXJob pod, its own PodGroup); "
    "scheduler-plugins coscheduling uses the scheduling.x-k8s.io/pod-group label; the "
    "native Workload API uses spec.workloadRef (v1.35) or spec.schedulingGroup (v1.36). Counted: Job parallelism, "
    "JobSet, Kubeflow replica specs, TrainJob numNodes (with its runtime's trainer pods when the runtime is in the "
    "input), RayJob workers, RayCluster and RayService clusters of a fixed size with two or more GPU workers (not "
    "autoscaled ones), StatefulSets whose GPU containers start a distributed launcher (ray start, torchrun, "
    "MASTER_ADDR, mpirun), LeaderWorkerSet groups, KServe LLMInferenceService workloads with a worker template "
    "(one LeaderWorkerSet group per replica, its size from parallelism; Kueue labels on the LLMInferenceService "
    "reach it), AppWrapper contents and objects an Argo resource step creates. NVIDIA Dynamo services with "
    "multinode.nodeCount > 1 are ganged by the Dynamo operator (Grove, or a LeaderWorkerSet with Volcano). "
    "A parallel Job that is not Indexed is reported as information "
    "only: it may be a work queue of "
    "independent pods. A pod count that is a template placeholder (`replicas: $NUM_NODES`) is checked as if it "
    "rendered above 1 and reported as information naming the placeholder. Kueue's manageJobsWithoutQueueName "
    "cannot be seen in manifests; suppress with a reason if you rely on it.",
    bad_example="apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: train}\nspec:\n"
    "  pytorchReplicaSpecs:\n    Worker: {replicas: 4, template: ...}   # nvidia.com/gpu: 8",
    good_example="metadata:\n  name: train\n  labels: {kueue.x-k8s.io/queue-name: team-a}",
)
GANG_PARTIAL = Rule(
    code="KG502",
    name="gang-partial",
    practice=_PRACTICE,
    severity=Severity.WARNING,
    summary="A gang's minimum (minAvailable, minMember, minCount) is below the pods the GPU job needs.",
    target=Target.DOCUMENT,
    kinds=SHAPED_KINDS | {"PodGroup", "Workload"},
    check=_check_gang_partial,
    rationale="A gang smaller than the job starts some ranks while the rest wait: the started pods hold GPUs "
    "without making progress (NCCL and torchrun rendezvous wait for the full world size). Checked: Volcano Job "
    "minAvailable against the tasks' replicas (and task minAvailable when the job sets none), Kubeflow "
    "runPolicy.schedulingPolicy.minAvailable (not for elastic PyTorchJobs), Kueue job-min-parallelism, and "
    "PodGroups (Volcano, coscheduling, KAI, native) or Workload gang groups whose pods are in the input. A "
    "minimum above the pods that exist makes the gang unschedulable.",
    bad_example="kind: Job\napiVersion: batch.volcano.sh/v1alpha1\nspec:\n  minAvailable: 1\n  tasks:\n"
    "  - {name: worker, replicas: 4, template: ...}",
    good_example="spec:\n  minAvailable: 4",
)

RULES: tuple[Rule, ...] = (GANG_MISSING, GANG_PARTIAL)
