"""Find every pod template in a Kubernetes object: its path, role, replica count and containers.

Covers core workloads, batch, JobSet, LeaderWorkerSet, Kubeflow (v1 and Trainer v2), Ray, Volcano,
KServe, Knative, Argo and AppWrapper (whose embedded objects are searched recursively).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from kubegpu.manifests.document import Document, FieldPath, as_mapping, get_path, is_mapping
from kubegpu.manifests.memo import forget, memoised

_REPLICATED = {"Deployment", "StatefulSet", "ReplicaSet", "ReplicationController"}
_KUBEFLOW_SPECS = {
    "PyTorchJob": "pytorchReplicaSpecs",
    "JAXJob": "jaxReplicaSpecs",
    "TFJob": "tfReplicaSpecs",
    "MPIJob": "mpiReplicaSpecs",
    "XGBoostJob": "xgbReplicaSpecs",
    "PaddleJob": "paddleReplicaSpecs",
    "MXJob": "mxReplicaSpecs",
}
# KServe component fields whose value is a container (a model-server spec) rather than a pod spec.
_KSERVE_COMPONENTS = ("predictor", "transformer", "explainer")
# KServe framework fields of a component (each a container spec whose defaults KServe fills in; see kserve.py).
KSERVE_FRAMEWORK_KEYS = (
    "pytorch",
    "tensorflow",
    "triton",
    "sklearn",
    "xgboost",
    "onnx",
    "huggingface",
    "lightgbm",
    "pmml",
    "paddle",
    "art",
)
_KSERVE_RUNTIME_KEYS = ("model", *KSERVE_FRAMEWORK_KEYS, "alibi", "worker")


@dataclass(frozen=True)
class ContainerRef:
    """A container of a pod template: its path in the document, its data and its kind."""

    path: FieldPath
    data: Mapping[str, Any]
    kind: str  # "container", "init" or "sidecar" (an init container with restartPolicy Always)

    @property
    def name(self) -> str:
        return str(self.data.get("name") or "")


@dataclass(frozen=True)
class PodTemplate:
    """One pod template found in a document.

    `path` points at the pod spec (or, for KServe/Argo/TrainJob, at the object that plays its part);
    `replicas` is the number of pods this template makes (None when it depends on the cluster);
    `volumes_path` is where the pod's volumes list lives (Argo declares it workflow-wide; a TrainJob
    has none, so it is None there).
    """

    document: Document
    path: FieldPath
    spec: Mapping[str, Any]
    metadata_path: FieldPath | None
    metadata: Mapping[str, Any]
    role: str
    replicas: int | None
    containers: tuple[ContainerRef, ...]
    volumes_path: FieldPath | None = None

    @property
    def volumes_field(self) -> FieldPath | None:
        """The path of the volumes list: `volumes_path`, or `<path>.volumes` for real pod specs."""
        if self.volumes_path is not None:
            return self.volumes_path
        return None if self.role == "trainer" and self.kind == "TrainJob" else (*self.path, "volumes")

    @property
    def kind(self) -> str:
        return self.document.kind

    @property
    def labels(self) -> Mapping[str, Any]:
        return as_mapping(self.metadata.get("labels"))

    @property
    def annotations(self) -> Mapping[str, Any]:
        return as_mapping(self.metadata.get("annotations"))

    @property
    def volumes(self) -> list[Mapping[str, Any]]:
        volumes = self.spec.get("volumes")
        return [v for v in volumes if type(v) is dict or isinstance(v, Mapping)] if isinstance(volumes, list) else []

    @property
    def description(self) -> str:
        ref = self.document.ref
        role = f" ({self.role})" if self.role else ""
        return f"{ref.kind}/{ref.name}{role}"


def int_field(value: Any, default: int | None) -> int | None:
    """An integer field as the API reads it (ints, digit strings); anything else gives `default`."""
    if isinstance(value, bool):
        return default
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return default


def containers_of(spec: Mapping[str, Any], path: FieldPath) -> tuple[ContainerRef, ...]:
    """Init containers (sidecars marked), then containers, with their paths."""
    refs: list[ContainerRef] = []
    for key in ("initContainers", "containers"):
        items = spec.get(key)
        if not isinstance(items, list):
            continue
        for i, item in enumerate(items):
            if not is_mapping(item):
                continue
            if key == "containers":
                kind = "container"
            else:
                kind = "sidecar" if item.get("restartPolicy") == "Always" else "init"
            refs.append(ContainerRef((*path, key, i), item, kind))
    return tuple(refs)


def template_at(doc: Document, template_path: FieldPath, role: str, replicas: int | None) -> tuple[PodTemplate, ...]:
    """The PodTemplateSpec at `template_path` (metadata + spec), if there is one: a tuple of none or one, not a
    generator, as every workload has one."""
    template = get_path(doc.data, template_path)
    if not is_mapping(template):
        return ()
    spec = template.get("spec")
    if not is_mapping(spec):
        return ()
    spec_path = (*template_path, "spec")
    return (
        PodTemplate(
            doc,
            spec_path,
            spec,
            (*template_path, "metadata"),
            as_mapping(template.get("metadata")),
            role,
            replicas,
            containers_of(spec, spec_path),
        ),
    )


def _job_template(doc: Document, job_path: FieldPath, role: str, copies: int | None) -> tuple[PodTemplate, ...]:
    """A JobSpec at `job_path`: pods = parallelism (default 1) per copy."""
    job = as_mapping(get_path(doc.data, job_path))
    parallelism = int_field(job.get("parallelism"), 1)
    completions = int_field(job.get("completions"), None)
    if completions is not None and parallelism is not None:
        parallelism = min(parallelism, completions)
    replicas = None if copies is None or parallelism is None else copies * parallelism
    return template_at(doc, (*job_path, "template"), role, replicas)


def pod_templates(doc: Document) -> Iterator[PodTemplate]:
    """Every pod template of one object, whatever its kind (found once per document, then reused)."""
    return iter(memoised(doc, "pod_templates", _templates_of, doc))


def release(doc: Document) -> None:
    """Forget the facts derived from `doc`, its pod templates and their containers (once it is linted), so
    that reference counting frees them without the cyclic collector."""
    memo = doc.__dict__.get("_kubegpu_memo") or {}
    inner = memo.get("embedded")  # objects read from an Argo resource template's manifest
    for embedded in inner.documents if inner is not None else ():
        release(embedded)
    for template in memo.get("pod_templates", ()):
        for container in template.containers:
            forget(container)
        forget(template)
    forget(doc)


def _templates_of(doc: Document) -> tuple[PodTemplate, ...]:
    return tuple(_find_templates(doc))


def _find_templates(doc: Document) -> Iterator[PodTemplate]:
    data = doc.data
    kind = doc.kind
    spec = as_mapping(data.get("spec"))
    group = doc.api_version.split("/")[0] if "/" in doc.api_version else ""
    if kind == "Pod":
        yield PodTemplate(doc, ("spec",), spec, ("metadata",), doc.metadata, "", 1, containers_of(spec, ("spec",)))
    elif kind == "PodTemplate":
        yield from template_at(doc, ("template",), "", None)
    elif kind in _REPLICATED:
        yield from template_at(doc, ("spec", "template"), "", int_field(spec.get("replicas"), 1))
    elif kind == "DaemonSet":
        yield from template_at(doc, ("spec", "template"), "", None)
    elif kind == "Job" and group in ("", "batch"):
        yield from _job_template(doc, ("spec",), "", 1)
    elif kind == "Job" and group == "batch.volcano.sh":
        for i, task in enumerate(_list(spec.get("tasks"))):
            yield from template_at(
                doc,
                ("spec", "tasks", i, "template"),
                str(task.get("name") or f"task-{i}"),
                int_field(task.get("replicas"), 1),
            )
    elif kind == "CronJob":
        yield from _job_template(doc, ("spec", "jobTemplate", "spec"), "", 1)
    elif kind == "JobSet":
        yield from _jobset(doc, ("spec",))
    elif kind in ("TrainingRuntime", "ClusterTrainingRuntime"):
        yield from _jobset(doc, ("spec", "template", "spec"))
    elif kind == "TrainJob":
        yield from _trainjob(doc)
    elif kind == "LeaderWorkerSet":
        yield from _leaderworkerset(doc)
    elif kind in _KUBEFLOW_SPECS:
        replica_specs = as_mapping(spec.get(_KUBEFLOW_SPECS[kind]))
        for role, replica_spec in replica_specs.items():
            replicas = int_field(as_mapping(replica_spec).get("replicas"), 1)
            yield from template_at(doc, ("spec", _KUBEFLOW_SPECS[kind], str(role), "template"), str(role), replicas)
    elif kind in ("RayCluster", "RayJob", "RayService"):
        yield from _ray(doc)
    elif kind == "InferenceService":
        yield from _kserve(doc)
    elif kind == "LLMInferenceService":
        yield from _llm_inference_service(doc)
    elif kind == "Service" and group == "serving.knative.dev":
        yield from template_at(doc, ("spec", "template"), "", None)
    elif kind in ("Workflow", "WorkflowTemplate", "ClusterWorkflowTemplate", "CronWorkflow"):
        yield from _argo(doc)
    elif kind == "AppWrapper":
        yield from _appwrapper(doc)
    else:
        # Operators' custom resources and any other kind: kubegpu.manifests.crds (which imports this module).
        from kubegpu.manifests.crds import custom_templates

        yield from custom_templates(doc)


def _list(value: Any) -> list[Mapping[str, Any]]:
    return [v if is_mapping(v) else {} for v in value] if isinstance(value, list) else []


def _jobset(doc: Document, spec_path: FieldPath) -> Iterator[PodTemplate]:
    spec = as_mapping(get_path(doc.data, spec_path))
    for i, rjob in enumerate(_list(spec.get("replicatedJobs"))):
        name = str(rjob.get("name") or f"job-{i}")
        yield from _job_template(
            doc, (*spec_path, "replicatedJobs", i, "template", "spec"), name, int_field(rjob.get("replicas"), 1)
        )


def _trainjob(doc: Document) -> Iterator[PodTemplate]:
    """TrainJob has no pod template: `spec.trainer` (image, resourcesPerNode, numNodes) plays its part."""
    trainer = get_path(doc.data, ("spec", "trainer"))
    if not is_mapping(trainer):
        return
    path: FieldPath = ("spec", "trainer")
    container = dict(trainer)
    if "resourcesPerNode" in trainer:
        container["resources"] = trainer["resourcesPerNode"]
    ref = ContainerRef(path, container, "container")
    yield PodTemplate(doc, path, trainer, None, {}, "trainer", int_field(trainer.get("numNodes"), None), (ref,))


def _leaderworkerset(doc: Document) -> Iterator[PodTemplate]:
    spec = as_mapping(doc.data.get("spec"))
    lwt = as_mapping(spec.get("leaderWorkerTemplate"))
    groups = int_field(spec.get("replicas"), 1)
    size = int_field(lwt.get("size"), 1) or 1
    base: FieldPath = ("spec", "leaderWorkerTemplate")
    if is_mapping(lwt.get("leaderTemplate")):
        yield from template_at(doc, (*base, "leaderTemplate"), "leader", groups)
        workers = None if groups is None else groups * (size - 1)
    else:
        workers = None if groups is None else groups * size
    yield from template_at(doc, (*base, "workerTemplate"), "worker", workers)


def _ray(doc: Document) -> Iterator[PodTemplate]:
    spec = as_mapping(doc.data.get("spec"))
    base: FieldPath = ("spec",)
    if doc.kind == "RayJob":
        base = ("spec", "rayClusterSpec")
    elif doc.kind == "RayService":
        base = ("spec", "rayClusterConfig")
    cluster = as_mapping(get_path(doc.data, base)) if base != ("spec",) else spec
    yield from template_at(doc, (*base, "headGroupSpec", "template"), "head", 1)
    for i, group in enumerate(_list(cluster.get("workerGroupSpecs"))):
        replicas = int_field(group.get("replicas"), int_field(group.get("minReplicas"), 1))
        hosts = int_field(group.get("numOfHosts"), 1) or 1
        name = str(group.get("groupName") or f"workers-{i}")
        yield from template_at(
            doc, (*base, "workerGroupSpecs", i, "template"), name, None if replicas is None else replicas * hosts
        )


def _kserve(doc: Document) -> Iterator[PodTemplate]:
    spec = as_mapping(doc.data.get("spec"))
    for component in _KSERVE_COMPONENTS:
        comp = spec.get(component)
        if not is_mapping(comp):
            continue
        path: FieldPath = ("spec", component)
        replicas = int_field(comp.get("minReplicas"), 1)
        containers = list(containers_of(comp, path))
        for key in _KSERVE_RUNTIME_KEYS:
            runtime = comp.get(key)
            if is_mapping(runtime) and key != "worker":
                containers.insert(0, ContainerRef((*path, key), runtime, "container"))
        yield PodTemplate(doc, path, comp, ("metadata",), doc.metadata, component, replicas, tuple(containers))
        worker = comp.get("workerSpec")
        if is_mapping(worker):
            wpath: FieldPath = (*path, "workerSpec")
            yield PodTemplate(
                doc,
                wpath,
                worker,
                ("metadata",),
                doc.metadata,
                f"{component}-worker",
                int_field(worker.get("pipelineParallelSize"), None),
                containers_of(worker, wpath),
            )


def llm_group_size(section: Mapping[str, Any]) -> int | None:
    """Pods per LeaderWorkerSet group of an LLMInferenceService workload (its main spec or `prefill`).

    KServe pkg/apis/serving/v1alpha2/llm_inference_service_types_func.go @ aaac4e294dae2c7b1aa1886447793f3aa1c30912
    (ParallelismSpec.GetSize): data parallel (data or dataLocal set) gives max(data / dataLocal, 1), else
    pipeline; None when neither is set (the LeaderWorkerSet's default size, 1).
    """
    parallelism = as_mapping(section.get("parallelism"))
    data, local = parallelism.get("data"), parallelism.get("dataLocal")
    if (int_field(data, 0) or 0) > 0 or (int_field(local, 0) or 0) > 0:
        return max((int_field(data, 1) or 1) // max(int_field(local, 1) or 1, 1), 1)
    pipeline = int_field(parallelism.get("pipeline"), 0) or 0
    return pipeline if pipeline > 0 else None


def _llm_inference_service(doc: Document) -> Iterator[PodTemplate]:
    """KServe LLMInferenceService: `spec.template` (the leader, or the only pod) and `spec.worker` are pod specs; so
    are prefill's. With a worker, each replica is a LeaderWorkerSet group of llm_group_size pods: the leader and
    size - 1 workers (KServe pkg/controller/v1alpha2/llmisvc/workload_multi_node.go)."""
    spec = as_mapping(doc.data.get("spec"))
    replicas = int_field(spec.get("replicas"), 1)
    for base, role in (((), "main"), (("prefill",), "prefill")):
        section = as_mapping(get_path(spec, base)) if base else spec
        if base and not section:
            continue
        section_replicas = int_field(section.get("replicas"), replicas if not base else 1)
        size = llm_group_size(section) or 1
        for key in ("template", "worker"):
            pod = section.get(key)
            if is_mapping(pod):
                path: FieldPath = ("spec", *base, key)
                count = section_replicas
                if key == "worker" and count is not None:
                    count = count * max(size - 1, 1)
                yield PodTemplate(
                    doc,
                    path,
                    pod,
                    ("metadata",),
                    doc.metadata,
                    f"{role}-{key}" if base else key,
                    count,
                    containers_of(pod, path),
                )


def _argo(doc: Document) -> Iterator[PodTemplate]:
    base: FieldPath = ("spec", "workflowSpec") if doc.kind == "CronWorkflow" else ("spec",)
    wf = as_mapping(get_path(doc.data, base))
    for i, template in enumerate(_list(wf.get("templates"))):
        path: FieldPath = (*base, "templates", i)
        refs: list[ContainerRef] = []
        for key in ("container", "script"):
            if is_mapping(template.get(key)):
                refs.append(ContainerRef((*path, key), template[key], "container"))
        cset = as_mapping(template.get("containerSet"))
        for j, item in enumerate(_list(cset.get("containers"))):
            refs.append(ContainerRef((*path, "containerSet", "containers", j), item, "container"))
        for j, item in enumerate(_list(template.get("initContainers"))):
            refs.append(ContainerRef((*path, "initContainers", j), item, "init"))
        if not refs:
            continue
        # Volumes are declared workflow-wide; the template's own metadata labels its pods.
        pseudo = dict(template)
        pseudo.setdefault("volumes", wf.get("volumes") or [])
        yield PodTemplate(
            doc,
            path,
            pseudo,
            (*path, "metadata"),
            as_mapping(template.get("metadata")),
            str(template.get("name") or f"template-{i}"),
            1,
            tuple(refs),
            (*base, "volumes"),
        )


def _appwrapper(doc: Document) -> Iterator[PodTemplate]:
    """AppWrapper embeds whole objects under spec.components[i].template: search them too."""
    for i, component in enumerate(_list(as_mapping(doc.data.get("spec")).get("components"))):
        embedded = component.get("template")
        if not is_mapping(embedded):
            continue
        inner = Document(
            source=doc.source,
            index=doc.index,
            data=embedded,
            node=doc.node,
            prefix=(*doc.prefix, "spec", "components", i, "template"),
            start_line=doc.start_line,
            line_offset=doc.line_offset,
            is_json=doc.is_json,
        )
        yield from _find_templates(inner)
