"""Device manager topology hints and aligned device selection (GPUs are devices of a resource).

Follows kubernetes v1.35 pkg/kubelet/cm/devicemanager/{topology_hints.go, manager.go}: devices
without NUMA information give 'no preference'; hints need all reusable devices in the mask;
preferred = minimal mask holding enough registered devices; devicesToAllocate takes aligned
devices first. Go iterates sets in random order; this model uses device order (GPU index), and
the device plugin's GetPreferredAllocation answer can be supplied explicitly.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from kubegpu.errors import ModelError
from kubegpu.kubelet.bitmask import NUMAMask, iterate_masks
from kubegpu.kubelet.hints import TopologyHint
from kubegpu.kubelet.pod import ContainerRequest, PodRequest, aggregate

NODE_WITHOUT_TOPOLOGY = -1


@dataclass(frozen=True)
class Device:
    """A healthy device: its id and NUMA nodes (None or () = no topology information)."""

    id: str
    numa: tuple[int, ...] | None = None

    @property
    def has_topology(self) -> bool:
        return bool(self.numa)


@dataclass
class DeviceState:
    """Allocated devices per resource, per pod/container, and init-container devices to reuse."""

    allocated: dict[str, set[str]] = field(default_factory=dict)
    pod_devices: dict[str, dict[str, dict[str, tuple[str, ...]]]] = field(default_factory=dict)
    reuse: dict[str, dict[str, set[str]]] = field(default_factory=dict)

    def copy(self) -> DeviceState:
        return DeviceState(
            {r: set(d) for r, d in self.allocated.items()},
            {p: {c: dict(rs) for c, rs in cs.items()} for p, cs in self.pod_devices.items()},
            {p: {r: set(d) for r, d in rs.items()} for p, rs in self.reuse.items()},
        )

    def container_devices(self, pod: str, container: str, resource: str) -> tuple[str, ...]:
        return self.pod_devices.get(pod, {}).get(container, {}).get(resource, ())

    def pod_resource_devices(self, pod: str, resource: str) -> set[str]:
        out: set[str] = set()
        for resources in self.pod_devices.get(pod, {}).values():
            out.update(resources.get(resource, ()))
        return out


class DeviceManager:
    """The registered devices of a node (read-only) and the functions over a DeviceState."""

    def __init__(self, devices: Mapping[str, Sequence[Device]], numa_nodes: Sequence[int]) -> None:
        self.devices = {r: tuple(ds) for r, ds in devices.items()}
        self.by_id = {r: {d.id: d for d in ds} for r, ds in self.devices.items()}
        self.order = {r: {d.id: i for i, d in enumerate(ds)} for r, ds in self.devices.items()}
        self.numa_nodes = tuple(sorted(numa_nodes))
        self.numa_bits = {r: {d.id: NUMAMask.of(d.numa or ()).bits for d in ds} for r, ds in self.devices.items()}
        self.aligned_resource = {r: any(d.has_topology for d in ds) for r, ds in self.devices.items()}
        self._masks = tuple(iterate_masks(self.numa_nodes))

    def is_device_resource(self, resource: str) -> bool:
        return resource in self.devices

    def _sorted(self, resource: str, ids: set[str] | Sequence[str]) -> list[str]:
        order = self.order[resource]
        return sorted(ids, key=lambda d: order.get(d, len(order)))

    def available(self, state: DeviceState, resource: str) -> set[str]:
        return set(self.by_id[resource]) - state.allocated.get(resource, set())

    # -- requests ----------------------------------------------------------------------
    def container_request(self, container: ContainerRequest) -> dict[str, int]:
        return {r: n for r, n in sorted(container.limits.items()) if self.is_device_resource(r)}

    def pod_request(self, pod: PodRequest) -> dict[str, int]:
        """PodLimits (without overhead) of the device resources, as getPodDeviceRequest takes them."""
        return dict(sorted(aggregate(pod, self.container_request).items()))

    # -- hints -------------------------------------------------------------------------
    def _in_mask(self, mask: NUMAMask, device: Device) -> bool:
        return device.numa is not None and mask.any_set(device.numa)

    def generate_hints(
        self, resource: str, available: set[str], reusable: set[str], request: int
    ) -> list[TopologyHint]:
        bits = self.numa_bits[resource]
        by_id = self.by_id[resource]
        all_bits = list(bits.values())
        avail_bits = [bits[d] for d in available]
        min_size = len(self.numa_nodes)
        found: list[NUMAMask] = []
        for mask in self._masks:
            m = mask.bits
            size = m.bit_count()
            if size < min_size and sum(1 for b in all_bits if b & m) >= request:
                min_size = size
            matching = 0
            ok = True
            for dev_id in reusable:
                if by_id[dev_id].numa is None:
                    continue
                if not bits[dev_id] & m:
                    ok = False
                    break
                matching += 1
            if not ok:
                continue
            matching += sum(1 for b in avail_bits if b & m)
            if matching >= request:
                found.append(mask)
        return [TopologyHint(m, m.count() == min_size) for m in found]

    def container_hints(
        self, state: DeviceState, pod: PodRequest, container: ContainerRequest
    ) -> dict[str, list[TopologyHint] | None]:
        hints: dict[str, list[TopologyHint] | None] = {}
        for resource, requested in self.container_request(container).items():
            if not self.aligned_resource[resource]:
                hints[resource] = None
                continue
            allocated = state.container_devices(pod.key, container.name, resource)
            if allocated:
                if len(allocated) != requested:
                    hints[resource] = []
                    continue
                hints[resource] = self.generate_hints(resource, set(allocated), set(), requested)
                continue
            available = self.available(state, resource)
            reusable = state.reuse.get(pod.key, {}).get(resource, set())
            if len(available | reusable) < requested:
                hints[resource] = []
                continue
            hints[resource] = self.generate_hints(resource, available, reusable, requested)
        return hints

    def pod_hints(self, state: DeviceState, pod: PodRequest) -> dict[str, list[TopologyHint] | None]:
        hints: dict[str, list[TopologyHint] | None] = {}
        for resource, requested in self.pod_request(pod).items():
            if not self.aligned_resource[resource]:
                hints[resource] = None
                continue
            allocated = state.pod_resource_devices(pod.key, resource)
            if allocated:
                if len(allocated) != requested:
                    hints[resource] = []
                    continue
                hints[resource] = self.generate_hints(resource, allocated, set(), requested)
                continue
            available = self.available(state, resource)
            if len(available) < requested:
                hints[resource] = []
                continue
            hints[resource] = self.generate_hints(resource, available, set(), requested)
        return hints

    # -- allocation --------------------------------------------------------------------
    def filter_by_affinity(
        self, resource: str, available: set[str], affinity: NUMAMask | None
    ) -> tuple[list[str], list[str], list[str]]:
        """(aligned, unaligned, no-topology) devices; hint nodes first, fuller nodes later."""
        if not self.aligned_resource[resource] or affinity is None:
            return [], [], self._sorted(resource, available)
        per_node: dict[int, set[str]] = {}
        for dev_id in available:
            dev = self.by_id[resource][dev_id]
            for node in dev.numa or (NODE_WITHOUT_TOPOLOGY,):
                per_node.setdefault(node, set()).add(dev_id)

        def key(node: int) -> tuple[int, int, int]:
            if affinity.is_set(node):
                return (0, len(per_node[node]), node)
            if node == NODE_WITHOUT_TOPOLOGY:
                return (2, 0, node)
            return (1, len(per_node[node]), node)

        nodes = sorted(per_node, key=key)
        aligned: list[str] = []
        unaligned: list[str] = []
        without: list[str] = []
        for dev_id in self._sorted(resource, available):
            for node in nodes:
                if dev_id in per_node[node]:
                    if node == NODE_WITHOUT_TOPOLOGY:
                        without.append(dev_id)
                    elif affinity.is_set(node):
                        aligned.append(dev_id)
                    else:
                        unaligned.append(dev_id)
                    break
        return aligned, unaligned, without

    def devices_to_allocate(
        self,
        state: DeviceState,
        pod: str,
        container: str,
        resource: str,
        required: int,
        reusable: set[str],
        affinity: NUMAMask | None,
        preferred: Sequence[str] | None = None,
    ) -> list[str]:
        """devicesToAllocate; `preferred` is the device plugin's GetPreferredAllocation answer."""
        existing = state.container_devices(pod, container, resource)
        needed = required
        if existing:
            needed -= len(existing)
            if needed != 0:
                raise ModelError(
                    f'pod "{pod}" container "{container}" changed request for resource '
                    f'"{resource}" from {len(existing)} to {required}'
                )
            return []
        if resource not in self.devices:
            raise ModelError(f"can't allocate unregistered device {resource}")
        chosen: list[str] = []

        def take_from(candidates: Sequence[str]) -> bool:
            nonlocal needed
            for dev_id in candidates:
                if dev_id in chosen:
                    continue
                chosen.append(dev_id)
                needed -= 1
                if needed == 0:
                    return True
            return False

        if take_from(self._sorted(resource, reusable)):
            return chosen
        available = self.available(state, resource) - set(chosen)
        if len(available) < needed:
            raise ModelError(
                f"requested number of devices unavailable for {resource}. Requested: {needed}, "
                f"Available: {len(available)}"
            )
        aligned, unaligned, without = self.filter_by_affinity(resource, available, affinity)
        plugin = list(preferred or ())
        if needed < len(aligned):
            aligned_set = set(aligned)
            if take_from([d for d in plugin if d in aligned_set]) or take_from(aligned):
                return chosen
            raise ModelError(
                f"unexpectedly allocated less resources than required. Requested: {required}, Got: {required - needed}"
            )
        if take_from(aligned):
            return chosen
        if take_from([d for d in plugin if d in available]):
            return chosen
        if take_from(unaligned) or take_from(without):
            return chosen
        raise ModelError(
            f"unexpectedly allocated less resources than required. Requested: {required}, Got: {required - needed}"
        )

    def allocate(
        self,
        state: DeviceState,
        pod: PodRequest,
        container: ContainerRequest,
        affinity: NUMAMask | None,
    ) -> dict[str, tuple[str, ...]]:
        """Allocate every device resource of the container; init devices become reusable."""
        for other in [p for p in state.reuse if p != pod.key]:
            del state.reuse[other]
        reuse = state.reuse.setdefault(pod.key, {})
        result: dict[str, tuple[str, ...]] = {}
        for resource, needed in self.container_request(container).items():
            chosen = self.devices_to_allocate(
                state,
                pod.key,
                container.name,
                resource,
                needed,
                reuse.get(resource, set()),
                affinity,
            )
            if not chosen:
                existing = state.container_devices(pod.key, container.name, resource)
                if existing:
                    result[resource] = existing
                continue
            state.allocated.setdefault(resource, set()).update(chosen)
            ordered = tuple(self._sorted(resource, chosen))
            state.pod_devices.setdefault(pod.key, {}).setdefault(container.name, {})[resource] = ordered
            result[resource] = ordered
        if container.kind == "init":
            for resource, ids in result.items():
                reuse.setdefault(resource, set()).update(ids)
        else:
            for resource, ids in result.items():
                reuse.setdefault(resource, set()).difference_update(ids)
        return result

    @staticmethod
    def remove_pod(state: DeviceState, pod_key: str) -> None:
        """UpdateAllocatedDevices after the pod is gone: drop its devices, recount the allocated ones."""
        state.reuse.pop(pod_key, None)
        if state.pod_devices.pop(pod_key, None) is None:
            return
        allocated: dict[str, set[str]] = {}
        for containers in state.pod_devices.values():
            for resources in containers.values():
                for resource, ids in resources.items():
                    allocated.setdefault(resource, set()).update(ids)
        state.allocated = {r: allocated.get(r, set()) for r in state.allocated}
