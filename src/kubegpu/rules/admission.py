"""KG901 gpu-pod-unadmittable: with `--node`, ask the kubelet model whether each GPU pod would be admitted there.

Uses kubegpu.kubelet (kubelet v1.35 admission: topology, CPU, memory and device managers; see docs/dev/kubelet-api.md).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

from kubegpu.errors import InputError, KubegpuError
from kubegpu.manifests import PodTemplate
from kubegpu.manifests.resources import template_pod
from kubegpu.ruleapi import RawFinding, Rule, RuleContext, Severity, Target

if TYPE_CHECKING:  # the kubelet model is imported only when a --node run needs it (lint start-up stays fast)
    from kubegpu.kubelet import NodeState
    from kubegpu.topology.model import NodeTopology

_PRACTICE = "Guaranteed QoS and CPU alignment"


def _node_state(ctx: RuleContext, node: NodeTopology) -> NodeState | KubegpuError:
    """A fresh node with the given (or the default) kubelet configuration, or why there is none."""
    from kubegpu.kubelet import KubeletConfig, NodeState

    try:
        if isinstance(ctx.kubelet_config, Mapping):
            config = KubeletConfig.from_dict(ctx.kubelet_config, source="--kubelet-config")
        else:
            config = KubeletConfig.default_for(node)
        return NodeState(node, config)
    except KubegpuError as err:
        return err


def _check_unadmittable(template: PodTemplate, ctx: RuleContext) -> Iterator[RawFinding]:
    node = ctx.node
    if node is None:
        return
    from kubegpu.kubelet import KubeletStartupError, PodRequest

    state = _node_state(ctx, node)
    configured = "its kubelet configuration" if isinstance(ctx.kubelet_config, Mapping) else "kubelet defaults"
    if isinstance(state, KubeletStartupError):
        yield RawFinding(
            template.path,
            f"admission not checked on node '{node.name}': with {configured} the kubelet "
            f"would not start ({state.component}: {state.message})",
            severity=Severity.INFO,
        )
        return
    if isinstance(state, KubegpuError):
        yield RawFinding(template.path, f"admission not checked on node '{node.name}': {state}", severity=Severity.INFO)
        return
    model = template_pod(template)  # the pod `kubegpu admit` reads: pod-level resources and overhead included
    if any(c.invalid or any(v < 0 for v in (*c.requests.values(), *c.limits.values())) for c in model.containers):
        return  # invalid quantities are reported by invalid-quantity
    try:
        pod = PodRequest.from_model(template.document.ref.name or "pod", model, source=template.document.source)
    except InputError:
        return  # no app container: nothing the kubelet would run
    verdict = state.admit(pod)
    if verdict.admitted:
        return
    yield RawFinding(
        template.path,
        f"on node '{node.name}' ({configured}) the kubelet rejects {template.description}: {verdict.reason}: "
        f"{verdict.message}; the pod is Failed and not rescheduled (`kubegpu admit --explain` shows each manager's "
        "hints)",
    )


GPU_POD_UNADMITTABLE = Rule(
    code="KG901",
    name="gpu-pod-unadmittable",
    practice=_PRACTICE,
    severity=Severity.ERROR,
    summary="With --node, the kubelet of that node would reject the GPU pod (TopologyAffinityError, "
    "SMTAlignmentError, OutOf<resource>).",
    target=Target.TEMPLATE,
    check=_check_unadmittable,
    rationale="The scheduler does not know NUMA: it binds a pod to a node with enough free GPUs and CPUs, and the "
    "kubelet then rejects it when its topology manager cannot align GPUs, CPUs and memory (TopologyAffinityError), "
    "when full-pcpus-only meets an odd CPU count (SMTAlignmentError), or when the node lacks the resource. The "
    "rejected pod is Failed and not rescheduled. With `--node PRESET|PROFILE` (and `--kubelet-config FILE`, "
    "otherwise the kubelet defaults) kubegpu runs its kubelet v1.35 admission model for each GPU pod on an empty "
    "node of that kind; `kubegpu admit` shows the hints behind each verdict.",
    bad_example="# --node dgx-h100 --kubelet-config single-numa-node.yaml\nresources:\n"
    '  limits: {cpu: "16", memory: 128Gi, nvidia.com/gpu: 8}   # 4 GPUs per NUMA node',
    good_example='resources:\n  limits: {cpu: "16", memory: 128Gi, nvidia.com/gpu: 4}',
)

RULES: tuple[Rule, ...] = (GPU_POD_UNADMITTABLE,)
