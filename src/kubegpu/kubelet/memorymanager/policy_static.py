"""The Static memory manager policy: NUMA hints for memory/hugepages, groups, and allocation.

Follows kubernetes v1.35 pkg/kubelet/cm/memorymanager/policy_static.go: allocatable per NUMA node
(total - reservedMemory - hugepages), calculateHints with the multi-NUMA group rules, preferred =
minimal capacity-sized masks, Allocate with default/extended hints and init-container reuse
(updateInitContainersMemoryBlocks shrinks init containers' blocks by what later containers reuse, so
that the blocks of a pod add up to what it holds) and RemoveContainer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from kubegpu.errors import ModelError
from kubegpu.kubelet.bitmask import NUMAMask, iterate_masks
from kubegpu.kubelet.hints import TopologyHint
from kubegpu.kubelet.memorymanager.reserved import MEMORY, Amount, is_memory_type
from kubegpu.kubelet.pod import KIND_INIT, ContainerRequest, PodRequest, aggregate
from kubegpu.kubelet.qos import GUARANTEED


@dataclass
class MemoryTable:
    """One memory type on one NUMA node."""

    total: int
    system_reserved: int
    allocatable: int
    reserved: int
    free: int


@dataclass
class NUMANodeState:
    """A NUMA node: assignment count, the group (cells) it is used with, tables per type."""

    assignments: int
    cells: tuple[int, ...]
    tables: dict[str, MemoryTable]

    def copy(self) -> NUMANodeState:
        tables = {
            k: MemoryTable(v.total, v.system_reserved, v.allocatable, v.reserved, v.free)
            for k, v in self.tables.items()
        }
        return NUMANodeState(self.assignments, self.cells, tables)


@dataclass
class MemoryBlock:
    """What a container got: the NUMA group, size and type, and bytes booked per node."""

    numa: tuple[int, ...]
    size: int
    type: str
    per_node: dict[int, int] = field(default_factory=dict)


@dataclass
class MemoryState:
    """Machine state per NUMA node, blocks per pod/container, init-container reusable memory."""

    machine: dict[int, NUMANodeState]
    blocks: dict[str, dict[str, list[MemoryBlock]]] = field(default_factory=dict)
    reusable: dict[str, dict[NUMAMask, dict[str, int]]] = field(default_factory=dict)

    def copy(self) -> MemoryState:
        return MemoryState(
            {n: s.copy() for n, s in self.machine.items()},
            {p: dict(cs) for p, cs in self.blocks.items()},
            {p: {m: dict(t) for m, t in r.items()} for p, r in self.reusable.items()},
        )


class StaticMemoryPolicy:
    """Static policy over a node's NUMA memory; needs some reserved `memory`."""

    def __init__(
        self,
        numa_memory: Mapping[int, int],
        numa_hugepages: Mapping[int, Mapping[str, int]],
        reserved: Mapping[int, Mapping[str, Amount]],
    ) -> None:
        total_reserved = sum(t.get(MEMORY, Amount(0)).value for t in reserved.values())
        if total_reserved <= 0:
            raise ModelError("[memorymanager] you should specify the system reserved memory")
        self.numa_nodes = tuple(sorted(numa_memory))
        self.numa_memory = dict(numa_memory)
        self.numa_hugepages = {n: dict(numa_hugepages.get(n, {})) for n in self.numa_nodes}
        self.reserved = {n: {k: v.value for k, v in reserved.get(n, {}).items()} for n in self.numa_nodes}
        self._mask_bits = tuple((m, m.ids()) for m in iterate_masks(self.numa_nodes))

    def initial_state(self) -> MemoryState:
        machine: dict[int, NUMANodeState] = {}
        for n in self.numa_nodes:
            tables: dict[str, MemoryTable] = {}
            huge_total = 0
            for resource, total in self.numa_hugepages[n].items():
                res = self.reserved[n].get(resource, 0)
                tables[resource] = MemoryTable(total, res, total - res, 0, total - res)
                huge_total += total
            res = self.reserved[n].get(MEMORY, 0)
            allocatable = self.numa_memory[n] - res - huge_total
            tables[MEMORY] = MemoryTable(self.numa_memory[n], res, allocatable, 0, allocatable)
            machine[n] = NUMANodeState(0, (n,), tables)
        return MemoryState(machine)

    # -- requests ----------------------------------------------------------------------
    @staticmethod
    def container_request(container: ContainerRequest) -> dict[str, int]:
        return {r: v for r, v in sorted(container.requests.items()) if is_memory_type(r)}

    def pod_request(self, pod: PodRequest) -> dict[str, int]:
        """getPodRequestedResources: the pod model's summation, for the resources the app containers request."""
        total = aggregate(pod, self.container_request)
        return {r: total[r] for r in sorted({r for c in pod.containers for r in self.container_request(c)})}

    # -- hints -------------------------------------------------------------------------
    def _reusable(self, state: MemoryState, pod: PodRequest, mask: NUMAMask, resource: str) -> int:
        return state.reusable.get(pod.key, {}).get(mask, {}).get(resource, 0)

    def calculate_hints(
        self, state: MemoryState, pod: PodRequest, requested: Mapping[str, int]
    ) -> dict[str, list[TopologyHint]]:
        """calculateHints: feasible masks for every requested type; preferred = minimal size."""
        machine = state.machine
        reusable = state.reusable.get(pod.key, {})
        wanted = list(requested.items())
        min_size = len(self.numa_nodes)
        found: list[NUMAMask] = []
        for mask, bits in self._mask_bits:
            nodes = [machine[n] for n in bits]
            fits = True
            for r, q in wanted:
                total = 0
                for node in nodes:
                    table = node.tables.get(r)
                    if table is not None:
                        total += table.allocatable
                if total < q:
                    fits = False
                    break
            if not fits:
                continue
            min_size = min(min_size, len(bits))
            if len(bits) == 1:
                if len(nodes[0].cells) > 1:
                    continue
            elif any(node.assignments > 0 and (len(node.cells) == 1 or set(node.cells) != set(bits)) for node in nodes):
                continue
            extra = reusable.get(mask, {})
            for r, q in wanted:
                free = extra.get(r, 0)
                for node in nodes:
                    table = node.tables.get(r)
                    if table is not None:
                        free += table.free
                if free < q:
                    fits = False
                    break
            if fits:
                found.append(mask)
        if not found:
            return {}
        hints = [TopologyHint(m, m.count() == min_size) for m in found]
        return {r: list(hints) for r in requested}

    def container_hints(
        self, state: MemoryState, pod: PodRequest, container: ContainerRequest, qos: str
    ) -> dict[str, list[TopologyHint]] | None:
        if qos != GUARANTEED or pod.uses_pod_level_resources:
            return None
        requested = self.container_request(container)
        blocks = state.blocks.get(pod.key, {}).get(container.name)
        if blocks is not None:
            return self._regenerate(blocks, requested)
        return self.calculate_hints(state, pod, requested)

    def pod_hints(self, state: MemoryState, pod: PodRequest, qos: str) -> dict[str, list[TopologyHint]] | None:
        if qos != GUARANTEED or pod.uses_pod_level_resources:
            return None
        requested = self.pod_request(pod)
        for c in pod.all_containers():
            blocks = state.blocks.get(pod.key, {}).get(c.name)
            if blocks is not None:
                return self._regenerate(blocks, requested)
        return self.calculate_hints(state, pod, requested)

    @staticmethod
    def _regenerate(
        blocks: Sequence[MemoryBlock], requested: Mapping[str, int]
    ) -> dict[str, list[TopologyHint]] | None:
        """regenerateHints: the blocks' masks as preferred hints; any mismatch = no preference."""
        if len(blocks) != len(requested):
            return None
        hints: dict[str, list[TopologyHint]] = {r: [] for r in requested}
        for block in blocks:
            if block.type not in requested or requested[block.type] != block.size:
                return None
            hints[block.type].append(TopologyHint(NUMAMask.of(block.numa), True))
        return hints

    # -- allocation --------------------------------------------------------------------
    @staticmethod
    def _best(hints: Sequence[TopologyHint]) -> TopologyHint:
        best: TopologyHint | None = None
        for hint in hints:
            if best is None:
                best = hint
                continue
            if hint.preferred and not best.preferred:
                best = hint
                continue
            assert hint.affinity is not None and best.affinity is not None
            if hint.preferred == best.preferred and hint.affinity.is_narrower_than(best.affinity):
                best = hint
        assert best is not None
        return best

    def allocate(
        self,
        state: MemoryState,
        pod: PodRequest,
        container: ContainerRequest,
        qos: str,
        hint: TopologyHint,
    ) -> list[MemoryBlock]:
        """Book the container's memory on the hint's NUMA group; a ModelError rejects the pod."""
        if qos != GUARANTEED or pod.uses_pod_level_resources:
            return []
        requested = self.container_request(container)
        if not requested:
            return []
        existing = state.blocks.get(pod.key, {}).get(container.name)
        if existing is not None:
            return existing
        best = self._placement(state, pod, requested, hint)
        assert best.affinity is not None
        bits = best.affinity.ids()
        machine = state.machine
        if len(bits) > 1:
            for n in bits:
                node = machine[n]
                if node.assignments and (len(node.cells) == 1 or set(node.cells) != set(bits)):
                    raise ModelError("[memorymanager] preferred hint violates NUMA node allocation")
        blocks = [self._book(state, pod, best.affinity, bits, resource, size) for resource, size in requested.items()]
        self._update_reusable(state, pod, container, blocks)
        state.blocks.setdefault(pod.key, {})[container.name] = blocks
        self._update_init_container_blocks(state, pod, container, blocks)
        return blocks

    def _placement(
        self, state: MemoryState, pod: PodRequest, requested: dict[str, int], hint: TopologyHint
    ) -> TopologyHint:
        """The hint to allocate on: the merged one, the default when it has no affinity, extended when its NUMA
        nodes cannot hold the request (ModelError when no hint will do)."""
        best = hint
        if best.affinity is None:
            hints = self.calculate_hints(state, pod, requested)
            if not hints:
                raise ModelError(
                    "[memorymanager] failed to get the default NUMA affinity, no NUMA nodes with "
                    "enough memory is available"
                )
            default = self._best(hints.get(MEMORY) or next(iter(hints.values())))
            if not default.preferred and best.preferred:
                raise ModelError("[memorymanager] failed to find the default preferred hint")
            best = default
        assert best.affinity is not None
        if not self._satisfies(state, best.affinity, requested):
            hints = self.calculate_hints(state, pod, requested)
            pool = hints.get(MEMORY) or (next(iter(hints.values())) if hints else [])
            within = [h for h in pool if h.affinity is not None and h.affinity.contains(best.affinity)]
            if not within:
                raise ModelError("[memorymanager] failed to find NUMA nodes to extend the current topology hint")
            extended = self._best(within)
            if not extended.preferred and best.preferred:
                raise ModelError("[memorymanager] failed to find the extended preferred hint")
            best = extended
        return best

    def _book(
        self, state: MemoryState, pod: PodRequest, affinity: NUMAMask, bits: tuple[int, ...], resource: str, size: int
    ) -> MemoryBlock:
        """One resource's block on the NUMA group `bits`: what the pod's reusable memory does not cover is taken
        from each node's free memory in turn."""
        machine = state.machine
        block = MemoryBlock(bits, size, resource)
        reusable = self._reusable(state, pod, affinity, resource)
        remaining = 0 if reusable >= size else size - reusable
        for n in bits:
            node = machine[n]
            node.assignments += 1
            node.cells = bits
            if remaining == 0:
                continue
            table = node.tables.get(resource)
            if table is None or table.free <= 0:
                continue
            taken = min(table.free, remaining)
            table.free -= taken
            table.reserved += taken
            remaining -= taken
            block.per_node[n] = block.per_node.get(n, 0) + taken
        return block

    @staticmethod
    def _update_init_container_blocks(
        state: MemoryState, pod: PodRequest, container: ContainerRequest, blocks: Sequence[MemoryBlock]
    ) -> None:
        """updateInitContainersMemoryBlocks: the earlier regular init containers' blocks of the same type and
        NUMA group give up what this container reused, so a pod's blocks add up to what it holds (a block may
        reach size 0). Blocks are replaced, never changed in place: admission attempts share them."""
        pod_blocks = state.blocks.get(pod.key, {})
        for block in blocks:
            size = block.size
            for init in pod.init_containers:
                if init.name == container.name or size == 0:
                    break
                if init.restartable or not pod_blocks.get(init.name):
                    continue
                updated: list[MemoryBlock] = []
                for old in pod_blocks[init.name]:
                    if old.size == 0 or old.type != block.type or set(old.numa) != set(block.numa):
                        updated.append(old)
                        continue
                    taken = min(old.size, size)
                    size -= taken
                    updated.append(replace(old, size=old.size - taken, per_node=dict(old.per_node)))
                pod_blocks[init.name] = updated

    def remove_container(self, state: MemoryState, pod_key: str, name: str) -> None:
        """RemoveContainer: drop the container's blocks and give their sizes back to the NUMA nodes in the
        blocks' order (as reserved memory allows); a node with no assignment left leaves its group."""
        containers = state.blocks.get(pod_key)
        if not containers or name not in containers:
            return
        blocks = containers.pop(name)
        if not containers:
            del state.blocks[pod_key]
        for block in blocks:
            released = block.size
            for n in block.numa:
                node = state.machine[n]
                node.assignments -= 1
                if node.assignments == 0:
                    node.cells = (n,)
                if released == 0:
                    continue
                table = node.tables.get(block.type)
                if table is None or table.reserved == 0:
                    continue
                freed = min(table.reserved, released)
                table.reserved -= freed
                table.free += freed
                released -= freed

    def remove_pod(self, state: MemoryState, pod: PodRequest) -> None:
        """Remove every container of the pod (the kubelet's RemoveContainer for each) and its reusable memory."""
        for c in pod.all_containers():
            self.remove_container(state, pod.key, c.name)
        state.reusable.pop(pod.key, None)

    def _satisfies(self, state: MemoryState, mask: NUMAMask, requested: Mapping[str, int]) -> bool:
        for resource, size in requested.items():
            free = sum(
                state.machine[n].tables[resource].free for n in mask.ids() if resource in state.machine[n].tables
            )
            if free < size:
                return False
        return True

    @staticmethod
    def _update_reusable(
        state: MemoryState,
        pod: PodRequest,
        container: ContainerRequest,
        blocks: Sequence[MemoryBlock],
    ) -> None:
        for other in [p for p in state.reusable if p != pod.key]:
            del state.reusable[other]
        if container.kind == KIND_INIT:
            table = state.reusable.setdefault(pod.key, {})
            for block in blocks:
                mask = NUMAMask.of(block.numa)
                entry = table.setdefault(mask, {})
                entry[block.type] = max(entry.get(block.type, 0), block.size)
            return
        for block in blocks:
            mask = NUMAMask.of(block.numa)
            left = state.reusable.get(pod.key, {}).get(mask)
            if left and left.get(block.type, 0):
                left[block.type] = max(0, left[block.type] - block.size)
