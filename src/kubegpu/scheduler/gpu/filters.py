"""kube-scheduler's default Filter plugins over the GPU cluster model, each with its reasons per node, and the
GPU-share filter of the FGD study after them.

Follows kubernetes v1.35 pkg/scheduler/framework/plugins: nodeunschedulable ("node(s) were unschedulable"),
tainttoleration ("node(s) had untolerated taint(s)": since v1.35 the reason names no taint, PR #134740),
nodeaffinity ("node(s) didn't match Pod's node affinity/selector", its PreFilter on metadata.name terms) and
noderesources/fit.go (fitsRequest: "Too many pods", "Insufficient <resource>", UnschedulableAndUnresolvable
when the request exceeds the node's allocatable, PR #131345). The GPU-share filter follows
hkust-adsl/kubernetes-scheduler-simulator open_gpu_share.go, whose reason only names the node; ours say why.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kubegpu.scheduler.arrays import BoolArray
from kubegpu.scheduler.constraints import affinity_matches, node_names_of, selector_matches, untolerated_taint
from kubegpu.scheduler.framework import FilterPlugin, PreFilterResult
from kubegpu.scheduler.gpu.milli import MILLI
from kubegpu.scheduler.status import SUCCESS, Status, unschedulable

if TYPE_CHECKING:  # the cluster reads these plugins (GpuCluster.default_filters): types only here
    from kubegpu.scheduler.gpu.state import GpuCluster, GpuPod

ERR_UNSCHEDULABLE = "node(s) were unschedulable"
ERR_TAINT = "node(s) had untolerated taint(s)"
ERR_AFFINITY = "node(s) didn't match Pod's node affinity/selector"
ERR_AFFINITY_CONFLICT = "pod affinity terms conflict"
ERR_TOO_MANY_PODS = "Too many pods"
# the GPU-share filter's reasons (ours: the simulator it follows answers "Node:<name>")
ERR_NO_GPU = "node(s) had no GPU"
ERR_GPU_MODEL = "node(s) didn't have the requested GPU model"
ERR_GPU_SHARE = "node(s) had no GPU with enough free share"
ERR_GPU_COUNT = "node(s) didn't have enough GPUs with the requested share free"


def insufficient(resource: str) -> str:
    """fitsRequest's reason for one resource."""
    return f"Insufficient {resource}"


class NodeUnschedulable:
    """A cordoned node takes only pods that tolerate node.kubernetes.io/unschedulable:NoSchedule."""

    name = "NodeUnschedulable"

    def pre_filter(self, cluster: GpuCluster, pod: GpuPod) -> PreFilterResult | None:
        return None

    def filter(self, cluster: GpuCluster, pod: GpuPod) -> BoolArray | None:
        return cluster.admits_unschedulable(pod)

    def status(self, cluster: GpuCluster, pod: GpuPod, node: int) -> Status:
        allowed = cluster.admits_unschedulable(pod)
        if allowed is None or allowed[node]:
            return SUCCESS
        return unschedulable(ERR_UNSCHEDULABLE, unresolvable=True)


class TaintToleration:
    """NoSchedule and NoExecute taints the pod does not tolerate keep it off the node."""

    name = "TaintToleration"

    def pre_filter(self, cluster: GpuCluster, pod: GpuPod) -> PreFilterResult | None:
        return None

    def filter(self, cluster: GpuCluster, pod: GpuPod) -> BoolArray | None:
        return cluster.tolerated(pod)

    def status(self, cluster: GpuCluster, pod: GpuPod, node: int) -> Status:
        if untolerated_taint(cluster.nodes[node].taints, pod.tolerations) is None:
            return SUCCESS
        return unschedulable(ERR_TAINT, unresolvable=True)


class NodeAffinity:
    """The pod's nodeSelector and required node affinity; its PreFilter narrows the nodes to those a
    metadata.name term names."""

    name = "NodeAffinity"

    def pre_filter(self, cluster: GpuCluster, pod: GpuPod) -> PreFilterResult | None:
        names = node_names_of(pod.node_affinity)
        if names is None:
            return None
        if not names:
            return PreFilterResult(status=unschedulable(ERR_AFFINITY_CONFLICT, unresolvable=True))
        index = {name: i for i, name in enumerate(cluster.names)}
        return PreFilterResult(nodes=frozenset(index[n] for n in names if n in index))

    def filter(self, cluster: GpuCluster, pod: GpuPod) -> BoolArray | None:
        return cluster.matches_affinity(pod)

    def status(self, cluster: GpuCluster, pod: GpuPod, node: int) -> Status:
        spec = cluster.nodes[node]  # this node alone: the diagnosis asks node by node
        if not pod.constrained or (
            selector_matches(pod.node_selector, spec.labels)
            and affinity_matches(pod.node_affinity, spec.labels, spec.name)
        ):
            return SUCCESS
        return unschedulable(ERR_AFFINITY, unresolvable=True)


class NodeResourcesFit:
    """Pod slots, cpu, memory, other extended resources and whole GPUs against what the node has left."""

    name = "NodeResourcesFit"

    def pre_filter(self, cluster: GpuCluster, pod: GpuPod) -> PreFilterResult | None:
        return None

    def filter(self, cluster: GpuCluster, pod: GpuPod) -> BoolArray | None:
        return cluster.fits_resources(pod)

    def status(self, cluster: GpuCluster, pod: GpuPod, node: int) -> Status:
        reasons: list[str] = []
        unresolvable = False
        if cluster.pods_used[node] + 1 > cluster.pods_cap[node]:
            reasons.append(ERR_TOO_MANY_PODS)
        checks: list[tuple[str, int, int, int]] = [
            ("cpu", pod.cpu_milli, int(cluster.cpu_cap[node]), int(cluster.cpu_used[node])),
            ("memory", pod.memory_bytes, int(cluster.mem_cap[node]), int(cluster.mem_used[node])),
        ]
        if "ephemeral-storage" in pod.scalars:
            checks.append(_scalar(cluster, "ephemeral-storage", pod.scalars["ephemeral-storage"], node))
        extended = [(name, amount) for name, amount in pod.scalars.items() if name != "ephemeral-storage"]
        if pod.is_gpu and pod.gpu_milli >= MILLI:
            extended.append((pod.gpu_resource, pod.gpu_count))
        for name, amount in sorted(extended):
            if name == pod.gpu_resource and pod.is_gpu and pod.gpu_milli >= MILLI:
                same = node_resource(cluster, node) == name
                allocatable = int(cluster.gpu_count[node]) if same else 0
                free = int(cluster.full_free[node]) if same else 0
                checks.append((name, amount, allocatable, allocatable - free))
            else:
                checks.append(_scalar(cluster, name, amount, node))
        for name, request, allocatable, used in checks:
            if request > 0 and request > allocatable - used:
                reasons.append(insufficient(name))
                unresolvable |= request > allocatable
        if not reasons:
            return SUCCESS
        return unschedulable(*reasons, unresolvable=unresolvable)


def node_resource(cluster: GpuCluster, node: int) -> str:
    """The accelerator resource of a node's GPUs ('' for a node without GPUs)."""
    index = int(cluster.gpu_resource[node])
    return cluster.resource_names[index] if index >= 0 and cluster.gpu_count[node] > 0 else ""


def _scalar(cluster: GpuCluster, name: str, amount: int, node: int) -> tuple[str, int, int, int]:
    cap = int(cluster.scalar_cap[name][node]) if name in cluster.scalar_cap else 0
    used = int(cluster.scalar_used[name][node]) if name in cluster.scalar_used else 0
    return name, amount, cap, used


class GpuShare:
    """GPU model and per-GPU share: a node of an accepted model with `gpu_count` GPUs each holding the share
    (Open-Gpu-Share; for whole GPUs NodeResourcesFit has already counted them)."""

    name = "Open-Gpu-Share"

    def pre_filter(self, cluster: GpuCluster, pod: GpuPod) -> PreFilterResult | None:
        return None

    def filter(self, cluster: GpuCluster, pod: GpuPod) -> BoolArray | None:
        return cluster.fits_gpus(pod)

    def status(self, cluster: GpuCluster, pod: GpuPod, node: int) -> Status:
        if not pod.is_gpu:
            return SUCCESS
        if cluster.gpu_count[node] <= 0:
            return unschedulable(ERR_NO_GPU)
        if not cluster.model_mask(pod)[node]:
            return unschedulable(ERR_GPU_MODEL)
        if cluster.gpu_fit_mask(pod)[node]:
            return SUCCESS
        return unschedulable(ERR_GPU_SHARE if pod.gpu_count == 1 else ERR_GPU_COUNT)


def default_filters() -> tuple[FilterPlugin[GpuCluster, GpuPod], ...]:
    """The default profile's Filter plugins this model has, in the default profile's order, then GPU share."""
    return (NodeUnschedulable(), TaintToleration(), NodeAffinity(), NodeResourcesFit(), GpuShare())


def first_rejection(cluster: GpuCluster, pod: GpuPod, node: int) -> Status:
    """The Status of the first default filter that rejects `pod` on `node` (Success when none does): one node's
    answer of RunFilterPlugins, without a framework."""
    for plugin in default_filters():
        passed = plugin.filter(cluster, pod)
        if passed is not None and not bool(passed[node]):
            return plugin.status(cluster, pod, node).with_plugin(plugin.name)
    return SUCCESS
