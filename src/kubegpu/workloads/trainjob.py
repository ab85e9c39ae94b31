"""The pods of a Kubeflow Trainer TrainJob: its (Cluster)TrainingRuntime's JobSet with the TrainJob's overrides.

Follows kubeflow/trainer @ 8c0f5059bd51ec3ba6d6a6a7b2e1471de7bc13b3:
- pkg/apis/trainer/v1alpha1/trainjob_types.go: spec.runtimeRef {name, apiGroup, kind (default
  ClusterTrainingRuntime)}, spec.trainer {image, command, args, env, numNodes, resourcesPerNode, numProcPerNode}.
- pkg/apis/trainer/v1alpha1/trainingruntime_types.go: spec.mlPolicy {numNodes, torch, mpi {runLauncherAsNode}},
  spec.podGroupPolicy, spec.template (a JobSet template: metadata and a JobSetSpec with replicatedJobs).
- pkg/runtime/core/trainingruntime.go: each replicatedJob is a pod set of `parallelism` pods (default 1); the job
  labelled `trainer.kubeflow.org/trainjob-ancestor-step: trainer` counts mlPolicy.numNodes (default 1) when the
  runtime has an mlPolicy; trainer.resourcesPerNode is merged (strategic merge: requests and limits key by key,
  the TrainJob's value wins) into the container named `node` of that job (and of the job named `node` when MPI
  runs the launcher as a node).
- pkg/runtime/framework/plugins/{torch,plainml,jax}: trainer.numNodes replaces the trainer pod set's count;
  plugins/mpi: the `node` pod set counts numNodes, or numNodes - 1 when runLauncherAsNode.
- pkg/runtime/framework/plugins/jobset/builder.go: the trainer job runs with replicas 1; its `node` container
  takes trainer.image, command and args when set, and trainer.env is upserted by name into its env.
Initializer jobs (dataset-initializer, model-initializer) run before the trainer and are not its pods.

spec.runtimePatches (same commit; pkg/apis/trainer/v1alpha1/trainjob_types.go RuntimePatch, applied by
mergeRuntimePatches in pkg/runtime/core/trainingruntime.go before resourcesPerNode): a list of {manager,
trainingRuntimeSpec.template.spec.replicatedJobs[]} whose entries are applied in order, each as a strategic merge
patch of the runtime's JobSet spec. A job patch names an existing replicatedJob and may set the job's and the pod
template's labels and annotations and, in the pod spec: serviceAccountName, volumes, initContainers and containers
(of existing names: env, volumeMounts, securityContext; no resources), imagePullSecrets, securityContext,
nodeSelector, affinity, tolerations, schedulingGates. Lists merge by their Kubernetes patch merge keys (name;
volumeMounts by mountPath), tolerations and other lists are replaced, maps merge key by key. The trainer's
webhook (pkg/runtime/framework/plugins/jobset/jobset.go) rejects patches of jobs or containers the runtime lacks,
so such entries are ignored here.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from kubegpu.manifests.document import Document, FieldPath, as_mapping, get_path, is_mapping, mapping_items
from kubegpu.manifests.memo import recalled, remember
from kubegpu.manifests.podspec import pod_spec
from kubegpu.manifests.template import ContainerRef, PodTemplate, containers_of, int_field
from kubegpu.workloads import strategic
from kubegpu.workloads.gangs import counted_gang
from kubegpu.workloads.jobset import replicated_jobs
from kubegpu.workloads.kind import DocumentsOf, GangVerdict, SimulatedPods, WorkloadKind

ANCESTOR_LABEL = "trainer.kubeflow.org/trainjob-ancestor-step"
TRAINER_STEP = "trainer"
NODE = "node"
_INITIALIZER_STEPS = frozenset({"dataset-initializer", "model-initializer"})
RUNTIME_KINDS = ("ClusterTrainingRuntime", "TrainingRuntime")


def runtime_ref(doc: Document) -> tuple[str, str] | None:
    """(kind, name) of the runtime a TrainJob refers to; kind defaults to ClusterTrainingRuntime."""
    ref = as_mapping(get_path(doc.data, ("spec", "runtimeRef")))
    if not ref.get("name"):
        return None
    return str(ref.get("kind") or "ClusterTrainingRuntime"), str(ref["name"])


def find_runtime(doc: Document, documents_of: DocumentsOf) -> Document | None:
    """The (Cluster)TrainingRuntime a TrainJob refers to, when it is among `documents_of(kind)`."""
    ref = runtime_ref(doc)
    if ref is None or ref[0] not in RUNTIME_KINDS:
        return None
    kind, name = ref
    for other in documents_of(kind):
        if other.metadata.get("name") != name:
            continue
        if kind == "ClusterTrainingRuntime" or other.ref.namespace == doc.ref.namespace:
            return other
    return None


def bind_runtime(doc: Document, runtime: Document) -> None:
    """From now on the TrainJob's pod templates are those its runtime makes with the TrainJob's overrides."""
    remember(doc, "trainjob_runtime", runtime)
    remember(doc, "pod_templates", templates_with_runtime(doc, runtime))


def bound_runtime(doc: Document) -> Document | None:
    """The runtime bound to this TrainJob (None when its pods are read from spec.trainer alone)."""
    found: Document | None = recalled(doc, "trainjob_runtime")
    return found


def _ancestor(job: Mapping[str, Any]) -> str | None:
    value = as_mapping(get_path(job, ("template", "metadata", "labels"))).get(ANCESTOR_LABEL)
    return value if isinstance(value, str) else None


def _trainer_index(jobs: list[Mapping[str, Any]]) -> int | None:
    """The trainer job: the one labelled as the trainer step, else the one named `node`."""
    return next(
        (i for i, job in enumerate(jobs) if _ancestor(job) == TRAINER_STEP),
        next((i for i, job in enumerate(jobs) if job.get("name") == NODE), None),
    )


def trainer_job_name(runtime: Document) -> str | None:
    """The name of the runtime's trainer replicatedJob (None when it has none)."""
    jobs = mapping_items(get_path(runtime.data, ("spec", "template", "spec", "replicatedJobs")))
    index = _trainer_index(jobs)
    return None if index is None else str(jobs[index].get("name") or f"job-{index}")


def templates_with_runtime(doc: Document, runtime: Document) -> tuple[PodTemplate, ...]:
    trainer = as_mapping(get_path(doc.data, ("spec", "trainer")))
    spec = as_mapping(runtime.data.get("spec"))
    ml_policy = spec.get("mlPolicy")
    mpi = as_mapping(as_mapping(ml_policy).get("mpi"))
    launcher_as_node = mpi.get("runLauncherAsNode") is True
    jobs = patched_jobs(doc, mapping_items(get_path(spec, ("template", "spec", "replicatedJobs"))))
    ancestors = [_ancestor(j) for j in jobs]
    trainer_index = _trainer_index(jobs)
    here: FieldPath = ("spec", "trainer") if "trainer" in as_mapping(doc.data.get("spec")) else ("spec", "runtimeRef")
    out: list[PodTemplate] = []
    for i, job in enumerate(jobs):
        if ancestors[i] in _INITIALIZER_STEPS:
            continue
        job_spec = as_mapping(get_path(job, ("template", "spec")))
        pod_template = as_mapping(job_spec.get("template"))
        pod = pod_template.get("spec")
        if not isinstance(pod, Mapping):
            continue
        name = str(job.get("name") or f"job-{i}")
        is_trainer = i == trainer_index
        count = _pods_per_copy(
            job_spec, ancestors[i], ml_policy, trainer if is_trainer else None, launcher_as_node, name
        )
        replicas = 1 if is_trainer else int_field(job.get("replicas"), 1)
        takes_resources = is_trainer or (launcher_as_node and name == NODE)
        refs = _containers(pod, trainer, is_trainer, takes_resources, here)
        merged = dict(pod)
        merged["initContainers"] = [r.data for r in refs if r.kind != "container"]
        merged["containers"] = [r.data for r in refs if r.kind == "container"]
        role = TRAINER_STEP if is_trainer else name
        out.append(
            PodTemplate(
                doc,
                here if is_trainer else ("spec", "runtimeRef"),
                merged,
                None,
                as_mapping(pod_template.get("metadata")),
                role,
                None if count is None or replicas is None else count * replicas,
                refs,
                has_volumes=role != TRAINER_STEP,
            )
        )
    return tuple(out)


def _pods_per_copy(
    job_spec: Mapping[str, Any],
    ancestor: str | None,
    ml_policy: Any,
    trainer: Mapping[str, Any] | None,
    launcher_as_node: bool,
    name: str,
) -> int | None:
    """A replicated job's pods: its parallelism; the trainer step's, mlPolicy.numNodes; the trainer job's, the
    TrainJob's numNodes (less the launcher when MPI runs it as a node)."""
    count = int_field(job_spec.get("parallelism"), 1)
    if ancestor == TRAINER_STEP and isinstance(ml_policy, Mapping):
        count = int_field(ml_policy.get("numNodes"), 1)
    if trainer is not None and trainer.get("numNodes") is not None:
        nodes = int_field(trainer.get("numNodes"), None)
        count = None if nodes is None else (max(nodes - 1, 1) if launcher_as_node and name == NODE else nodes)
    return count


def _containers(
    pod: Mapping[str, Any], trainer: Mapping[str, Any], is_trainer: bool, takes_resources: bool, here: FieldPath
) -> tuple[ContainerRef, ...]:
    """The job's containers, its `node` container with the TrainJob's trainer settings (found at `here`)."""
    refs: list[ContainerRef] = []
    for ref in containers_of(pod, ("spec", "runtimeRef")):
        data = ref.data
        path = ref.path[:2]
        if ref.kind == "container" and ref.name == NODE and (is_trainer or takes_resources):
            data = _override(data, trainer, is_trainer, takes_resources)
            path = here
        refs.append(ContainerRef(path, data, ref.kind))
    return tuple(refs)


# Lists whose patch may only name items the runtime has (the trainer's webhook rejects others).
_EXISTING_ONLY = frozenset({"replicatedJobs", "containers", "initContainers"})


def runtime_patches(doc: Document) -> list[Mapping[str, Any]]:
    """The JobSet-spec patches of a TrainJob's spec.runtimePatches, in the order they are applied."""
    return [
        patch
        for entry in mapping_items(get_path(doc.data, ("spec", "runtimePatches")))
        if isinstance(patch := get_path(entry, ("trainingRuntimeSpec", "template", "spec")), Mapping)
    ]


# The fields a patch may hold (ReplicatedJobPatch down to ContainerPatch): the API server prunes any other field
# of the TrainJob's structural schema, so a `resources` written in a container patch never reaches the pod.
_META = frozenset({"labels", "annotations"})
_POD = frozenset(
    {
        "serviceAccountName",
        "volumes",
        "initContainers",
        "containers",
        "imagePullSecrets",
        "securityContext",
        "nodeSelector",
        "affinity",
        "tolerations",
        "schedulingGates",
    }
)
_CONTAINER = frozenset({"name", "env", "volumeMounts", "securityContext"})


def patched_jobs(doc: Document, jobs: list[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The runtime's replicatedJobs with the TrainJob's runtimePatches applied (the runtime's order kept)."""
    for patch in runtime_patches(doc):
        jobs = _merge_list("replicatedJobs", jobs, [_job_patch(j) for j in mapping_items(patch.get("replicatedJobs"))])
    return jobs


def _only(value: object, keys: frozenset[str]) -> dict[str, Any]:
    return {k: v for k, v in as_mapping(value).items() if k in keys}


def _job_patch(job: Mapping[str, Any]) -> dict[str, Any]:
    """A ReplicatedJobPatch as the API server keeps it: labels, annotations and the patchable pod spec fields."""
    template = as_mapping(job.get("template"))
    pod = as_mapping(get_path(template, ("spec", "template")))
    pod_spec = _only(pod.get("spec"), _POD)
    for field in ("containers", "initContainers"):
        if field in pod_spec:
            pod_spec[field] = [_only(c, _CONTAINER) for c in mapping_items(pod_spec[field])]
    return {
        "name": job.get("name"),
        "template": {
            "metadata": _only(template.get("metadata"), _META),
            "spec": {"template": {"metadata": _only(pod.get("metadata"), _META), "spec": pod_spec}},
        },
    }


def _merge(base: Mapping[str, Any], patch: Mapping[str, Any]) -> dict[str, Any]:
    """A strategic merge of `patch` into `base` over the patchable fields (a null in the patch is no value)."""
    return strategic.merge(base, patch, _EXISTING_ONLY)


def _merge_list(field: str, base: list[Mapping[str, Any]], patch: object) -> list[Mapping[str, Any]]:
    return strategic.merge_list(field, base, patch, _EXISTING_ONLY)


def _override(
    container: Mapping[str, Any], trainer: Mapping[str, Any], is_trainer: bool, takes_resources: bool
) -> dict[str, Any]:
    out = dict(container)
    if is_trainer:
        for key in ("image", "command", "args"):
            if trainer.get(key) is not None:
                out[key] = trainer[key]
    env = trainer.get("env")
    if isinstance(env, list) and env:
        given = {str(e.get("name")): e for e in mapping_items(env)}
        current = mapping_items(container.get("env"))
        present = {str(e.get("name")) for e in current}
        merged_env = [given.get(str(e.get("name")), e) for e in current]  # replaced in place, as UpsertEnvVars does
        out["env"] = [*merged_env, *(e for name, e in given.items() if name not in present)]
    override = trainer.get("resourcesPerNode")
    if takes_resources and isinstance(override, Mapping):
        base = as_mapping(container.get("resources"))
        resources = dict(base)
        for section in ("requests", "limits"):
            if isinstance(override.get(section), Mapping):
                resources[section] = {**as_mapping(base.get(section)), **override[section]}
        if isinstance(override.get("claims"), list):
            resources["claims"] = override["claims"]
        out["resources"] = resources
    return out


def _pod_note(doc: Document) -> str:
    """Words for a TrainJob's findings: where its pod was read from."""
    runtime = bound_runtime(doc)
    if runtime is not None:
        return f"the pod is the trainer template of {runtime.kind} '{runtime.ref.name}' with this TrainJob's settings"
    ref = runtime_ref(doc)
    if ref is None:
        return ""
    return f"its runtime {ref[0]} '{ref[1]}' is not in the input: only spec.trainer was read"


def _bind(doc: Document, documents_of: DocumentsOf) -> None:
    runtime = find_runtime(doc, documents_of)
    if runtime is not None:
        bind_runtime(doc, runtime)


def _runtimes(doc: Document) -> tuple[Document, ...]:
    runtime = bound_runtime(doc)
    return () if runtime is None else (runtime,)


def _bound(doc: Document) -> bool:
    return bound_runtime(doc) is not None


def _trainer(doc: Document) -> Iterator[PodTemplate]:
    """Unbound, a TrainJob has no pod template: `spec.trainer` (image, resourcesPerNode, numNodes) plays its part
    (bind_runtime replaces these templates with the runtime's)."""
    trainer = get_path(doc.data, ("spec", "trainer"))
    if not is_mapping(trainer):
        return
    path: FieldPath = ("spec", "trainer")
    container = dict(trainer)
    if "resourcesPerNode" in trainer:
        container["resources"] = trainer["resourcesPerNode"]
    ref = ContainerRef(path, container, "container")
    count = int_field(trainer.get("numNodes"), None)
    yield PodTemplate(doc, path, trainer, None, {}, TRAINER_STEP, count, (ref,), has_volumes=False)


def _own_gang(doc: Document) -> GangVerdict | None:
    """The runtime's podGroupPolicy gangs the TrainJob's pods; a runtime not in the input may or may not."""
    runtime = bound_runtime(doc)
    policy = as_mapping(get_path(runtime.data, ("spec", "podGroupPolicy"))) if runtime is not None else None
    if policy:
        return GangVerdict(f"the TrainingRuntime's podGroupPolicy ({', '.join(str(key) for key in policy)})")
    name = str(get_path(doc.data, ("spec", "runtimeRef", "name")) or "")
    if runtime is None and name:
        return GangVerdict(
            None,
            f"its runtime '{name}' is not in the input: it is a gang only if that runtime "
            "sets podGroupPolicy (coscheduling or volcano)",
        )
    return None


def _simulated(doc: Document, source: str) -> SimulatedPods | None:
    """A TrainJob bound to its runtime: one gang of the runtime's pods with the TrainJob's settings applied, the pods
    `lint` and `admit` read; unbound, none (its pods are not known)."""
    if bound_runtime(doc) is None:
        return None
    name = str(doc.metadata.get("name") or "trainjob")
    return SimulatedPods(name, _simulated_groups(doc, name), may_be_empty=True)


def _simulated_groups(doc: Document, name: str) -> Iterator[tuple[Mapping[str, Any], tuple[str, ...]]]:
    templates: tuple[PodTemplate, ...] = recalled(doc, "pod_templates") or ()  # the runtime's, once bound
    for template in templates:
        count = 1 if template.replicas is None else template.replicas
        spec = {"metadata": template.metadata, "spec": pod_spec(template)}
        yield spec, tuple(f"{name}-{template.role}-{i}" for i in range(count))


def _runtime_templates(doc: Document) -> Iterator[PodTemplate]:
    return replicated_jobs(doc, ("spec", "template", "spec"))


TRAIN_JOB = WorkloadKind(
    kinds=frozenset({"TrainJob"}),
    templates=_trainer,
    gang=counted_gang,
    own_gang=_own_gang,
    synthesised=_bound,
    rebuilt=_bound,
    bind=_bind,
    runtimes=_runtimes,
    pod_note=_pod_note,
    sim_pods=_simulated,
    looked_up=frozenset(RUNTIME_KINDS),
)
TRAINING_RUNTIME = WorkloadKind(kinds=frozenset(RUNTIME_KINDS), templates=_runtime_templates)
