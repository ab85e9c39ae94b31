"""Kubeflow training operator jobs (v1): PyTorchJob, TFJob, MPIJob, XGBoostJob, PaddleJob, JAXJob and MXJob.

Follows the kubeflow.org/v1 API (kubeflow/training-operator pkg/apis/kubeflow.org/v1) and mpi-operator v2beta1:
each kind keeps a map of replica types to {replicas (default 1), template} under its own spec key;
runPolicy.schedulingPolicy.minAvailable is the gang the operator asks its gang scheduler (Volcano,
scheduler-plugins coscheduling) for, and an elastic PyTorchJob (spec.elasticPolicy) runs with fewer. KAI
Scheduler's pod-grouper gangs the kinds its plugins hub maps (NVIDIA/KAI-Scheduler
pkg/podgrouper/podgrouper/hub/hub.go @ 018b53b71728f49ec13abd0137ca9d794c0bf60b: TFJob, PyTorchJob, XGBoostJob,
JAXJob and MPIJob; not PaddleJob or MXJob, whose pods each get a PodGroup of their own).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from kubegpu.manifests.document import Document, as_mapping, get_path
from kubegpu.manifests.template import PodTemplate, int_field, template_at
from kubegpu.workloads.core import simulated_name, strict_count
from kubegpu.workloads.gangs import counted_gang
from kubegpu.workloads.kind import GangMinimum, SimulatedPods, WorkloadKind

# Each kind's field of replica specs.
REPLICA_SPECS = {
    "PyTorchJob": "pytorchReplicaSpecs",
    "JAXJob": "jaxReplicaSpecs",
    "TFJob": "tfReplicaSpecs",
    "MPIJob": "mpiReplicaSpecs",
    "XGBoostJob": "xgbReplicaSpecs",
    "PaddleJob": "paddleReplicaSpecs",
    "MXJob": "mxReplicaSpecs",
}
_KAI_GROUPED = frozenset({"PyTorchJob", "TFJob", "MPIJob", "XGBoostJob", "JAXJob"})
_MIN_AVAILABLE = ("spec", "runPolicy", "schedulingPolicy", "minAvailable")


def _templates(doc: Document) -> Iterator[PodTemplate]:
    key = REPLICA_SPECS[doc.kind]
    for role, replica_spec in as_mapping(as_mapping(doc.data.get("spec")).get(key)).items():
        replicas = int_field(as_mapping(replica_spec).get("replicas"), 1)
        yield from template_at(doc, ("spec", key, str(role), "template"), str(role), replicas)


def _minimums(doc: Document) -> Iterator[GangMinimum]:
    minimum = int_field(get_path(doc.data, _MIN_AVAILABLE), None)
    if minimum is not None:
        yield GangMinimum(
            _MIN_AVAILABLE, minimum, None, "replicas", elastic=get_path(doc.data, ("spec", "elasticPolicy")) is not None
        )


def _pytorch_pods(doc: Document, source: str) -> SimulatedPods:
    name = simulated_name(doc.data)
    return SimulatedPods(name, _pytorch_groups(doc.data, name, source))


def _pytorch_groups(
    data: Mapping[str, Any], name: str, source: str
) -> Iterator[tuple[Mapping[str, Any], tuple[str, ...]]]:
    spec = data.get("spec") or {}
    for role, rspec in (spec.get("pytorchReplicaSpecs") or {}).items():
        count = strict_count(rspec.get("replicas"), 1, f"{role}.replicas", source)
        template = rspec.get("template") or {}
        yield template, tuple(f"{name}-{role.lower()}-{i}" for i in range(count))


def _adapter(kind: str, **answers: Any) -> WorkloadKind:
    return WorkloadKind(
        kinds=frozenset({kind}),
        templates=_templates,
        gang=counted_gang,
        kai_gangs=kind in _KAI_GROUPED,
        operator_gang=True,
        minimums=_minimums,
        **answers,
    )


PYTORCH_JOB = _adapter("PyTorchJob", sim_pods=_pytorch_pods)
TF_JOB = _adapter("TFJob")
MPI_JOB = _adapter("MPIJob")
XGBOOST_JOB = _adapter("XGBoostJob")
PADDLE_JOB = _adapter("PaddleJob")
JAX_JOB = _adapter("JAXJob")
MX_JOB = _adapter("MXJob")
