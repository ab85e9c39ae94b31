"""The one validator of a KubeletConfiguration: every field that stops the kubelet, with the path it is written at.

Follows kubernetes v1.35 pkg/kubelet/apis/config/validation (validation.go, validation_reserved_memory.go: what
ValidateKubeletConfiguration rejects, in its own words) and the container managers' start-up checks
(pkg/kubelet/cm: CPU and memory manager policy names and options, topology manager policy options, the reserved
CPUs and NUMA nodes a node has). The kubelet model (`KubeletConfig`, read by `admit`, `simulate`, `gen kubelet`
and lint's admission rule) raises the issues ValidateKubeletConfiguration raises; the KG8xx lint rules report every
issue at its field. Each issue says what is wrong (`code`), where, and the values its messages name.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from decimal import ROUND_CEILING, Decimal
from typing import Any, Protocol

from kubegpu.errors import QuantityError
from kubegpu.kubelet.cpumanager.options import INCOMPATIBLE_OPTIONS
from kubegpu.kubelet.features import (
    CPU_ALPHA_GATE,
    CPU_BETA_GATE,
    CPU_OPTION_MATURITY,
    TM_OPTION_MATURITY,
    FeatureGates,
    parse_go_bool,
)
from kubegpu.kubelet.memorymanager.reserved import Amount, is_memory_type
from kubegpu.kubelet.topologymanager.manager import SCOPES
from kubegpu.kubelet.topologymanager.options import DEFAULT_MAX_ALLOWABLE_NUMA_NODES
from kubegpu.kubelet.topologymanager.policy import POLICIES
from kubegpu.manifests.document import FieldPath, as_mapping
from kubegpu.topology.cpulist import parse_cpulist
from kubegpu.units.quantity import parse_quantity

KIND = "KubeletConfiguration"
API_GROUP = "kubelet.config.k8s.io"
API_VERSIONS = ("kubelet.config.k8s.io/v1beta1", "kubelet.config.k8s.io/v1")
CPU_POLICIES = ("none", "static")
MEMORY_POLICIES = ("None", "Static")
TOPOLOGY_POLICIES = POLICIES
TOPOLOGY_SCOPES = SCOPES

# What an issue is (the lint rules pick theirs by these).
CPU_POLICY_UNKNOWN = "cpu-policy-unknown"
NONE_POLICY_OPTIONS = "none-policy-options"
CPU_OPTION_UNQUOTED = "cpu-option-unquoted"
CPU_OPTION_UNKNOWN = "cpu-option-unknown"
CPU_OPTION_NOT_BOOL = "cpu-option-not-bool"
CPU_OPTION_ALPHA = "cpu-option-alpha"
CPU_OPTION_BETA = "cpu-option-beta"
CPU_OPTIONS_INCOMPATIBLE = "cpu-options-incompatible"
TOPOLOGY_POLICY_UNKNOWN = "topology-policy-unknown"
TOPOLOGY_SCOPE_UNKNOWN = "topology-scope-unknown"
MEMORY_POLICY_UNKNOWN = "memory-policy-unknown"
TM_OPTION_UNKNOWN = "tm-option-unknown"
TM_OPTION_UNQUOTED = "tm-option-unquoted"
TM_OPTION_NOT_BOOL = "tm-option-not-bool"
TM_MAX_NUMA_INVALID = "tm-max-numa-invalid"
TM_NUMA_LIMIT = "tm-numa-limit"
RESERVED_MEMORY_NUMA_INVALID = "reserved-memory-numa-invalid"
RESERVED_MEMORY_NUMA_MISSING = "reserved-memory-numa-missing"
RESERVED_MEMORY_TYPE = "reserved-memory-type"
RESERVED_MEMORY_NOT_POSITIVE = "reserved-memory-not-positive"
RESERVED_MEMORY_DUPLICATE = "reserved-memory-duplicate"
RESERVED_CPUS_INVALID = "reserved-cpus-invalid"
RESERVED_CPUS_WITH_CGROUPS = "reserved-cpus-with-cgroups"
STATIC_WITHOUT_RESERVATION = "static-without-reservation"
RESERVED_CPUS_OFFLINE = "reserved-cpus-offline"


class Node(Protocol):
    """What the node-dependent checks read of a node (a NodeTopology)."""

    @property
    def name(self) -> str: ...

    @property
    def numa_ids(self) -> Sequence[int]: ...

    @property
    def cpus(self) -> Sequence[Any]: ...


@dataclass(frozen=True)
class ConfigIssue:
    """One thing in a KubeletConfiguration that stops the kubelet, at the field it is written at.

    `value` is the offending value, `name` the option or resource it concerns, `numa` its NUMA node, `detail`
    a parse error or what else the message names; `kubelet` is ValidateKubeletConfiguration's own message when the
    kubelet's configuration validation rejects it (None when the kubelet refuses later, at start-up).
    """

    code: str
    path: FieldPath
    value: Any = None
    name: str = ""
    numa: int | None = None
    detail: str = ""
    kubelet: str | None = None


@dataclass(frozen=True)
class CPUReservation:
    """How many CPUs the static policy reserves and, when listed, which ones."""

    count: int
    cpus: tuple[int, ...] | None  # None: the kubelet picks them (lowest-numbered whole cores)
    error: str | None = None


def is_kubelet_configuration(kind: object, api_version: object) -> bool:
    """A KubeletConfiguration of the kubelet.config.k8s.io group (any version)."""
    return kind == KIND and isinstance(api_version, str) and api_version.split("/")[0] == API_GROUP


def go_bool(value: str) -> bool | None:
    """strconv.ParseBool: True/False, None for what Go refuses."""
    try:
        return parse_go_bool(value)
    except ValueError:
        return None


def option_true(options: Mapping[str, Any], name: str) -> bool:
    """An option set to a Go true string."""
    value = options.get(name)
    return isinstance(value, str) and go_bool(value) is True


def quantity(value: Any) -> Decimal | None:
    """An exact quantity (an Amount the model already read, or a value as written); None when it is none."""
    if isinstance(value, Amount):
        return Decimal(value.value)
    try:
        return parse_quantity(value).value
    except QuantityError:
        return None


def gates_of(data: Mapping[str, Any]) -> FeatureGates:
    """The featureGates the configuration sets (boolean values only) over the modelled release's defaults."""
    raw = as_mapping(data.get("featureGates"))
    return FeatureGates(gates={str(k): v for k, v in raw.items() if isinstance(v, bool)})


def field(data: Mapping[str, Any], name: str) -> FieldPath:
    """The path of a top-level field, or of `kind` when the field is absent (so an issue has a line)."""
    return (name,) if name in data else ("kind",)


def cpu_reservation(data: Mapping[str, Any]) -> CPUReservation:
    """reservedSystemCPUs wins over kube/systemReserved cpu; otherwise ceil(kubeReserved.cpu + systemReserved.cpu)."""
    listed = data.get("reservedSystemCPUs")
    if isinstance(listed, str | int) and str(listed).strip():
        try:
            ids = parse_cpulist(str(listed))
        except ValueError as err:
            return CPUReservation(0, None, f"reservedSystemCPUs {listed!r} is not a CPU list: {err}")
        return CPUReservation(len(ids), ids)
    total = Decimal(0)
    for section in ("kubeReserved", "systemReserved"):
        raw = as_mapping(data.get(section)).get("cpu")
        if raw is None:
            continue
        value = quantity(raw)
        if value is None:
            return CPUReservation(0, None, f"{section}.cpu {raw!r} is not a quantity")
        total += value
    return CPUReservation(int(total.to_integral_value(rounding=ROUND_CEILING)), None)


def reserved_entries(data: Mapping[str, Any]) -> list[tuple[int, Mapping[str, Any]]]:
    """The reservedMemory entries that are mappings, with their indices."""
    entries = data.get("reservedMemory")
    return [(i, e) for i, e in enumerate(entries) if isinstance(e, Mapping)] if isinstance(entries, list) else []


def validate(data: Mapping[str, Any], node: Node | None = None) -> tuple[ConfigIssue, ...]:
    """Every issue of a KubeletConfiguration mapping (with `node`, those the node's hardware decides too)."""
    return (
        *_cpu_manager(data),
        *_topology_manager(data, node),
        *_reserved_memory(data, node),
        *_reserved_cpus(data, node),
    )


def validation_errors(data: Mapping[str, Any]) -> list[str]:
    """ValidateKubeletConfiguration's messages, in its order (the kubelet does not start with any)."""
    issues = validate(data)
    order = (TOPOLOGY_POLICY_UNKNOWN, TOPOLOGY_SCOPE_UNKNOWN, RESERVED_CPUS_INVALID, RESERVED_CPUS_WITH_CGROUPS)
    errors = [i.kubelet for code in order for i in issues if i.code == code and i.kubelet]
    memory = (RESERVED_MEMORY_TYPE, RESERVED_MEMORY_NOT_POSITIVE, RESERVED_MEMORY_DUPLICATE)
    return errors + [i.kubelet for i in issues if i.code in memory and i.kubelet]


# --- the CPU manager -------------------------------------------------------------------------------------------


def _cpu_manager(data: Mapping[str, Any]) -> Iterator[ConfigIssue]:
    policy = data.get("cpuManagerPolicy", "none")
    options = as_mapping(data.get("cpuManagerPolicyOptions"))
    if policy not in CPU_POLICIES:
        yield ConfigIssue(CPU_POLICY_UNKNOWN, field(data, "cpuManagerPolicy"), policy)
    elif policy == "none" and options:
        yield ConfigIssue(NONE_POLICY_OPTIONS, ("cpuManagerPolicyOptions",), dict(options))
    for name, value in options.items():
        if not isinstance(value, str):
            yield ConfigIssue(CPU_OPTION_UNQUOTED, ("cpuManagerPolicyOptions", str(name)), value, str(name))
    if policy == "static":
        yield from _cpu_options(data, options)


def _cpu_options(data: Mapping[str, Any], options: Mapping[str, Any]) -> Iterator[ConfigIssue]:
    """The static policy's options: known in this release, Go booleans, their gates on, no incompatible pair."""
    gates = gates_of(data)
    for name, value in options.items():
        maturity = gates.maturity(CPU_OPTION_MATURITY, str(name))
        where = ("cpuManagerPolicyOptions", str(name))
        if maturity is None:
            yield ConfigIssue(CPU_OPTION_UNKNOWN, where, value, str(name))
        elif isinstance(value, str) and go_bool(value) is None:
            yield ConfigIssue(CPU_OPTION_NOT_BOOL, where, value, str(name))
        elif maturity == "alpha" and not gates.enabled(CPU_ALPHA_GATE):
            yield ConfigIssue(CPU_OPTION_ALPHA, where, value, str(name), detail=gates.version)
        elif maturity == "beta" and not gates.enabled(CPU_BETA_GATE):
            yield ConfigIssue(CPU_OPTION_BETA, where, value, str(name))
    for first, second in INCOMPATIBLE_OPTIONS:
        if option_true(options, first) and option_true(options, second):
            yield ConfigIssue(CPU_OPTIONS_INCOMPATIBLE, ("cpuManagerPolicyOptions",), first, second)


# --- the topology manager --------------------------------------------------------------------------------------


def _topology_manager(data: Mapping[str, Any], node: Node | None) -> Iterator[ConfigIssue]:
    policy = data.get("topologyManagerPolicy", "none")
    if policy not in TOPOLOGY_POLICIES:
        choices = " ".join(f'"{p}"' for p in TOPOLOGY_POLICIES)
        yield ConfigIssue(
            TOPOLOGY_POLICY_UNKNOWN,
            field(data, "topologyManagerPolicy"),
            policy,
            kubelet="invalid configuration: topologyManagerPolicy (--topology-manager-policy) "
            f'"{policy}" must be one of: [{choices}]',
        )
    scope = data.get("topologyManagerScope", "container")
    if scope not in TOPOLOGY_SCOPES:
        yield ConfigIssue(
            TOPOLOGY_SCOPE_UNKNOWN,
            ("topologyManagerScope",),
            scope,
            kubelet="invalid configuration: topologyManagerScope (--topology-manager-scope) "
            f'"{scope}" must be one of: "container", or "pod"',
        )
    memory_policy = data.get("memoryManagerPolicy", "None")
    if memory_policy not in MEMORY_POLICIES:
        yield ConfigIssue(MEMORY_POLICY_UNKNOWN, ("memoryManagerPolicy",), memory_policy)
    options = as_mapping(data.get("topologyManagerPolicyOptions"))
    for name, value in options.items():
        where = ("topologyManagerPolicyOptions", str(name))
        if name not in TM_OPTION_MATURITY:
            yield ConfigIssue(TM_OPTION_UNKNOWN, where, value, str(name))
        elif not isinstance(value, str):
            yield ConfigIssue(TM_OPTION_UNQUOTED, where, value, str(name))
        elif name == "prefer-closest-numa-nodes" and go_bool(value) is None:
            yield ConfigIssue(TM_OPTION_NOT_BOOL, where, value, str(name))
        elif name == "max-allowable-numa-nodes" and (
            not value.strip().isdigit() or int(value) < DEFAULT_MAX_ALLOWABLE_NUMA_NODES
        ):
            yield ConfigIssue(TM_MAX_NUMA_INVALID, where, value, str(name))
    if node is not None and policy != "none" and policy in TOPOLOGY_POLICIES:
        numa = len(node.numa_ids)
        limit = DEFAULT_MAX_ALLOWABLE_NUMA_NODES
        raw_limit = options.get("max-allowable-numa-nodes")
        if isinstance(raw_limit, str) and raw_limit.strip().isdigit():
            limit = max(limit, int(raw_limit))
        if numa > limit:
            yield ConfigIssue(TM_NUMA_LIMIT, field(data, "topologyManagerPolicy"), numa, detail=str(limit))


# --- reserved memory -------------------------------------------------------------------------------------------


def _reserved_memory(data: Mapping[str, Any], node: Node | None) -> Iterator[ConfigIssue]:
    """validation_reserved_memory.go: each limit a memory type, not zero, not repeated for its NUMA node (and a
    NUMA node the node has, when the Static memory manager reads them)."""
    seen: set[tuple[int, str]] = set()
    numa_ids = set(node.numa_ids) if node is not None else None
    static = data.get("memoryManagerPolicy") == "Static"
    for index, entry in reserved_entries(data):
        numa = entry.get("numaNode")
        if not isinstance(numa, int) or isinstance(numa, bool) or numa < 0:
            yield ConfigIssue(RESERVED_MEMORY_NUMA_INVALID, ("reservedMemory", index), numa)
            continue
        if node is not None and numa_ids is not None and numa not in numa_ids and static:
            yield ConfigIssue(RESERVED_MEMORY_NUMA_MISSING, ("reservedMemory", index, "numaNode"), numa, numa=numa)
        for name, raw in as_mapping(entry.get("limits")).items():
            yield from _reserved_limit(index, numa, str(name), raw, seen)


def _reserved_limit(index: int, numa: int, name: str, raw: Any, seen: set[tuple[int, str]]) -> Iterator[ConfigIssue]:
    where = ("reservedMemory", index, "limits", name)
    if not is_memory_type(name):
        yield ConfigIssue(
            RESERVED_MEMORY_TYPE,
            where,
            raw,
            name,
            numa,
            kubelet=f'invalid configuration: the limit type "{name}" for NUMA node {numa} is not supported, only '
            "[memory hugepages-<HugePageSize>] is accepted",
        )
    value = quantity(raw)
    if value is None or value <= 0:
        zero = value is not None and value == 0
        yield ConfigIssue(
            RESERVED_MEMORY_NOT_POSITIVE,
            where,
            raw,
            name,
            numa,
            kubelet=f'invalid configuration: reserved memory may not be zero for NUMA node {numa} and resource "{name}"'
            if zero
            else None,
        )
    if (numa, name) in seen:
        yield ConfigIssue(
            RESERVED_MEMORY_DUPLICATE,
            where,
            raw,
            name,
            numa,
            kubelet="invalid configuration: the reserved memory has a duplicate value for NUMA node "
            f'{numa} and resource "{name}"',
        )
    seen.add((numa, name))


# --- reserved CPUs ---------------------------------------------------------------------------------------------


def _text(value: Any) -> str:
    """A string field as the kubelet decodes it (numbers as their text; anything else, or nothing, as '')."""
    return str(value) if isinstance(value, str | int | float) and not isinstance(value, bool) else ""


def _reserved_cpus(data: Mapping[str, Any], node: Node | None) -> Iterator[ConfigIssue]:
    reservation = cpu_reservation(data)
    listed = data.get("reservedSystemCPUs")
    if reservation.error is not None:
        bad_list = isinstance(listed, str | int) and bool(str(listed).strip())
        yield ConfigIssue(
            RESERVED_CPUS_INVALID,
            field(data, "reservedSystemCPUs"),
            listed,
            detail=reservation.error,
            kubelet="invalid configuration: unable to parse reservedSystemCPUs (--reserved-cpus) "
            f'{listed}, error: strconv.Atoi: parsing "{str(listed).strip()}": invalid syntax'
            if bad_list
            else None,
        )
    cgroups = [name for name in ("kubeReservedCgroup", "systemReservedCgroup") if _text(data.get(name))]
    if _text(listed) and cgroups:
        yield ConfigIssue(
            RESERVED_CPUS_WITH_CGROUPS,
            (cgroups[0],),
            listed,
            " or ".join(cgroups),
            kubelet="invalid configuration: can't use reservedSystemCPUs (--reserved-cpus) with "
            "systemReservedCgroup (--system-reserved-cgroup) or kubeReservedCgroup (--kube-reserved-cgroup)",
        )
    static = data.get("cpuManagerPolicy") == "static"
    if static and reservation.error is None and reservation.cpus is None and reservation.count == 0:
        yield ConfigIssue(STATIC_WITHOUT_RESERVATION, field(data, "cpuManagerPolicy"))
    if node is not None and reservation.cpus is not None:
        online = {cpu.id for cpu in node.cpus}
        if not set(reservation.cpus) <= online:
            missing = tuple(sorted(set(reservation.cpus) - online))
            yield ConfigIssue(RESERVED_CPUS_OFFLINE, ("reservedSystemCPUs",), missing, detail=str(len(online)))
