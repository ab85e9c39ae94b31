"""Gang scheduling rules (KG5xx): multi-pod GPU jobs need all-or-nothing admission, with a gang size that covers them.

Follows Kueue v0.14 (queue-name label, job-min-parallelism), Volcano v1.12 (Job minAvailable, PodGroup minMember,
scheduling.k8s.io/group-name), KAI Scheduler v0.9 (pod-grouper: kubeflow/ray/LWS gangs, one PodGroup per batch
Job pod), scheduler-plugins coscheduling (scheduling.x-k8s.io/pod-group) and the native Workload API (KEP-4671:
v1.35 spec.workloadRef, v1.36 spec.schedulingGroup.podGroupName).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kubegpu.manifests import (
    ContainerRef,
    Document,
    FieldPath,
    PodTemplate,
    as_mapping,
    get_path,
    is_mapping,
    mapping_items,
    pod_templates,
    trainjob,
    uses_accelerators,
)
from kubegpu.manifests.document import format_path
from kubegpu.manifests.memo import memoised
from kubegpu.manifests.placeholders import DEPENDS_ON, is_placeholder, templated_counts
from kubegpu.manifests.workloads import int_field, llm_group_size
from kubegpu.rules.base import Edit, Fix, RawFinding, Rule, RuleContext, Safety, Severity, Target
from kubegpu.rules.options import RuleOption, queue_name

_PRACTICE = "gang scheduling"
KUEUE_QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
KUEUE_MIN_PARALLELISM = "kueue.x-k8s.io/job-min-parallelism"
KAI_QUEUE_LABEL = "kai.scheduler/queue"
KAI_SCHEDULER = "kai-scheduler"
KAI_POD_GROUP_ANNOTATION = "pod-group-name"
VOLCANO_SCHEDULER = "volcano"
VOLCANO_GROUP_ANNOTATIONS = ("scheduling.k8s.io/group-name", "scheduling.volcano.sh/group-name")
VOLCANO_QUEUE_LABEL = "volcano.sh/queue-name"
COSCHEDULING_LABELS = ("scheduling.x-k8s.io/pod-group", "pod-group.scheduling.sigs.k8s.io")
COSCHEDULING_SCHEDULER = "scheduler-plugins-scheduler"
RAY_SCHEDULER_LABEL = "ray.io/scheduler-name"
RAY_GANG_LABEL = "ray.io/gang-scheduling-enabled"

KUBEFLOW_KINDS = frozenset({"PyTorchJob", "TFJob", "MPIJob", "XGBoostJob", "PaddleJob", "MXJob", "JAXJob"})
RAY_KINDS = frozenset({"RayJob", "RayCluster", "RayService"})
# Kinds whose pods form one distributed program (training ranks, a multi-host model replica). RayCluster,
# RayService and StatefulSet count only when they are one: two or more GPU workers of a fixed-size Ray cluster,
# a StatefulSet whose GPU containers start a distributed launcher.
JOB_KINDS = frozenset(
    {
        *KUBEFLOW_KINDS,
        "Job",
        "CronJob",
        "JobSet",
        "TrainJob",
        "RayJob",
        "LeaderWorkerSet",
        "AppWrapper",
        "RayCluster",
        "RayService",
        "StatefulSet",
        "NIMService",
        "HyperPodPyTorchJob",
    }
)
# What a container's command, args or env say when its pods are ranks of one program across nodes.
_DISTRIBUTED_LAUNCH = re.compile(
    r"\bray start\b|--nnodes\b|--num[-_]nodes\b|\btorchrun\b|torch\.distributed|\bMASTER_ADDR\b|\bmpirun\b"
    r"|\bhorovodrun\b|jax\.distributed|--dist[-_]init[-_]addr|--nproc[-_]per[-_]node|--pipeline[-_]parallel[-_]size"
)
# A word each alternative above contains: text with none of them cannot match, and these substring tests cost a
# tenth of the regex's scan (an alternation of \b-anchored words has no literal prefix to skip ahead with).
_LAUNCH_WORDS = (
    "--n",
    "--dist",
    "--pipeline",
    "distributed",
    "torchrun",
    "ray start",
    "MASTER_ADDR",
    "mpirun",
    "horovodrun",
)
# Serving kinds whose model replicas span nodes (a head or leader plus workers; Dynamo's multinode services).
SERVING_KINDS = frozenset({"InferenceService", "LLMInferenceService", "DynamoGraphDeployment"})
# NVIDIA Dynamo (ai-dynamo/dynamo docs/kubernetes/deployment/multinode-deployment.md and
# deploy/cloud/operator/internal/dynamo/grove.go @ 3ecb210f4de10d9e09db8c38e85dd102106bf172): a service with
# multinode.nodeCount > 1 runs each replica as one group of nodeCount pods, a Grove PodCliqueScalingGroup (gang
# scheduled through Grove's PodGang) or, with the annotation nvidia.com/enable-grove: "false", a LeaderWorkerSet
# that the operator gangs with Volcano.
DYNAMO_GROVE_ANNOTATION = "nvidia.com/enable-grove"
# KAI's pod-grouper gives these kinds one PodGroup with minMember = all their pods (or schedulingPolicy.minAvailable).
KAI_GANG_KINDS = frozenset({*KUBEFLOW_KINDS, "RayJob", "RayCluster", "RayService", "LeaderWorkerSet"})
# Operators (training-operator, mpi-operator) create a PodGroup when their gang scheduler is the pods' scheduler.
OPERATOR_GANG_SCHEDULERS = frozenset({VOLCANO_SCHEDULER, COSCHEDULING_SCHEDULER})
PODGROUP_GROUPS = {
    "scheduling.volcano.sh": "Volcano",
    "scheduling.x-k8s.io": "coscheduling",
    "scheduling.sigs.k8s.io": "coscheduling",
    "scheduling.run.ai": "KAI",
}
NATIVE_GROUP = "scheduling.k8s.io"


def _group(doc: Document) -> str:
    group, slash, _version = doc.api_version.partition("/")
    return group if slash else ""


def is_volcano_job(doc: Document) -> bool:
    # (asked several times per object by three rules: a prefix test, not a split)
    return doc.kind == "Job" and doc.api_version.startswith("batch.volcano.sh/")


def is_work_queue_job(doc: Document) -> bool:
    """A batch Job (or CronJob) that is not Indexed: its pods may be independent workers, not ranks of one job."""
    if doc.kind not in ("Job", "CronJob") or is_volcano_job(doc):
        return False
    job_spec: FieldPath = ("spec", "jobTemplate", "spec") if doc.kind == "CronJob" else ("spec",)
    return bool(get_path(doc.data, (*job_spec, "completionMode")) != "Indexed")


def relative_path(doc: Document, template: PodTemplate, path: FieldPath) -> FieldPath:
    """A template path made relative to `doc` (templates embedded in an AppWrapper live in an inner document)."""
    inner = template.document
    if inner is doc:
        return path
    return (*inner.prefix[len(doc.prefix) :], *path)


@dataclass(frozen=True)
class JobShape:
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


# The kinds a job shape can be worked out for: the gang and topology rules report on these only.
SHAPED_KINDS = JOB_KINDS | SERVING_KINDS


def job_shape(doc: Document, ctx: RuleContext) -> JobShape | None:
    """The job's shape when it is a GPU workload of a distributed kind with a known pod count; else None."""
    if doc.kind not in SHAPED_KINDS:
        return None
    accelerators = tuple(ctx.accelerator_resources)
    # Three rules ask for each document: the shape is worked out once and kept with it.
    return memoised(doc, ("job_shape", accelerators), _job_shape, doc, accelerators)


def _job_shape(doc: Document, accelerators: tuple[str, ...]) -> JobShape | None:
    kind = doc.kind
    if kind == "Job" and _group(doc) not in ("", "batch", "batch.volcano.sh"):
        return None
    templates = tuple(pod_templates(doc))
    if not templates:
        return None
    gpu = tuple([t for t in templates if uses_accelerators(t, accelerators)])
    if not gpu:
        return None
    if kind in ("RayCluster", "RayService"):
        cluster = as_mapping(get_path(doc.data, ("spec", "rayClusterConfig") if kind == "RayService" else ("spec",)))
        if cluster.get("enableInTreeAutoscaling") is True:
            return None  # the autoscaler adds workers as tasks need them: the cluster never needs them all at once
        templated = not doc.placeholder_free and bool(templated_counts(cluster, ("spec",)))
        if not templated and (sum(t.replicas or 0 for t in gpu) < 2 or not _ray_spans_nodes(doc, cluster)):
            return None  # independent Serve replicas or a general-purpose cluster: no program spans its workers
    if kind == "StatefulSet":
        launch = next((found for t in gpu for c in t.containers if (found := distributed_launch(c))), None)
        if launch is None:
            return None  # replicas of a single-node server: independent, no gang needed
        total = sum(t.replicas or 0 for t in templates)
        return JobShape(
            doc,
            templates,
            gpu,
            total,
            total,
            f"its {total} pods (their containers run '{launch}': ranks of one program across nodes)",
        )
    if kind == "LeaderWorkerSet":
        size = int_field(get_path(doc.data, ("spec", "leaderWorkerTemplate", "size")), 1)
        if size is None:
            return None
        leader = [t for t in templates if t.role == "leader"]
        gpu_roles = {t.role for t in gpu}
        gpu_pods = (1 if "leader" in gpu_roles and leader else 0) + (
            size - (1 if leader else 0) if "worker" in gpu_roles else 0
        )
        return JobShape(doc, templates, gpu, size, gpu_pods, f"each group of {size} pods")
    if kind == "InferenceService":
        workers = [t for t in templates if t.role.endswith("-worker")]
        if not workers:
            return None
        nodes = max(2, workers[0].replicas or 2)  # pipelineParallelSize = head + workers
        return JobShape(doc, templates, gpu, nodes, nodes, f"each model replica's {nodes} pods (head and workers)")
    if kind == "NIMService":  # multiNode: a LeaderWorkerSet of parallelism.pipeline pods per model replica
        nodes = int_field(get_path(doc.data, ("spec", "multiNode", "parallelism", "pipeline")), 1) or 1
        if nodes < 2:
            return None
        return JobShape(
            doc,
            templates,
            gpu,
            nodes,
            nodes,
            f"each model replica's {nodes} pods (the LeaderWorkerSet the NIM operator creates)",
        )
    if kind == "DynamoGraphDeployment":
        groups: list[tuple[PodTemplate, int]] = []
        slot = ""
        for template in gpu:
            raw = get_path(doc.data, (*template.path, "multinode", "nodeCount"))
            if is_placeholder(raw):  # checked as if it rendered to 2 nodes, and said so
                slot = slot or f"{format_path((*template.path, 'multinode', 'nodeCount'))}: {raw}"
                groups.append((template, 2))
            elif (count := int_field(raw, 1)) is not None and count > 1:
                groups.append((template, count))
        if not groups:
            return None  # single-node services: independent replicas
        nodes = max(n for _t, n in groups)
        multinode = tuple(t for t, _n in groups)
        return JobShape(
            doc,
            multinode,
            multinode,
            nodes,
            nodes,
            f"each replica's {nodes} pods (multinode.nodeCount: one multi-host group of the Dynamo operator)",
            slot,
        )
    if kind == "LLMInferenceService":
        # Each workload with a worker template (the main one, prefill) is a LeaderWorkerSet: a group of its size.
        sizes: dict[str, int] = {}
        for template in gpu:
            if not template.role.endswith("worker"):
                continue
            section = as_mapping(get_path(doc.data, template.path[:-1]))
            sizes[template.role] = max(2, llm_group_size(section) or 2)  # a worker template means 2+ pods a group
        if not sizes:
            return None
        nodes = max(sizes.values())
        grouped = tuple(t for t in templates if t.path[:-1] in {u.path[:-1] for u in gpu if u.role in sizes})
        return JobShape(
            doc,
            grouped,
            tuple(t for t in gpu if t in grouped),
            nodes,
            nodes,
            f"each model replica's {nodes} pods (one LeaderWorkerSet group)",
        )
    counts = [t.replicas for t in templates]
    slots = (
        templated_counts(doc.data.get("spec"), ("spec",)) if is_mapping(doc.data) and not doc.placeholder_free else ()
    )
    if slots:
        # A templated pod count (replicas: $NUM_NODES): check the job as if it rendered to 2 pods, and say so.
        where, value = slots[0]
        total = max(2, sum(c or 1 for c in counts))
        gpu_total = max(2, sum(t.replicas or 1 for t in gpu))
        return JobShape(doc, templates, gpu, total, gpu_total, "its pods", f"{where}: {value}")
    if None in counts:
        return None
    total = sum([c for c in counts if c is not None])
    gpu_total = sum([t.replicas or 0 for t in gpu])
    return JobShape(doc, templates, gpu, total, gpu_total, f"its {total} pods")


_PIPELINE_ACROSS = re.compile(r"pipeline[_-]parallel[_-]size[\"']?\s*[:=]?\s*[\"']?([2-9]|\d{2,})")


def _ray_spans_nodes(doc: Document, cluster: Mapping[str, Any]) -> bool:
    """A Ray cluster runs one program across its GPU workers: a multi-host worker group (numOfHosts > 1), or a
    Serve config or container command that splits a model into pipeline stages (pipeline_parallel_size >= 2)."""
    if any((int_field(g.get("numOfHosts"), 1) or 1) > 1 for g in mapping_items(cluster.get("workerGroupSpecs"))):
        return True
    texts = [str(get_path(doc.data, ("spec", "serveConfigV2")) or "")]
    texts.extend(
        str(c.data.get(key) or "") for t in pod_templates(doc) for c in t.containers for key in ("command", "args")
    )
    return any(_PIPELINE_ACROSS.search(text) for text in texts)


def distributed_launch(container: ContainerRef) -> str | None:
    """The launcher a container's command, args or env name (torchrun, ray start, MASTER_ADDR, ...), if any."""
    texts: list[str] = []
    for key in ("command", "args"):
        value = container.data.get(key)
        if isinstance(value, list):
            texts.extend(str(v) for v in value)
        else:
            texts.append(str(value or ""))
    texts.extend(str(e.get("name") or "") for e in mapping_items(container.data.get("env")))
    text = "\n".join(texts)
    for word in _LAUNCH_WORDS:
        if word in text:
            match = _DISTRIBUTED_LAUNCH.search(text)
            return match.group(0) if match else None
    return None


def object_labels(doc: Document) -> Mapping[str, Any]:
    """The labels Kueue reads for this object (a CronJob's come from its jobTemplate)."""
    if doc.kind == "CronJob":
        return as_mapping(get_path(doc.data, ("spec", "jobTemplate", "metadata", "labels")))
    return as_mapping(doc.metadata.get("labels"))


def object_annotations(doc: Document) -> Mapping[str, Any]:
    if doc.kind == "CronJob":
        return as_mapping(get_path(doc.data, ("spec", "jobTemplate", "metadata", "annotations")))
    return as_mapping(doc.metadata.get("annotations"))


def kueue_managed(doc: Document) -> bool:
    """Kueue admits the workload: the queue-name label (or the deprecated annotation) on the job object."""
    return bool(object_labels(doc).get(KUEUE_QUEUE_LABEL) or object_annotations(doc).get(KUEUE_QUEUE_LABEL))


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


@dataclass(frozen=True)
class GangVerdict:
    """Whether a job is gang-admitted, by what, and, when it is not, why (for the message)."""

    mechanism: str | None
    reason: str = ""


_NO_MECHANISM = GangVerdict(None)  # the common answer, made once


def gang_verdict(shape: JobShape, ctx: RuleContext) -> GangVerdict:
    """Which all-or-nothing mechanism covers every pod of the job, if any."""
    doc = shape.doc
    templates = shape.templates
    if is_volcano_job(doc):
        return GangVerdict("Volcano Job (its PodGroup's minMember is spec.minAvailable)")
    if doc.kind == "DynamoGraphDeployment":
        lws = str(object_annotations(doc).get(DYNAMO_GROVE_ANNOTATION) or "").lower() == "false"
        return GangVerdict(
            "the Dynamo operator (a LeaderWorkerSet ganged by Volcano)"
            if lws
            else "the Dynamo operator (Grove PodGang)"
        )
    if kueue_managed(doc):
        return GangVerdict(f"Kueue ({KUEUE_QUEUE_LABEL}: {object_labels(doc).get(KUEUE_QUEUE_LABEL)})")
    if doc.kind == "TrainJob":
        runtime = str(get_path(doc.data, ("spec", "runtimeRef", "name")) or "")
        policy = _runtime_pod_group_policy(doc)
        if policy:
            return GangVerdict(f"the TrainingRuntime's podGroupPolicy ({policy})")
        if policy is None and runtime:
            return GangVerdict(
                None,
                f"its runtime '{runtime}' is not in the input: it is a gang only if that runtime "
                "sets podGroupPolicy (coscheduling or volcano)",
            )
    if doc.kind in RAY_KINDS:
        labels = object_labels(doc)
        if labels.get(RAY_SCHEDULER_LABEL) or labels.get(VOLCANO_QUEUE_LABEL) or labels.get(RAY_GANG_LABEL) == "true":
            return GangVerdict("KubeRay batch scheduler (it creates the PodGroup)")
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
    schedulers = {_scheduler(t) for t in templates}
    if schedulers == _KAI_ONLY:
        if doc.kind in KAI_GANG_KINDS:
            return GangVerdict("KAI Scheduler (its pod-grouper gangs this kind)")
        return GangVerdict(
            None,
            f"KAI's pod-grouper does not gang a {doc.kind}: a batch Job's pods each get their "
            f"own PodGroup; annotate the pods with {KAI_POD_GROUP_ANNOTATION} pointing at a PodGroup "
            "with minMember, or use a kind KAI gangs (PyTorchJob, MPIJob, RayJob, LeaderWorkerSet)",
        )
    if len(schedulers) == 1 and schedulers <= OPERATOR_GANG_SCHEDULERS and doc.kind in KUBEFLOW_KINDS:
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


def _runtime_pod_group_policy(doc: Document) -> str | None:
    """The podGroupPolicy source of the TrainJob's (Cluster)TrainingRuntime in the input (bound to it when the
    input was expanded); '' without one; None if the runtime is not in the input."""
    runtime = trainjob.bound_runtime(doc)
    if runtime is None:
        return None
    policy = as_mapping(get_path(runtime.data, ("spec", "podGroupPolicy")))
    return ", ".join(str(key) for key in policy) if policy else ""


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
    if shape is None or shape.unit_pods < 2 or doc.kind == "InferenceService":
        return
    verdict = gang_verdict(shape, ctx)
    if verdict.mechanism is not None:
        return
    queue = QUEUE.read(ctx, "gang-missing")
    fix = None
    if queue:
        labels_path: FieldPath = (
            ("spec", "jobTemplate", "metadata", "labels") if doc.kind == "CronJob" else ("metadata", "labels")
        )
        fix = Fix(
            f"add the Kueue label {KUEUE_QUEUE_LABEL}: {queue} to the {doc.kind} (Kueue then suspends it "
            "until the whole workload fits its quota)",
            Safety.UNSAFE,
            (Edit("add", (*labels_path, KUEUE_QUEUE_LABEL), str(queue)),),
        )
    serving = (
        " (a serving group: its leader and workers only work together)"
        if doc.kind in ("LeaderWorkerSet", "LLMInferenceService")
        else ""
    )
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
        f"admits them all-or-nothing{reason}: the scheduler binds pods one by one, so partly placed jobs hold GPUs "
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
    if shape is None or shape.unit_pods < 2:
        return
    if is_volcano_job(doc):
        yield from _check_volcano_job(doc, shape)
    elif doc.kind in KUBEFLOW_KINDS:
        minimum = int_field(get_path(doc.data, ("spec", "runPolicy", "schedulingPolicy", "minAvailable")), None)
        if minimum is not None and minimum < shape.unit_pods and get_path(doc.data, ("spec", "elasticPolicy")) is None:
            yield RawFinding(
                ("spec", "runPolicy", "schedulingPolicy", "minAvailable"),
                f"runPolicy.schedulingPolicy.minAvailable is {minimum} but the job has {shape.unit_pods} "
                f"pods ({shape.roles()}): the gang starts with {minimum} and the others wait holding "
                "nothing, while the started ranks hold their GPUs waiting for the rest (this job has no "
                f"elasticPolicy); set it to {shape.unit_pods} or remove it",
            )
    elif doc.kind == "Job" and kueue_managed(doc):
        minimum = int_field(object_annotations(doc).get(KUEUE_MIN_PARALLELISM), None)
        if minimum is not None and minimum < shape.unit_pods:
            yield RawFinding(
                ("metadata", "annotations", KUEUE_MIN_PARALLELISM),
                f"{KUEUE_MIN_PARALLELISM}: {minimum} lets Kueue admit this Job with only {minimum} of "
                f"its {shape.unit_pods} pods (partial admission); a distributed training job with a fixed "
                "world size then never completes its rendezvous",
                severity=Severity.INFO,
            )


def _check_volcano_job(doc: Document, shape: JobShape) -> Iterator[RawFinding]:
    tasks = mapping_items(get_path(doc.data, ("spec", "tasks")))
    total = sum(int_field(t.get("replicas"), 1) or 0 for t in tasks)
    job_min = int_field(get_path(doc.data, ("spec", "minAvailable")), None)
    if job_min is not None and job_min > 0:
        if job_min > total:
            yield RawFinding(
                ("spec", "minAvailable"),
                f"minAvailable {job_min} is more than the {total} pods of the "
                "tasks: Volcano's admission webhook rejects the Job",
                severity=Severity.ERROR,
            )
        elif job_min < total:
            yield RawFinding(
                ("spec", "minAvailable"),
                f"minAvailable {job_min} is below the {total} pods of the tasks ({shape.roles()}): "
                f"Volcano starts the job once {job_min} pods fit and the other {total - job_min} wait, "
                f"while the started ranks hold their GPUs; set minAvailable: {total} unless the job is "
                "elastic",
            )
        return
    for i, task in enumerate(tasks):
        replicas = int_field(task.get("replicas"), 1) or 0
        task_min = int_field(task.get("minAvailable"), None)
        if task_min is not None and task_min < replicas:
            yield RawFinding(
                ("spec", "tasks", i, "minAvailable"),
                f"task '{task.get('name')}' has minAvailable {task_min} of {replicas} replicas and the "
                "Job sets no minAvailable, so Volcano's gang is the sum of the task minimums: the job "
                f"starts without {replicas - task_min} of these pods",
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
    "PodGroups gang by minMember; KAI gangs Kubeflow, Ray and LeaderWorkerSet workloads (but gives each batch Job "
    "pod its own PodGroup); scheduler-plugins coscheduling uses the scheduling.x-k8s.io/pod-group label; the "
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
