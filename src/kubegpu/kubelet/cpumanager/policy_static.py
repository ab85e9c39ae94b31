"""The static CPU manager policy: exclusive CPUs for integral Guaranteed containers, and hints.

Follows kubernetes v1.35 pkg/kubelet/cm/cpumanager/policy_static.go: reserved CPUs (explicit or
takeByTopology), full-pcpus-only checks, aligned-first allocation, init-container CPU reuse,
strict-cpu-reservation, align-by-socket, generateCPUTopologyHints and podGuaranteedCPUs.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kubegpu.errors import ModelError
from kubegpu.kubelet.bitmask import NUMAMask, iterate_masks
from kubegpu.kubelet.cpumanager.assignment import (
    PACKED,
    SPREAD,
    take_by_topology_numa_distributed,
    take_by_topology_numa_packed,
)
from kubegpu.kubelet.cpumanager.cpuset import to_string
from kubegpu.kubelet.cpumanager.options import StaticPolicyOptions
from kubegpu.kubelet.cpumanager.topology import CPUTopology
from kubegpu.kubelet.hints import TopologyHint
from kubegpu.kubelet.pod import CPU, KIND_INIT, ContainerRequest, PodRequest, aggregate
from kubegpu.kubelet.reasons import SMTAlignmentError
from kubegpu.manifests.pod import exclusive_cpus_of_millis

RESOURCE = "cpu"


@dataclass
class CPUState:
    """The CPU manager state: the shared (default) pool and exclusive assignments per pod."""

    default: int = 0
    assignments: dict[str, dict[str, int]] = field(default_factory=dict)
    reusable: dict[str, int] = field(default_factory=dict)

    def copy(self) -> CPUState:
        return CPUState(
            self.default,
            {pod: dict(c) for pod, c in self.assignments.items()},
            dict(self.reusable),
        )

    def get(self, pod: str, container: str) -> int | None:
        return self.assignments.get(pod, {}).get(container)


class StaticPolicy:
    """One node's static policy: fixed reserved sets plus the functions that read a CPUState."""

    def __init__(
        self,
        topo: CPUTopology,
        num_reserved: int,
        reserved: int = 0,
        options: StaticPolicyOptions | None = None,
    ) -> None:
        self.topo = topo
        self.options = options or StaticPolicyOptions()
        self.group_size = topo.cpus_per_core
        if reserved.bit_count() == 0:
            reserved = self.take_by_topology(topo.all_bits, num_reserved) if num_reserved else 0
        if reserved.bit_count() != num_reserved:
            raise ModelError(
                "[cpumanager] unable to reserve the required amount of CPUs "
                f"(size of {to_string(reserved)} did not equal {num_reserved})"
            )
        self.reserved = reserved
        self.reserved_physical = topo.siblings_bits(reserved)
        numas = topo.numa_ids()
        self._mask_cpus = tuple((m, topo.cpus_in_numas(m.ids())) for m in iterate_masks(numas))

    # -- start -------------------------------------------------------------------------
    def start(self, state: CPUState) -> None:
        """validateState: initialise an empty state, else check reserved CPUs, overlaps and that the
        default set plus the assignments are exactly the node's CPUs (less strictly reserved ones)."""
        all_cpus = self.topo.all_bits
        if self.options.strict_cpu_reservation:
            all_cpus &= ~self.reserved
        if state.default == 0:
            if state.assignments:
                raise ModelError("default cpuset cannot be empty")
            state.default = all_cpus
            return
        if self.options.strict_cpu_reservation:
            overlap = self.reserved & state.default
            if overlap:
                raise ModelError(
                    f'some of strictly reserved cpus: "{to_string(overlap)}" are present in '
                    f'defaultCpuSet: "{to_string(state.default)}"'
                )
        elif self.reserved & state.default != self.reserved:
            raise ModelError(
                f'not all reserved cpus: "{to_string(self.reserved)}" are present in '
                f'defaultCpuSet: "{to_string(state.default)}"'
            )
        known = state.default
        for pod, containers in state.assignments.items():
            for name, cpus in containers.items():
                if cpus & state.default:
                    raise ModelError(
                        f'pod: {pod}, container: {name} cpuset: "{to_string(cpus)}" overlaps '
                        f'with default cpuset "{to_string(state.default)}"'
                    )
                known |= cpus
        # The CPUs may have changed since the state was written (a CPU taken offline while the
        # kubelet was down): the default set plus the assignments must be exactly the node's CPUs.
        if known != all_cpus:
            raise ModelError(
                f'current set of available CPUs "{to_string(all_cpus)}" doesn\'t match with CPUs in '
                f'state "{to_string(known)}"'
            )

    # -- sizes -------------------------------------------------------------------------
    def guaranteed_cpus(self, qos: str, container: ContainerRequest) -> int:
        """Exclusive CPUs for a container: its whole CPUs when the pod is Guaranteed, else 0 (the pod model's
        exclusive_cpus; callers skip pods with pod-level resources)."""
        return exclusive_cpus_of_millis(qos, container.request(CPU))

    def pod_guaranteed_cpus(self, qos: str, pod: PodRequest) -> int:
        """max(app + sidecar CPUs, the largest regular init container plus sidecars before it)."""
        return aggregate(pod, lambda c: {CPU: self.guaranteed_cpus(qos, c)} if CPU in c.requests else {}).get(CPU, 0)

    def available(self, state: CPUState) -> int:
        return state.default & ~self.reserved

    def available_physical(self, state: CPUState) -> int:
        return state.default & ~self.reserved_physical

    # -- allocation --------------------------------------------------------------------
    def take_by_topology(self, available: int, n: int) -> int:
        strategy = SPREAD if self.options.distribute_cpus_across_cores else PACKED
        if self.options.distribute_cpus_across_numa:
            group = self.group_size if self.options.full_physical_cpus_only else 1
            return take_by_topology_numa_distributed(self.topo, available, n, group, strategy)
        return take_by_topology_numa_packed(
            self.topo, available, n, strategy, self.options.prefer_align_by_uncore_cache
        )

    def aligned_cpus(self, affinity: NUMAMask, allocatable: int) -> int:
        if self.options.align_by_socket:
            bits = 0
            for socket in self.topo.sockets_in_numas(affinity.ids()):
                bits |= self.topo.socket_bits[socket]
            return allocatable & bits
        return allocatable & self.topo.cpus_in_numas(affinity.ids())

    def allocate_cpus(self, state: CPUState, n: int, affinity: NUMAMask | None, reusable: int) -> int:
        allocatable = self.available(state) | reusable
        result = 0
        if affinity is not None:
            aligned = self.aligned_cpus(affinity, allocatable)
            result = self.take_by_topology(aligned, min(n, aligned.bit_count()))
        result |= self.take_by_topology(allocatable & ~result, n - result.bit_count())
        state.default &= ~result
        return result

    def allocate(
        self,
        state: CPUState,
        pod: PodRequest,
        container: ContainerRequest,
        qos: str,
        affinity: NUMAMask | None,
    ) -> int:
        """Allocate exclusive CPUs (0 = shared pool); SMTAlignmentError or a plain error fails."""
        n = self.guaranteed_cpus(qos, container)
        if n == 0 or pod.uses_pod_level_resources:
            return 0
        if self.options.full_physical_cpus_only:
            if n % self.group_size != 0:
                raise SMTAlignmentError(n, self.group_size)
            free_physical = self.available_physical(state).bit_count()
            if n > free_physical:
                raise SMTAlignmentError(n, self.group_size, free_physical, by_physical=True)
        existing = state.get(pod.key, container.name)
        if existing is not None:
            self._update_reuse(state, pod, container, existing)
            return existing
        cpus = self.allocate_cpus(state, n, affinity, state.reusable.get(pod.key, 0))
        state.assignments.setdefault(pod.key, {})[container.name] = cpus
        self._update_reuse(state, pod, container, cpus)
        return cpus

    def _update_reuse(self, state: CPUState, pod: PodRequest, container: ContainerRequest, cpus: int) -> None:
        for other in [k for k in state.reusable if k != pod.key]:
            del state.reusable[other]
        current = state.reusable.get(pod.key, 0)
        if container.kind == KIND_INIT:
            state.reusable[pod.key] = current | cpus
        elif container.restartable:
            state.reusable[pod.key] = current
        else:
            state.reusable[pod.key] = current & ~cpus

    def remove_container(self, state: CPUState, pod_key: str, name: str) -> None:
        """Release a container's CPUs except those still used by its pod's other containers."""
        containers = state.assignments.get(pod_key, {})
        if name not in containers:
            return
        in_use = 0
        for other, cpus in containers.items():
            if other != name:
                in_use |= cpus
        released = containers.pop(name) & ~in_use
        if not containers:
            del state.assignments[pod_key]
        state.default |= released

    def remove_pod(self, state: CPUState, pod: PodRequest) -> None:
        """RemoveContainer for every container of the pod (the kubelet's pod removal), then its reusable CPUs."""
        for c in pod.all_containers():
            self.remove_container(state, pod.key, c.name)
        state.reusable.pop(pod.key, None)

    # -- hints -------------------------------------------------------------------------
    def generate_hints(self, available: int, reusable: int, request: int) -> list[TopologyHint]:
        """generateCPUTopologyHints: feasible masks; preferred = minimal capacity-sized masks."""
        min_size = self.topo.num_numa_nodes
        found: list[NUMAMask] = []
        for mask, cpus_in_mask in self._mask_cpus:
            if cpus_in_mask.bit_count() >= request and mask.count() < min_size:
                min_size = mask.count()
            if reusable & ~cpus_in_mask:
                continue
            if (reusable | (available & cpus_in_mask)).bit_count() < request:
                continue
            found.append(mask)
        hints: list[TopologyHint] = []
        for mask in found:
            preferred = mask.count() == min_size
            if not preferred and self.options.align_by_socket:
                preferred = self._socket_aligned(mask, min_size)
            hints.append(TopologyHint(mask, preferred))
        return hints

    def _socket_aligned(self, mask: NUMAMask, min_size: int) -> bool:
        per_socket = self.topo.num_numa_nodes // self.topo.num_sockets if self.topo.num_sockets else 0
        if per_socket == 0:
            return False
        min_sockets = (min_size + per_socket - 1) // per_socket
        return len(self.topo.sockets_in_numas(mask.ids())) == min_sockets

    def container_hints(
        self, state: CPUState, pod: PodRequest, container: ContainerRequest, qos: str
    ) -> dict[str, list[TopologyHint]] | None:
        requested = self.guaranteed_cpus(qos, container)
        if requested == 0 or pod.uses_pod_level_resources:
            return None
        allocated = state.get(pod.key, container.name)
        if allocated is not None:
            if allocated.bit_count() != requested:
                return {RESOURCE: []}
            return {RESOURCE: self.generate_hints(allocated, 0, requested)}
        reusable = state.reusable.get(pod.key, 0)
        return {RESOURCE: self.generate_hints(self.available(state), reusable, requested)}

    def pod_hints(self, state: CPUState, pod: PodRequest, qos: str) -> dict[str, list[TopologyHint]] | None:
        requested = self.pod_guaranteed_cpus(qos, pod)
        if requested == 0 or pod.uses_pod_level_resources:
            return None
        assigned = 0
        for c in pod.all_containers():
            allocated = state.get(pod.key, c.name)
            if allocated is not None:
                if allocated.bit_count() != self.guaranteed_cpus(qos, c):
                    return {RESOURCE: []}
                assigned |= allocated
        if assigned.bit_count() == requested:
            return {RESOURCE: self.generate_hints(assigned, 0, requested)}
        reusable = state.reusable.get(pod.key, 0) | assigned
        return {RESOURCE: self.generate_hints(self.available(state), reusable, requested)}
