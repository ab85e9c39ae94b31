"""JobSet (jobset.x-k8s.io): replicated Jobs, each `replicas` copies of a JobSpec of `parallelism` pods.

Follows the jobset.x-k8s.io/v1alpha2 API (kubernetes-sigs/jobset api/jobset/v1alpha2): spec.replicatedJobs[] {name,
replicas, template (a JobTemplateSpec)}; the annotation alpha.jobset.sigs.k8s.io/exclusive-topology puts each Job's
pods in one topology domain.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from kubegpu.manifests.document import Document, FieldPath, as_mapping, get_path
from kubegpu.manifests.template import PodTemplate, int_field, job_template, mapping_list
from kubegpu.workloads.core import simulated_name, strict_count
from kubegpu.workloads.gangs import counted_gang
from kubegpu.workloads.kind import SimulatedPods, WorkloadKind

EXCLUSIVE_TOPOLOGY = "alpha.jobset.sigs.k8s.io/exclusive-topology"


def replicated_jobs(doc: Document, spec_path: FieldPath) -> Iterator[PodTemplate]:
    """The pod templates of the JobSetSpec at `spec_path` (a JobSet's own, or a TrainingRuntime's template)."""
    spec = as_mapping(get_path(doc.data, spec_path))
    for i, rjob in enumerate(mapping_list(spec.get("replicatedJobs"))):
        name = str(rjob.get("name") or f"job-{i}")
        yield from job_template(
            doc, (*spec_path, "replicatedJobs", i, "template", "spec"), name, int_field(rjob.get("replicas"), 1)
        )


def _templates(doc: Document) -> Iterator[PodTemplate]:
    return replicated_jobs(doc, ("spec",))


def _pods(doc: Document, source: str) -> SimulatedPods:
    name = simulated_name(doc.data)
    return SimulatedPods(name, _groups(doc.data, name, source))


def _groups(data: Mapping[str, Any], name: str, source: str) -> Iterator[tuple[Mapping[str, Any], tuple[str, ...]]]:
    for rjob in (data.get("spec") or {}).get("replicatedJobs") or []:
        reps = strict_count(rjob.get("replicas"), 1, "replicatedJobs[].replicas", source)
        jspec = ((rjob.get("template") or {}).get("spec")) or {}
        par = strict_count(jspec.get("parallelism"), 1, "parallelism", source)
        template = jspec.get("template") or {}
        yield template, tuple(f"{name}-{rjob.get('name', 'r')}-{r}-{i}" for r in range(reps) for i in range(par))


JOBSET = WorkloadKind(
    kinds=frozenset({"JobSet"}),
    templates=_templates,
    gang=counted_gang,
    exclusive_topology=(EXCLUSIVE_TOPOLOGY,),
    sim_pods=_pods,
)
