"""One node's kubelet admission: start-up checks, then the Topology Manager over the managers.

Follows kubernetes v1.35: container-manager start-up order (topology, device, CPU, memory
manager), TopologyManager scopes (container: one merge per container; pod: one merge for the
pod), provider/allocation order device -> CPU -> memory, GetPodAdmitResult reasons, and then the
predicate admit handler's node-resources check. A rejected pod leaves the state unchanged; `release`
removes an admitted pod as the kubelet does when it is deleted (each manager's RemoveContainer).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from kubegpu.errors import ModelError
from kubegpu.kubelet.admission import (
    Admission,
    ContainerAssignment,
    ProviderAnswer,
    TraceStep,
    mask_ids,
)
from kubegpu.kubelet.config import KubeletConfig, KubeletStartupError
from kubegpu.kubelet.cpumanager import cpuset
from kubegpu.kubelet.cpumanager.manager import num_reserved_cpus
from kubegpu.kubelet.cpumanager.options import parse_options, validate_for_machine
from kubegpu.kubelet.cpumanager.policy_static import CPUState, StaticPolicy
from kubegpu.kubelet.cpumanager.topology import CPUTopology
from kubegpu.kubelet.devicemanager.manager import Device, DeviceManager, DeviceState
from kubegpu.kubelet.features import POD_LEVEL_RESOURCES
from kubegpu.kubelet.hints import ProviderHints, TopologyHint
from kubegpu.kubelet.memorymanager.policy_static import MemoryState, StaticMemoryPolicy
from kubegpu.kubelet.memorymanager.reserved import (
    HUGEPAGES_PREFIX,
    Amount,
    convert_reserved,
    is_memory_type,
    validate_reserved_memory,
)
from kubegpu.kubelet.pod import CPU, MEMORY, ContainerRequest, PodRequest
from kubegpu.kubelet.providers import (
    CPU_MANAGER,
    MEMORY_MANAGER,
    CPUProvider,
    DeviceProvider,
    HintProvider,
    MemoryProvider,
)
from kubegpu.kubelet.qos import qos_class
from kubegpu.kubelet.reasons import (
    Rejection,
    TopologyAffinityError,
    insufficient_resource,
    rejection_for,
)
from kubegpu.kubelet.topologymanager.manager import SCOPE_POD, new_policy
from kubegpu.kubelet.topologymanager.policy import (
    POLICY_BEST_EFFORT,
    POLICY_NONE,
    POLICY_SINGLE_NUMA_NODE,
    MergeResult,
    Policy,
)
from kubegpu.topology.model import NodeTopology
from kubegpu.units.quantity import parse_quantity

EMPTY_HINT = TopologyHint(None, False)


def _hugepages_key(size: str) -> str:
    return size if size.startswith(HUGEPAGES_PREFIX) else HUGEPAGES_PREFIX + size


@dataclass(frozen=True)
class _Held:
    """An admitted pod and the node resources it counts against (for release)."""

    pod: PodRequest
    used: Mapping[str, int]


class NodeState:
    """A node's allocation state under one kubelet configuration; `admit` adds pods, `release` removes them."""

    def __init__(self, node: NodeTopology, config: KubeletConfig) -> None:
        self.node = node
        self.config = config
        self.gates = config.gates
        # The kubelet reads reservedSystemCPUs (and refuses CPUs the node does not have) before it creates
        # the container manager, whatever the CPU manager policy.
        config.reserved_cpus(node)
        self.policy, self.scope = self._topology_manager()
        self.devices = self._device_manager()
        self._capacity = self._node_capacity()
        self._reservation = config.allocatable_reservation(
            {r: a for r, a in self._capacity.items() if is_memory_type(r)}
        )
        self._cpu_reserved_millis = self._cpu_reservation()
        self.cpu: StaticPolicy | None = self._cpu_manager()
        self.memory: StaticMemoryPolicy | None = self._memory_manager()
        # The Topology Manager's hint providers, in the kubelet's order: device, CPU, memory manager.
        providers: list[HintProvider] = [DeviceProvider(self.devices, DeviceState())]
        if self.cpu is not None:
            cpu_state = CPUState()
            self.cpu.start(cpu_state)
            providers.append(CPUProvider(self.cpu, cpu_state))
        if self.memory is not None:
            providers.append(MemoryProvider(self.memory, self.memory.initial_state()))
        self.providers: tuple[HintProvider, ...] = tuple(providers)
        self.allocatable = self._allocatable()
        self.used: dict[str, int] = {}
        self.pods: list[str] = []
        self._keys: set[str] = set()
        self._held: dict[str, _Held] = {}

    # -- start-up ------------------------------------------------------------------------
    def _fail(self, component: str, message: str) -> KubeletStartupError:
        return KubeletStartupError(component, message, file=self.config.source)

    def _topology_manager(self) -> tuple[Policy, str]:
        cfg = self.config
        distances = {n.id: dict(n.distances) for n in self.node.numa_nodes if n.distances}
        try:
            policy, _ = new_policy(
                cfg.topology_manager_policy,
                cfg.topology_manager_scope,
                self.node.numa_ids,
                distances or None,
                cfg.topology_manager_policy_options,
                self.gates,
            )
        except ModelError as err:
            raise self._fail("topology manager", err.message) from err
        return policy, cfg.topology_manager_scope

    def _device_manager(self) -> DeviceManager:
        devices: dict[str, list[Device]] = {}
        for gpu in self.node.gpus:
            numa = None if gpu.numa_node is None else (gpu.numa_node,)
            devices.setdefault(gpu.resource_name, []).append(Device(str(gpu.index), numa))
        return DeviceManager(devices, self.node.numa_ids)

    def _node_capacity(self) -> dict[str, Amount]:
        capacity = {MEMORY: Amount(sum(n.memory_bytes for n in self.node.numa_nodes), True)}
        for numa in self.node.numa_nodes:
            for size, total in numa.hugepages_bytes.items():
                key = _hugepages_key(size)
                capacity[key] = capacity.get(key, Amount(0, True)) + Amount(total, True)
        return capacity

    def _cpu_reservation(self) -> int | None:
        kube, system = self.config.effective_reserved()
        total, present = 0, False
        for table in (system, kube):
            if CPU in table:
                total += parse_quantity(table[CPU]).millis
                present = present or parse_quantity(table[CPU]).millis != 0
        return total if present else None

    def _cpu_manager(self) -> StaticPolicy | None:
        cfg = self.config
        if cfg.cpu_manager_policy == "none":
            if cfg.cpu_manager_policy_options:  # NewNonePolicy refuses any option
                shown = " ".join(f"{k}:{v}" for k, v in sorted(cfg.cpu_manager_policy_options.items()))
                raise self._fail(
                    CPU_MANAGER, f"new none policy error: None policy: received unsupported options=map[{shown}]"
                )
            return None
        if cfg.cpu_manager_policy != "static":
            raise self._fail(CPU_MANAGER, f'unknown policy: "{cfg.cpu_manager_policy}"')
        reserved = cfg.reserved_cpus(self.node)
        reservation = {} if self._cpu_reserved_millis is None else {CPU: self._cpu_reserved_millis}
        try:
            num_reserved = num_reserved_cpus(len(self.node.cpus), reservation)
        except ModelError as err:
            raise self._fail(CPU_MANAGER, err.message) from err
        topo = CPUTopology.from_node(self.node)
        try:
            options = parse_options(cfg.cpu_manager_policy_options, self.gates)
            validate_for_machine(options, topo.num_sockets, topo.num_numa_nodes, cfg.topology_manager_policy)
            return StaticPolicy(topo, num_reserved, reserved, options)
        except ModelError as err:
            raise self._fail(CPU_MANAGER, f"new static policy error: {err.message}") from err

    def _memory_manager(self) -> StaticMemoryPolicy | None:
        cfg = self.config
        if cfg.memory_manager_policy == "None":
            return None
        if cfg.memory_manager_policy != "Static":
            raise self._fail(MEMORY_MANAGER, f'unknown policy: "{cfg.memory_manager_policy}"')
        numa_ids = [n.id for n in self.node.numa_nodes]
        try:
            validate_reserved_memory(numa_ids, self._reservation, cfg.reserved_memory)
            reserved = convert_reserved(numa_ids, cfg.reserved_memory)
            hugepages = {
                n.id: {_hugepages_key(k): v for k, v in n.hugepages_bytes.items()} for n in self.node.numa_nodes
            }
            return StaticMemoryPolicy({n.id: n.memory_bytes for n in self.node.numa_nodes}, hugepages, reserved)
        except ModelError as err:
            raise self._fail(MEMORY_MANAGER, err.message) from err

    def _allocatable(self) -> dict[str, int]:
        out = {
            "pods": self.config.max_pods,
            CPU: len(self.node.cpus) * 1000 - (self._cpu_reserved_millis or 0),
        }
        for resource, cap in self._capacity.items():
            out[resource] = cap.value - self._reservation.get(resource, Amount(0)).value
        for resource, devices in self.devices.devices.items():
            out[resource] = len(devices)
        return out

    # -- queries -------------------------------------------------------------------------
    def copy(self) -> NodeState:
        twin = object.__new__(NodeState)
        twin.__dict__.update(self.__dict__)
        twin.providers = tuple(p.copy() for p in self.providers)
        twin.used = dict(self.used)
        twin.pods = list(self.pods)
        twin._keys = set(self._keys)
        twin._held = dict(self._held)
        return twin

    # The managers' states (read-only views for reports and tests).
    @property
    def dev_state(self) -> DeviceState:
        return next(p.state for p in self.providers if isinstance(p, DeviceProvider))

    @property
    def cpu_state(self) -> CPUState:
        return next((p.state for p in self.providers if isinstance(p, CPUProvider)), CPUState())

    @property
    def mem_state(self) -> MemoryState:
        return next((p.state for p in self.providers if isinstance(p, MemoryProvider)), MemoryState({}))

    def exclusive_cpus(self) -> dict[str, tuple[int, ...]]:
        """'pod/container' -> exclusive CPU ids, for every assignment in the CPU state."""
        return {
            f"{pod}/{name}": cpuset.ids_of(bits)
            for pod, containers in self.cpu_state.assignments.items()
            for name, bits in containers.items()
        }

    def free_gpus(self) -> dict[str, tuple[str, ...]]:
        return {
            r: tuple(self.devices._sorted(r, self.devices.available(self.dev_state, r))) for r in self.devices.devices
        }

    @property
    def reserved_cpus(self) -> tuple[int, ...]:
        return cpuset.ids_of(self.cpu.reserved) if self.cpu else ()

    # -- admission -----------------------------------------------------------------------
    def _key(self, pod: PodRequest) -> str:
        base = pod.key
        key, n = base, 1
        while key in self._keys:
            n += 1
            key = f"{base}#{n}"
        return key

    def admit(self, pod: PodRequest) -> Admission:
        """Admit or reject `pod` as the kubelet would; on success the state keeps them."""
        key = self._key(pod)
        if key != pod.key:
            pod = replace(pod, uid=key)
        qos = qos_class(pod, self.gates.enabled(POD_LEVEL_RESOURCES))
        run = _Run(self, pod, qos)
        for resource in pod.resource_names():
            if "/" in resource and resource not in self.allocatable:
                run.notes.append(
                    f"{resource} is not offered by this node: the kubelet drops unknown extended "
                    "resources at admission (the scheduler would not place the pod here)"
                )
        if self.policy.name == POLICY_NONE:
            run.notes.append("topology manager policy none: hints are not merged")
        rejection = run.execute()
        if rejection is None:
            rejection = self._fits(pod)
        if rejection is not None:
            return Admission(
                pod=pod.name,
                admitted=False,
                reason=rejection.reason,
                message=rejection.message,
                qos=qos,
                policy=self.policy.name,
                scope=self.scope,
                trace=tuple(run.trace),
                notes=tuple(run.notes),
            )
        self.providers = run.providers
        held = {resource: pod.effective(resource) for resource in self._fit_resources(pod)}
        held["pods"] = 1
        for resource, amount in held.items():
            self.used[resource] = self.used.get(resource, 0) + amount
        self.pods.append(pod.key)
        self._keys.add(pod.key)
        self._held[pod.key] = _Held(pod, held)
        return Admission(
            pod=pod.name,
            admitted=True,
            qos=qos,
            policy=self.policy.name,
            scope=self.scope,
            containers=tuple(run.assignments),
            trace=tuple(run.trace),
            notes=tuple(run.notes),
            pod_key=pod.key,
        )

    def release(self, key: str) -> bool:
        """Remove the admitted pod with this key (Admission.pod_key): every provider gives back what it
        allocated and the node's counts drop; False when no such pod is held."""
        held = self._held.pop(key, None)
        if held is None:
            return False
        for provider in self.providers:
            provider.release(held.pod)
        for resource, amount in held.used.items():
            self.used[resource] -= amount
        self.pods.remove(key)
        self._keys.discard(key)
        return True

    def _fit_resources(self, pod: PodRequest) -> list[str]:
        known = set(self.allocatable) - {"pods"}
        return [r for r in pod.resource_names() if r in known]

    def _fits(self, pod: PodRequest) -> Rejection | None:
        """The predicate admit handler: pods, cpu, memory, then the node's other resources."""
        pods_used = self.used.get("pods", 0)
        if pods_used + 1 > self.allocatable["pods"]:
            return insufficient_resource("pods", 1, pods_used, self.allocatable["pods"])
        order = sorted(self._fit_resources(pod), key=lambda r: (r != CPU, r != MEMORY, r))
        for resource in order:
            want = pod.effective(resource)
            used = self.used.get(resource, 0)
            if want and want > self.allocatable[resource] - used:
                return insufficient_resource(resource, want, used, self.allocatable[resource])
        return None


class _Run:
    """One admission attempt on copies of the manager states (committed only on success)."""

    def __init__(self, node: NodeState, pod: PodRequest, qos: str) -> None:
        self.node = node
        self.pod = pod
        self.qos = qos
        self.providers = tuple(p.copy() for p in node.providers)
        self.trace: list[TraceStep] = []
        self.notes: list[str] = []
        self.assignments: list[ContainerAssignment] = []

    def execute(self) -> Rejection | None:
        policy = self.node.policy
        containers = self.pod.all_containers()
        try:
            if policy.name == POLICY_NONE:
                for c in containers:
                    self.allocate(c, EMPTY_HINT)
                return None
            if self.node.scope == SCOPE_POD:
                answers = self.pod_answers()
                result = policy.merge([a for _, a in answers])
                self.record("pod", answers, result)
                if not result.admit:
                    return rejection_for(TopologyAffinityError())
                for c in containers:
                    self.allocate(c, result.hint)
                return None
            for c in containers:
                answers = self.container_answers(c)
                result = policy.merge([a for _, a in answers])
                self.record(f"container {c.name}", answers, result)
                if not result.admit:
                    return rejection_for(TopologyAffinityError())
                self.allocate(c, result.hint)
        except ModelError as err:
            return rejection_for(err)
        return None

    def container_answers(self, c: ContainerRequest) -> list[tuple[str, ProviderHints]]:
        return [(p.name, p.container_hints(self.pod, c, self.qos)) for p in self.providers]

    def pod_answers(self) -> list[tuple[str, ProviderHints]]:
        return [(p.name, p.pod_hints(self.pod, self.qos)) for p in self.providers]

    def record(self, target: str, answers: Sequence[tuple[str, ProviderHints]], result: MergeResult) -> None:
        flat: list[ProviderAnswer] = []
        for provider, answer in answers:
            if not answer:
                flat.append(ProviderAnswer(provider, "*", None))
                continue
            for resource in sorted(answer):
                hints = answer[resource]
                flat.append(ProviderAnswer(provider, resource, None if hints is None else tuple(hints)))
        note = _why(self.node.policy.name, flat, result)
        self.trace.append(TraceStep(target, tuple(flat), result.hint, result.admit, note))

    def allocate(self, c: ContainerRequest, hint: TopologyHint) -> None:
        devices: dict[str, tuple[str, ...]] = {}
        cpus = 0
        memory: dict[str, dict[int, int]] = {}
        for provider in self.providers:
            try:
                got = provider.allocate(self.pod, c, self.qos, hint)
            except ModelError as err:
                stored = "none" if self.node.policy.name == POLICY_NONE else hint.describe()
                self.notes.append(
                    f"container {c.name}: topology hint {stored}; the {provider.name}'s Allocate failed: {err.message}"
                )
                raise
            devices.update(got.devices)
            cpus |= got.cpus
            memory.update({t: dict(per_node) for t, per_node in got.memory.items()})
        self.assignments.append(
            ContainerAssignment(
                name=c.name,
                kind=c.kind,
                exclusive_cpus=cpuset.ids_of(cpus),
                numa_affinity=mask_ids(hint.affinity),
                devices=devices,
                memory=memory,
            )
        )


def _preferred_masks(answer: ProviderAnswer, single: bool) -> list[str]:
    assert answer.hints is not None
    return [
        str(h.affinity)
        for h in answer.hints
        if h.preferred and h.affinity is not None and (not single or h.affinity.count() == 1)
    ]


def _why(policy: str, answers: Sequence[ProviderAnswer], result: MergeResult) -> str:
    """A one-line reason for the merged hint, in terms of the providers' answers."""
    constrained = [a for a in answers if a.hints is not None]
    empty = [a for a in constrained if not a.hints]
    if empty:
        names = ", ".join(f"{a.resource} ({a.provider})" for a in empty)
        return f"{names} cannot be placed at all: not enough free resources on any NUMA mask"
    if result.hint.preferred:
        return "every resource has a preferred hint on the chosen NUMA mask"
    single = policy == POLICY_SINGLE_NUMA_NODE
    parts: list[str] = []
    for a in constrained:
        masks = _preferred_masks(a, single)
        if masks:
            parts.append(f"{a.resource} prefers {' '.join(masks)}")
        elif single and any(h.preferred for h in a.hints or ()):
            parts.append(f"{a.resource} prefers only multi-node masks")
        else:
            parts.append(
                f"{a.resource} has no preferred hint (no mask of the minimal size has enough "
                "free capacity: the free resources are fragmented over NUMA nodes)"
            )
    if single:
        rule = "single-numa-node needs one NUMA node that is a preferred hint of every resource"
    else:
        rule = "a merged hint is preferred only when every resource's hint is preferred and all their masks are equal"
    tail = "; best-effort admits anyway" if policy == POLICY_BEST_EFFORT else ""
    return f"{rule}: {'; '.join(parts)}{tail}"
