"""SageMaker HyperPod: HyperPodPyTorchJob, replica specs of real PodTemplateSpecs.

Follows HyperPodPyTorchJob (sagemaker.amazonaws.com/v1) as documented in aws/sagemaker-hyperpod-cli
(doc/sdk/training/hyperpod_pytorch_job.rst and its config hyperpod_pytorch_job_unified_config) and AWS's
task-governance sample: spec.replicaSpecs is a list of {name, replicas, spares, template}, template a
PodTemplateSpec; spec.nprocPerNode processes per pod.
"""

from __future__ import annotations

from collections.abc import Iterator

from kubegpu.manifests.document import Document, as_mapping, get_path
from kubegpu.manifests.template import PodTemplate, int_field, template_at
from kubegpu.workloads.gangs import counted_gang
from kubegpu.workloads.kind import WorkloadKind


def _hyperpod_pytorch_job(doc: Document) -> Iterator[PodTemplate]:
    specs = get_path(doc.data, ("spec", "replicaSpecs"))
    if not isinstance(specs, list):
        return
    for i, raw in enumerate(specs):
        replica = as_mapping(raw)
        role, replicas = str(replica.get("name") or f"replicas-{i}"), int_field(replica.get("replicas"), 1)
        yield from template_at(doc, ("spec", "replicaSpecs", i, "template"), role, replicas)


HYPERPOD_PYTORCH_JOB = WorkloadKind(
    kinds=frozenset({"HyperPodPyTorchJob"}), templates=_hyperpod_pytorch_job, gang=counted_gang
)
