"""The Topology Manager's hint providers: device, CPU and memory managers behind one protocol.

Follows kubernetes v1.35 pkg/kubelet/cm/topologymanager (the HintProvider interface: GetTopologyHints,
GetPodTopologyHints, Allocate) and the managers' RemoveContainer on pod removal. Each provider owns its
manager's state; an admission attempt works on copies and keeps them only when the pod is admitted.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from kubegpu.kubelet.cpumanager.policy_static import CPUState, StaticPolicy
from kubegpu.kubelet.devicemanager.manager import DeviceManager, DeviceState
from kubegpu.kubelet.hints import ProviderHints, TopologyHint
from kubegpu.kubelet.memorymanager.policy_static import MemoryState, StaticMemoryPolicy
from kubegpu.kubelet.pod import ContainerRequest, PodRequest

DEVICE_MANAGER = "device manager"
CPU_MANAGER = "cpu manager"
MEMORY_MANAGER = "memory manager"


@dataclass(frozen=True)
class Allocation:
    """What one provider gave one container: devices per resource, exclusive CPUs (a bitset), memory per
    type and NUMA node."""

    devices: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    cpus: int = 0
    memory: Mapping[str, Mapping[int, int]] = field(default_factory=dict)


class HintProvider(Protocol):
    """What the Topology Manager asks of a resource manager (a DRA manager would be one more)."""

    @property
    def name(self) -> str: ...

    def copy(self) -> HintProvider:
        """The same provider over a copy of its state."""
        ...

    def container_hints(self, pod: PodRequest, container: ContainerRequest, qos: str) -> ProviderHints: ...

    def pod_hints(self, pod: PodRequest, qos: str) -> ProviderHints: ...

    def allocate(self, pod: PodRequest, container: ContainerRequest, qos: str, hint: TopologyHint) -> Allocation:
        """Allocate for the container under the merged hint; a ModelError rejects the pod."""
        ...

    def release(self, pod: PodRequest) -> None:
        """Give back everything the pod holds (the kubelet removing its containers)."""
        ...


class DeviceProvider:
    """The device manager (GPUs and other device-plugin resources)."""

    name = DEVICE_MANAGER

    def __init__(self, manager: DeviceManager, state: DeviceState) -> None:
        self.manager = manager
        self.state = state

    def copy(self) -> DeviceProvider:
        return DeviceProvider(self.manager, self.state.copy())

    def container_hints(self, pod: PodRequest, container: ContainerRequest, qos: str) -> ProviderHints:
        return self.manager.container_hints(self.state, pod, container)

    def pod_hints(self, pod: PodRequest, qos: str) -> ProviderHints:
        return self.manager.pod_hints(self.state, pod)

    def allocate(self, pod: PodRequest, container: ContainerRequest, qos: str, hint: TopologyHint) -> Allocation:
        return Allocation(devices=self.manager.allocate(self.state, pod, container, hint.affinity))

    def release(self, pod: PodRequest) -> None:
        self.manager.remove_pod(self.state, pod.key)


class CPUProvider:
    """The CPU manager with the static policy (the none policy gives no hints and is not a provider here)."""

    name = CPU_MANAGER

    def __init__(self, policy: StaticPolicy, state: CPUState) -> None:
        self.policy = policy
        self.state = state

    def copy(self) -> CPUProvider:
        return CPUProvider(self.policy, self.state.copy())

    def container_hints(self, pod: PodRequest, container: ContainerRequest, qos: str) -> ProviderHints:
        return self.policy.container_hints(self.state, pod, container, qos)

    def pod_hints(self, pod: PodRequest, qos: str) -> ProviderHints:
        return self.policy.pod_hints(self.state, pod, qos)

    def allocate(self, pod: PodRequest, container: ContainerRequest, qos: str, hint: TopologyHint) -> Allocation:
        return Allocation(cpus=self.policy.allocate(self.state, pod, container, qos, hint.affinity))

    def release(self, pod: PodRequest) -> None:
        self.policy.remove_pod(self.state, pod)


class MemoryProvider:
    """The memory manager with the Static policy."""

    name = MEMORY_MANAGER

    def __init__(self, policy: StaticMemoryPolicy, state: MemoryState) -> None:
        self.policy = policy
        self.state = state

    def copy(self) -> MemoryProvider:
        return MemoryProvider(self.policy, self.state.copy())

    def container_hints(self, pod: PodRequest, container: ContainerRequest, qos: str) -> ProviderHints:
        return self.policy.container_hints(self.state, pod, container, qos)

    def pod_hints(self, pod: PodRequest, qos: str) -> ProviderHints:
        return self.policy.pod_hints(self.state, pod, qos)

    def allocate(self, pod: PodRequest, container: ContainerRequest, qos: str, hint: TopologyHint) -> Allocation:
        blocks = self.policy.allocate(self.state, pod, container, qos, hint)
        return Allocation(memory={b.type: dict(b.per_node) for b in blocks})

    def release(self, pod: PodRequest) -> None:
        self.policy.remove_pod(self.state, pod)
