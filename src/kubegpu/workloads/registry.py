"""Every workload kind kubegpu knows, one adapter per line; a new kind is one module and one line here.

Kinds no adapter reads are searched generically (kubegpu.workloads.generic).
"""

from __future__ import annotations

from collections.abc import Mapping

from kubegpu.manifests.document import Document
from kubegpu.workloads import (
    appwrapper,
    argo,
    core,
    dynamo,
    hyperpod,
    jobset,
    knative,
    kserve,
    kubeflow,
    lws,
    nim,
    ray,
    trainjob,
    vllm,
    volcano,
)
from kubegpu.workloads.kind import WorkloadKind

ADAPTERS: tuple[WorkloadKind, ...] = (
    core.POD,
    core.POD_TEMPLATE,
    core.DEPLOYMENT,
    core.REPLICA_SET,
    core.REPLICATION_CONTROLLER,
    core.STATEFUL_SET,
    core.DAEMON_SET,
    core.JOB,
    core.CRON_JOB,
    volcano.VOLCANO_JOB,
    kubeflow.PYTORCH_JOB,
    kubeflow.JAX_JOB,
    kubeflow.TF_JOB,
    kubeflow.MPI_JOB,
    kubeflow.XGBOOST_JOB,
    kubeflow.PADDLE_JOB,
    kubeflow.MX_JOB,
    jobset.JOBSET,
    trainjob.TRAIN_JOB,
    trainjob.TRAINING_RUNTIME,
    lws.LEADER_WORKER_SET,
    ray.RAY_CLUSTER,
    ray.RAY_JOB,
    kserve.INFERENCE_SERVICE,
    kserve.LLM_INFERENCE_SERVICE,
    kserve.LLM_INFERENCE_SERVICE_CONFIG,
    knative.KNATIVE_SERVICE,
    argo.WORKFLOW,
    appwrapper.APPWRAPPER,
    vllm.VLLM_RUNTIME,
    nim.NIM_SERVICE,
    nim.NIM_CACHE,
    dynamo.DYNAMO_GRAPH_DEPLOYMENT,
    hyperpod.HYPERPOD_PYTORCH_JOB,
)


def _index(adapters: tuple[WorkloadKind, ...]) -> Mapping[str, tuple[WorkloadKind, ...]]:
    index: dict[str, list[WorkloadKind]] = {}
    for adapter in adapters:
        for kind in sorted(adapter.kinds):
            index.setdefault(kind, []).append(adapter)
    return {kind: tuple(found) for kind, found in index.items()}


_BY_KIND = _index(ADAPTERS)


def api_group(doc: Document) -> str:
    """The object's API group ('' for the core group)."""
    api_version = doc.api_version
    return api_version.split("/")[0] if "/" in api_version else ""


def kind_of(doc: Document) -> WorkloadKind | None:
    """The adapter that reads this object (by kind, and API group where two kinds share a name), if any; found once
    per object and kept with it (every rule asks, several times)."""
    state = doc.__dict__
    found = state.get(_ADAPTER, _UNKNOWN)
    if found is _UNKNOWN:
        found = state[_ADAPTER] = _lookup(doc)
    return found  # type: ignore[no-any-return]


_ADAPTER = "_kubegpu_adapter"
_UNKNOWN = object()


def _lookup(doc: Document) -> WorkloadKind | None:
    return adapter_of(api_group(doc), doc.kind)


def adapter_of(group: str, kind: str) -> WorkloadKind | None:
    """The adapter that reads objects of this API group and kind, if any."""
    candidates = _BY_KIND.get(kind)
    if candidates is None:
        return None
    for adapter in candidates:
        if adapter.groups is None or group in adapter.groups:
            return adapter
    return None
