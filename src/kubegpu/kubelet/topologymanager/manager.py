"""Creating the Topology Manager: policy and scope names, options, NUMA count and distances.

Follows kubernetes v1.35 pkg/kubelet/cm/topologymanager/topology_manager.go (NewManager) and
numa_info.go (NewNUMAInfo); the errors are the kubelet's start-up errors.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kubegpu.errors import ModelError
from kubegpu.kubelet.features import FeatureGates
from kubegpu.kubelet.topologymanager.numa_info import NUMAInfo
from kubegpu.kubelet.topologymanager.options import TopologyManagerOptions, parse_options
from kubegpu.kubelet.topologymanager.policy import (
    POLICY_BEST_EFFORT,
    POLICY_NONE,
    POLICY_RESTRICTED,
    POLICY_SINGLE_NUMA_NODE,
    Policy,
)
from kubegpu.kubelet.topologymanager.policy_best_effort import BestEffortPolicy
from kubegpu.kubelet.topologymanager.policy_none import NonePolicy
from kubegpu.kubelet.topologymanager.policy_restricted import RestrictedPolicy
from kubegpu.kubelet.topologymanager.policy_single_numa_node import SingleNUMANodePolicy

SCOPE_CONTAINER = "container"
SCOPE_POD = "pod"
SCOPES = (SCOPE_CONTAINER, SCOPE_POD)


def new_policy(
    name: str,
    scope: str,
    numa_nodes: Sequence[int],
    distances: Mapping[int, Mapping[int, int]] | None,
    raw_options: Mapping[str, str] | None = None,
    gates: FeatureGates | None = None,
    extra_options: Mapping[str, str] | None = None,
) -> tuple[Policy, TopologyManagerOptions]:
    """Build the policy as NewManager does; raise ModelError with the kubelet's start-up error.

    `distances` is None when the machine reports none (prefer-closest-numa-nodes then fails).
    """
    if name == POLICY_NONE:
        return NonePolicy(), TopologyManagerOptions()
    options = parse_options(raw_options, gates, extra_options)
    if options.prefer_closest_numa and not distances:
        raise ModelError("cannot discover NUMA topology: error getting NUMA distances from cadvisor")
    info = NUMAInfo(tuple(sorted(numa_nodes)), distances or {})
    if len(info.nodes) > options.max_allowable_numa_nodes:
        raise ModelError(f"unsupported on machines with more than {options.max_allowable_numa_nodes} NUMA Nodes")
    policy: Policy
    if name == POLICY_BEST_EFFORT:
        policy = BestEffortPolicy(info, options)
    elif name == POLICY_RESTRICTED:
        policy = RestrictedPolicy(info, options)
    elif name == POLICY_SINGLE_NUMA_NODE:
        policy = SingleNUMANodePolicy(info)
    else:
        raise ModelError(f'unknown policy: "{name}"')
    if scope not in SCOPES:
        raise ModelError(f'unknown scope: "{scope}"')
    return policy, options
