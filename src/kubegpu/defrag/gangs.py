"""Which running pods belong together: pods of one PodGroup are evicted together or not at all.

A pod's group is the PodGroup its labels or annotations name (Volcano, scheduler-plugins coscheduling, KAI
Scheduler: the keys lint's gang rule reads), Kueue's plain pod group (`kueue.x-k8s.io/pod-group-name`), or the
Workload API's `spec.workloadRef` (Kubernetes v1.35, alpha). Pods of a distributed job that name no group are
moved one by one.
"""

from __future__ import annotations

from collections.abc import Mapping

from kubegpu.live.model import PodInfo
from kubegpu.rules.gang import COSCHEDULING_LABELS, KAI_POD_GROUP_ANNOTATION, VOLCANO_GROUP_ANNOTATIONS

KUEUE_POD_GROUP_LABEL = "kueue.x-k8s.io/pod-group-name"


def _workload_ref(pod: PodInfo) -> str:
    spec = pod.raw.get("spec") if isinstance(pod.raw, Mapping) else None
    ref = spec.get("workloadRef") if isinstance(spec, Mapping) else None
    if isinstance(ref, Mapping) and ref.get("name"):
        return f"{ref.get('name')}/{ref.get('podGroup') or ''}"
    return ""


def pod_group(pod: PodInfo) -> str | None:
    """`namespace/family/name` of the group the pod belongs to, or None for a pod on its own."""
    for key in VOLCANO_GROUP_ANNOTATIONS:
        if pod.annotations.get(key):
            return f"{pod.namespace}/Volcano/{pod.annotations[key]}"
    for key in COSCHEDULING_LABELS:
        if pod.labels.get(key):
            return f"{pod.namespace}/coscheduling/{pod.labels[key]}"
    if pod.annotations.get(KAI_POD_GROUP_ANNOTATION):
        return f"{pod.namespace}/KAI/{pod.annotations[KAI_POD_GROUP_ANNOTATION]}"
    if pod.labels.get(KUEUE_POD_GROUP_LABEL):
        return f"{pod.namespace}/Kueue/{pod.labels[KUEUE_POD_GROUP_LABEL]}"
    ref = _workload_ref(pod)
    return f"{pod.namespace}/Workload/{ref}" if ref else None


def group_name(key: str) -> str:
    """A group key as users read it: `Volcano PodGroup ml/train`."""
    namespace, family, name = key.split("/", 2)
    what = "Workload" if family == "Workload" else f"{family} pod group"
    return f"{what} {namespace}/{name}"
