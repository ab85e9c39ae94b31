"""Whether a running pod may be evicted to make room, and why not: cluster-autoscaler's drain rules and the
descheduler's default evictor.

Follows kubernetes/autoscaler cluster-autoscaler v1.32 (simulator/drainability/rules and utils/drain) and
kubernetes-sigs/descheduler v0.34 (framework/plugins/defaultevictor): mirror pods, terminating pods and DaemonSet
pods stay (evicting them makes no room: the kubelet or the DaemonSet controller runs them on the same node);
a pod with no controller (no owner reference with controller: true, or only a Node: a static pod) stays, as
nothing would run it again elsewhere. `cluster-autoscaler.kubernetes.io/safe-to-evict: "true"` or the
descheduler's `descheduler.alpha.kubernetes.io/evict` annotation (any value) lift the rules that follow: a
kube-system pod no PodDisruptionBudget covers, `safe-to-evict: "false"`, and local storage as the descheduler
counts it (any hostPath or emptyDir volume, in memory too, unless named in cluster-autoscaler's
`safe-to-evict-local-volumes`). A controller that is a custom resource counts as a controller.
"""

from __future__ import annotations

from kubegpu.live.model import PodInfo

SAFE_TO_EVICT = "cluster-autoscaler.kubernetes.io/safe-to-evict"
SAFE_TO_EVICT_LOCAL_VOLUMES = "cluster-autoscaler.kubernetes.io/safe-to-evict-local-volumes"
DESCHEDULER_EVICT = "descheduler.alpha.kubernetes.io/evict"
SYSTEM_NAMESPACE = "kube-system"

# The reasons a pod stays where it runs, as the plan's summary counts them.
MIRROR = "a static pod's mirror"
TERMINATING = "already terminating"
DAEMONSET = "a DaemonSet's pod"
NO_CONTROLLER = "no controller would recreate it"
SYSTEM = "a kube-system pod that no PodDisruptionBudget covers"
NOT_SAFE = f'annotated {SAFE_TO_EVICT}: "false"'
LOCAL_STORAGE = "local storage"


def _local_volume(pod: PodInfo) -> str | None:
    """The first hostPath or emptyDir volume not named in safe-to-evict-local-volumes (the descheduler's
    IsPodWithLocalStorage)."""
    allowed = {v.strip() for v in pod.annotations.get(SAFE_TO_EVICT_LOCAL_VOLUMES, "").split(",") if v.strip()}
    for volume in pod.volumes:
        if volume.source in ("hostPath", "emptyDir") and volume.name not in allowed:
            return volume.name
    return None


def drain_blocker(pod: PodInfo, covered: bool) -> str | None:
    """Why cluster-autoscaler's drain rules keep `pod` on its node, or None; `covered`: a PodDisruptionBudget of
    its namespace selects it."""
    if pod.mirror:
        return MIRROR
    if pod.deleting:
        return TERMINATING
    if pod.daemonset:
        return DAEMONSET
    controller = pod.controller
    if controller is None or controller.kind == "Node":
        return NO_CONTROLLER
    if pod.annotations.get(SAFE_TO_EVICT) == "true" or DESCHEDULER_EVICT in pod.annotations:
        return None
    if pod.namespace == SYSTEM_NAMESPACE and not covered:
        return SYSTEM
    if pod.annotations.get(SAFE_TO_EVICT) == "false":
        return NOT_SAFE
    volume = _local_volume(pod)
    if volume is not None:
        return f"{LOCAL_STORAGE} (volume {volume})"
    return None
