"""KubeletConfiguration rules (KG8xx): CPU manager, topology manager, memory-manager reservations, reserved CPUs.

Follows kubernetes v1.35: cmd/kubelet/app/server.go, pkg/kubelet/apis/config/validation and pkg/kubelet/cm. The
facts (policy names, option maturity per release, eviction defaults, the reserved-memory arithmetic) come from
kubegpu.kubelet, imported only once a KubeletConfiguration is seen so that lint start-up stays fast.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from decimal import ROUND_CEILING, Decimal
from typing import TYPE_CHECKING, Any

from kubegpu.errors import QuantityError
from kubegpu.manifests import Document, FieldPath, as_mapping
from kubegpu.rules.base import Edit, Fix, RawFinding, Rule, RuleContext, Safety, Severity, Target
from kubegpu.topology.cpulist import format_cpulist, parse_cpulist
from kubegpu.units.quantity import format_bytes, parse_quantity

if TYPE_CHECKING:
    from kubegpu.kubelet.features import FeatureGates

_PRACTICE = "Guaranteed QoS and CPU alignment"
_KIND = "KubeletConfiguration"
_API_GROUP = "kubelet.config.k8s.io"
CPU_POLICIES = ("none", "static")
MEMORY_POLICIES = ("None", "Static")


def is_kubelet_config(doc: Document) -> bool:
    """A KubeletConfiguration of the kubelet.config.k8s.io group (any version); the same test as
    kubegpu.kubelet.config.is_kubelet_configuration, kept here so lint need not import the kubelet model."""
    return doc.kind == _KIND and doc.api_version.split("/")[0] == _API_GROUP


def go_parse_bool(value: str) -> bool | None:
    """strconv.ParseBool (kubegpu.kubelet.features.parse_go_bool): True/False, None for what Go refuses."""
    from kubegpu.kubelet.features import parse_go_bool

    try:
        return parse_go_bool(value)
    except ValueError:
        return None


def _field(data: Mapping[str, Any], name: str) -> FieldPath:
    """The path of a top-level field, or of `kind` when the field is absent (so the finding has a line)."""
    return (name,) if name in data else ("kind",)


def _quantity(value: Any) -> Decimal | None:
    try:
        return parse_quantity(value).value
    except QuantityError:
        return None


def _policy_options(data: Mapping[str, Any]) -> Mapping[str, Any]:
    return as_mapping(data.get("cpuManagerPolicyOptions"))


def _gates(data: Mapping[str, Any]) -> FeatureGates:
    """The featureGates the file sets (boolean values only) over the modelled release's defaults."""
    from kubegpu.kubelet.features import FeatureGates

    raw = as_mapping(data.get("featureGates"))
    return FeatureGates(gates={str(k): v for k, v in raw.items() if isinstance(v, bool)})


def _option_true(options: Mapping[str, Any], name: str) -> bool:
    value = options.get(name)
    return isinstance(value, str) and go_parse_bool(value) is True


# --- reserved CPUs -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CPUReservation:
    """How many CPUs the static policy reserves and, when listed, which ones."""

    count: int
    cpus: tuple[int, ...] | None  # None: the kubelet picks them (lowest-numbered whole cores)
    error: str | None = None


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
        value = _quantity(raw)
        if value is None:
            return CPUReservation(0, None, f"{section}.cpu {raw!r} is not a quantity")
        total += value
    return CPUReservation(int(total.to_integral_value(rounding=ROUND_CEILING)), None)


# --- KG801 ---------------------------------------------------------------------------------------------------


def _check_cpu_manager(doc: Document, ctx: RuleContext) -> Iterator[RawFinding]:
    if not is_kubelet_config(doc):
        return
    data = as_mapping(doc.data)
    policy = data.get("cpuManagerPolicy", "none")
    if policy == "static":
        return
    path = _field(data, "cpuManagerPolicy")
    if policy not in CPU_POLICIES:
        yield RawFinding(
            path,
            f"cpuManagerPolicy {policy!r} is not a CPU manager policy (none, static; lower "
            "case): the kubelet does not start",
            severity=Severity.ERROR,
        )
        return
    if _policy_options(data):
        yield RawFinding(
            ("cpuManagerPolicyOptions",),
            "cpuManagerPolicyOptions are set but the CPU manager policy is "
            'none, which accepts no options: the kubelet does not start ("None policy: received '
            'unsupported options")',
            severity=Severity.ERROR,
        )
    reservation = cpu_reservation(data)
    fix = None
    if reservation.error is None and reservation.count > 0:
        fix = Fix(
            "set cpuManagerPolicy: static (drain the node and delete /var/lib/kubelet/cpu_manager_state "
            "before restarting the kubelet)",
            Safety.UNSAFE,
            (Edit("add", ("cpuManagerPolicy",), "static"),),
        )
    how = (
        ""
        if fix
        else (
            " (static also needs a CPU reservation: reservedSystemCPUs, or kubeReserved/systemReserved cpu above zero)"
        )
    )
    yield RawFinding(
        path,
        f"cpuManagerPolicy is {policy!r}{'' if 'cpuManagerPolicy' in data else ' (the default)'}: no container gets "
        "exclusive CPUs, so GPU pods' data loaders share cores with every other pod; set static" + how,
        fix,
    )


# --- KG802 ---------------------------------------------------------------------------------------------------


def _check_full_pcpus(doc: Document, ctx: RuleContext) -> Iterator[RawFinding]:
    if not is_kubelet_config(doc):
        return
    data = as_mapping(doc.data)
    options = _policy_options(data)
    for name, value in options.items():
        if not isinstance(value, str):
            yield RawFinding(
                ("cpuManagerPolicyOptions", str(name)),
                f"cpuManagerPolicyOptions.{name} is written as {value!r} without quotes: the field is a "
                "map of strings, so the kubelet cannot decode its configuration; quote it "
                f"('\"{str(value).lower()}\"')",
                severity=Severity.ERROR,
            )
    if data.get("cpuManagerPolicy") != "static":
        return  # the none policy refuses any option (kubelet-cpu-manager-not-static reports it)
    from kubegpu.kubelet.cpumanager.options import INCOMPATIBLE_OPTIONS
    from kubegpu.kubelet.features import CPU_ALPHA_GATE, CPU_BETA_GATE, CPU_OPTION_MATURITY

    gates = _gates(data)
    for name, value in options.items():
        maturity = gates.maturity(CPU_OPTION_MATURITY, str(name))
        where = ("cpuManagerPolicyOptions", str(name))
        if maturity is None:
            yield RawFinding(
                where,
                f"{name!r} is not a CPU manager policy option (known: "
                f"{', '.join(CPU_OPTION_MATURITY)}): the kubelet does not start (unknown CPU Manager "
                "Policy option)",
                severity=Severity.ERROR,
            )
        elif isinstance(value, str) and go_parse_bool(value) is None:
            yield RawFinding(
                where,
                f"cpuManagerPolicyOptions.{name} {value!r} is not a boolean: the kubelet does not "
                "start (bad value for option)",
                severity=Severity.ERROR,
            )
        elif maturity == "alpha" and not gates.enabled(CPU_ALPHA_GATE):
            yield RawFinding(
                where,
                f"{name} is an alpha option in Kubernetes {gates.version}: without featureGates "
                f"{CPU_ALPHA_GATE}: true the kubelet does not start",
                severity=Severity.ERROR,
            )
        elif maturity == "beta" and not gates.enabled(CPU_BETA_GATE):
            yield RawFinding(
                where,
                f"{name} is a beta option and featureGates {CPU_BETA_GATE} is false: the kubelet does not start",
                severity=Severity.ERROR,
            )
    for first, second in INCOMPATIBLE_OPTIONS:
        if _option_true(options, first) and _option_true(options, second):
            yield RawFinding(
                ("cpuManagerPolicyOptions",),
                f"{first} and {second} cannot be used together: the kubelet does not start",
                severity=Severity.ERROR,
            )
    full = _option_true(options, "full-pcpus-only")
    if full or ("full-pcpus-only" in options and not isinstance(options["full-pcpus-only"], str)):
        return
    node = ctx.node
    if node is not None and int(getattr(node, "threads_per_core", 1)) < 2:
        return  # no SMT: every CPU is a whole core already
    edit = Edit("add", ("cpuManagerPolicyOptions", "full-pcpus-only"), "true")
    smt = "" if node is None else f" (the node has {node.threads_per_core} threads per core)"
    yield RawFinding(
        _field(data, "cpuManagerPolicyOptions") if "cpuManagerPolicyOptions" in data else ("cpuManagerPolicy",),
        "the static CPU manager hands out single hardware threads: a GPU pod's exclusive CPUs can share physical "
        f'cores with another pod\'s threads{smt}; set cpuManagerPolicyOptions full-pcpus-only: "true" and request '
        "CPU counts that are multiples of the threads per core",
        Fix(
            'add cpuManagerPolicyOptions full-pcpus-only: "true" (pods with odd CPU counts are then rejected '
            "with SMTAlignmentError)",
            Safety.UNSAFE,
            (edit,),
        ),
    )


# --- KG803 ---------------------------------------------------------------------------------------------------


def _check_topology_policy(doc: Document, ctx: RuleContext) -> Iterator[RawFinding]:
    if not is_kubelet_config(doc):
        return
    from kubegpu.kubelet.features import TM_OPTION_MATURITY
    from kubegpu.kubelet.topologymanager.manager import SCOPES as TOPOLOGY_SCOPES
    from kubegpu.kubelet.topologymanager.options import DEFAULT_MAX_ALLOWABLE_NUMA_NODES as DEFAULT_MAX_NUMA_NODES
    from kubegpu.kubelet.topologymanager.policy import POLICIES as TOPOLOGY_POLICIES

    data = as_mapping(doc.data)
    policy = data.get("topologyManagerPolicy", "none")
    path = _field(data, "topologyManagerPolicy")
    if policy not in TOPOLOGY_POLICIES:
        yield RawFinding(
            path,
            f"topologyManagerPolicy {policy!r} must be one of {', '.join(TOPOLOGY_POLICIES)}: "
            "the kubelet does not start",
            severity=Severity.ERROR,
        )
        return
    scope = data.get("topologyManagerScope", "container")
    if scope not in TOPOLOGY_SCOPES:
        yield RawFinding(
            ("topologyManagerScope",),
            f"topologyManagerScope {scope!r} must be container or pod: the kubelet does not start",
            severity=Severity.ERROR,
        )
    memory_policy = data.get("memoryManagerPolicy", "None")
    if memory_policy not in MEMORY_POLICIES:
        yield RawFinding(
            ("memoryManagerPolicy",),
            f"memoryManagerPolicy {memory_policy!r} must be None or Static (capitalised): the kubelet does not start",
            severity=Severity.ERROR,
        )
    if policy == "none":
        default = "" if "topologyManagerPolicy" in data else " (the default)"
        yield RawFinding(
            path,
            f"topologyManagerPolicy is 'none'{default}: GPUs, exclusive CPUs and memory are "
            "allocated without regard to NUMA, so a GPU's data crosses the socket interconnect; use "
            "single-numa-node, or restricted for pods larger than one NUMA node (no automatic fix: "
            "the choice depends on pod sizes)",
        )
    elif policy == "best-effort":
        yield RawFinding(
            path,
            "topologyManagerPolicy best-effort admits every pod even when its GPUs, CPUs and "
            "memory cannot be NUMA-aligned; misaligned pods run silently slower. Use restricted or "
            "single-numa-node to reject (TopologyAffinityError) instead",
            severity=Severity.INFO,
        )
    elif memory_policy == "None" and data.get("cpuManagerPolicy") == "static":
        yield RawFinding(
            _field(data, "memoryManagerPolicy"),
            f"topologyManagerPolicy {policy} aligns GPUs and CPUs, but memoryManagerPolicy None gives "
            "no memory hints: a pod's memory may sit on another NUMA node; consider Static (with "
            "reservedMemory)",
            severity=Severity.INFO,
        )
    tm_options = as_mapping(data.get("topologyManagerPolicyOptions"))
    for name, value in tm_options.items():
        where = ("topologyManagerPolicyOptions", str(name))
        if name not in TM_OPTION_MATURITY:
            yield RawFinding(
                where,
                f"{name!r} is not a topology manager policy option (known: "
                f"{', '.join(TM_OPTION_MATURITY)}): the kubelet does not start",
                severity=Severity.ERROR,
            )
        elif not isinstance(value, str):
            yield RawFinding(
                where,
                f"topologyManagerPolicyOptions.{name} is written as {value!r} without quotes: the "
                "field is a map of strings, so the kubelet cannot decode its configuration",
                severity=Severity.ERROR,
            )
        elif name == "prefer-closest-numa-nodes" and go_parse_bool(value) is None:
            yield RawFinding(
                where,
                f"prefer-closest-numa-nodes {value!r} is not a boolean: the kubelet does not start",
                severity=Severity.ERROR,
            )
        elif name == "max-allowable-numa-nodes" and (
            not value.strip().isdigit() or int(value) < DEFAULT_MAX_NUMA_NODES
        ):
            yield RawFinding(
                where,
                f"max-allowable-numa-nodes {value!r} must be an integer of at least "
                f"{DEFAULT_MAX_NUMA_NODES}: the kubelet does not start",
                severity=Severity.ERROR,
            )
    if (
        policy == "single-numa-node"
        and isinstance(tm_options.get("prefer-closest-numa-nodes"), str)
        and go_parse_bool(tm_options["prefer-closest-numa-nodes"])
    ):
        yield RawFinding(
            ("topologyManagerPolicyOptions", "prefer-closest-numa-nodes"),
            "prefer-closest-numa-nodes has no effect with single-numa-node (it only orders multi-NUMA "
            "hints under best-effort and restricted)",
            severity=Severity.INFO,
        )
    node = ctx.node
    if node is not None and policy != "none":
        numa = len(node.numa_ids)
        limit = DEFAULT_MAX_NUMA_NODES
        raw_limit = tm_options.get("max-allowable-numa-nodes")
        if isinstance(raw_limit, str) and raw_limit.strip().isdigit():
            limit = max(limit, int(raw_limit))
        if numa > limit:
            yield RawFinding(
                path,
                f"node '{node.name}' has {numa} NUMA nodes (memory-only nodes count): with a "
                f"topology manager policy the kubelet refuses to start on more than {limit}; set "
                f'topologyManagerPolicyOptions max-allowable-numa-nodes: "{numa}"',
                severity=Severity.ERROR,
            )


# --- KG804 ---------------------------------------------------------------------------------------------------


def eviction_memory_bytes(data: Mapping[str, Any], capacity: int | None) -> tuple[int | None, str]:
    """The hard-eviction memory.available threshold in bytes (None when a percentage needs the node) and its source,
    as kubegpu.kubelet.eviction computes it for the release modelled."""
    from kubegpu.kubelet.eviction import memory_threshold
    from kubegpu.kubelet.features import DEFAULT_VERSION

    hard = data.get("evictionHard")
    given = None if hard is None else {str(k): str(v) for k, v in as_mapping(hard).items()}
    threshold = memory_threshold(given, data.get("mergeDefaultEvictionSettings") is True, DEFAULT_VERSION, capacity)
    return threshold.bytes, threshold.source


def _reserved_entries(data: Mapping[str, Any]) -> list[tuple[int, Mapping[str, Any]]]:
    entries = data.get("reservedMemory")
    return [(i, e) for i, e in enumerate(entries) if isinstance(e, Mapping)] if isinstance(entries, list) else []


def _memory_type(name: str) -> bool:
    return name == "memory" or name.startswith("hugepages-")


def _check_reserved_memory(doc: Document, ctx: RuleContext) -> Iterator[RawFinding]:
    if not is_kubelet_config(doc):
        return
    data = as_mapping(doc.data)
    entries = _reserved_entries(data)
    seen: set[tuple[int, str]] = set()
    totals: dict[str, int] = {}
    bad = False
    node = ctx.node
    numa_ids = set(node.numa_ids) if node is not None else None
    for index, entry in entries:
        numa = entry.get("numaNode")
        if not isinstance(numa, int) or isinstance(numa, bool) or numa < 0:
            yield RawFinding(
                ("reservedMemory", index), f"reservedMemory[{index}] has no valid numaNode", severity=Severity.ERROR
            )
            bad = True
            continue
        if (
            node is not None
            and numa_ids is not None
            and numa not in numa_ids
            and data.get("memoryManagerPolicy") == "Static"
        ):
            yield RawFinding(
                ("reservedMemory", index, "numaNode"),
                f"reservedMemory names NUMA node {numa}, which node '{node.name}' does not have "
                f"(it has {format_cpulist(numa_ids)}): the kubelet does not start",
                severity=Severity.ERROR,
            )
        for name, raw in as_mapping(entry.get("limits")).items():
            where = ("reservedMemory", index, "limits", str(name))
            value = _quantity(raw)
            if not _memory_type(str(name)):
                yield RawFinding(
                    where,
                    f"reservedMemory type {name!r} is not memory or hugepages-<size>: the "
                    "kubelet configuration is invalid",
                    severity=Severity.ERROR,
                )
                bad = True
            elif value is None or value <= 0:
                yield RawFinding(
                    where,
                    f"reservedMemory {name} {raw!r} must be a quantity above zero: the kubelet "
                    "configuration is invalid",
                    severity=Severity.ERROR,
                )
                bad = True
            elif (numa, str(name)) in seen:
                yield RawFinding(
                    where,
                    f"reservedMemory repeats {name} for NUMA node {numa}: the kubelet configuration is invalid",
                    severity=Severity.ERROR,
                )
                bad = True
            else:
                seen.add((numa, str(name)))
                totals[str(name)] = totals.get(str(name), 0) + int(value)
    if data.get("memoryManagerPolicy") != "Static" or bad:
        return
    capacity = sum(n.memory_bytes for n in node.numa_nodes) if node is not None else None
    required: dict[str, int | None] = {}
    explain: dict[str, str] = {}
    for section in ("kubeReserved", "systemReserved"):
        for name, raw in as_mapping(data.get(section)).items():
            if not _memory_type(str(name)):
                continue
            value = _quantity(raw)
            if value is None:
                yield RawFinding(
                    (section, str(name)),
                    f"{section}.{name} {raw!r} is not a quantity: the kubelet does not start",
                    severity=Severity.ERROR,
                )
                return
            current = required.get(str(name), 0)
            required[str(name)] = None if current is None else current + int(value)
            explain[str(name)] = explain.get(str(name), "") + f"{section} {raw} + "
    threshold, source = eviction_memory_bytes(data, capacity)
    memory_needed = required.get("memory", 0)
    required["memory"] = None if threshold is None or memory_needed is None else memory_needed + threshold
    explain["memory"] = explain.get("memory", "") + source
    for name in sorted(set(required) | set(totals)):
        need = required.get(name, 0)
        have = totals.get(name, 0)
        how = explain.get(name, "nothing").removesuffix(" + ")
        if need is None:
            if have or name == "memory":
                yield RawFinding(
                    ("reservedMemory",) if "reservedMemory" in data else ("memoryManagerPolicy",),
                    f"memoryManagerPolicy Static: reservedMemory {name} must add up to {how}; give "
                    "--node to resolve the percentage, or the kubelet may refuse to start",
                )
            continue
        if need == have:
            if name == "memory" and have == 0:
                yield RawFinding(
                    ("memoryManagerPolicy",),
                    "memoryManagerPolicy Static with no memory reserved at all (no kubeReserved/"
                    "systemReserved memory and no hard-eviction memory threshold): the kubelet does not "
                    'start ("[memorymanager] you should specify the system reserved memory"); reserve '
                    "some memory and list it in reservedMemory",
                )
            continue
        path = ("reservedMemory",) if "reservedMemory" in data else ("memoryManagerPolicy",)
        fix = _reserved_memory_fix(data, name, need)
        yield RawFinding(
            path,
            f"memoryManagerPolicy Static: reservedMemory {name} adds up to {format_bytes(have) if have else '0'} "
            f"but must equal {format_bytes(need) if need else '0'} ({how}); the kubelet does not start: the total "
            f'amount "{format_bytes(have) if have else "0"}" of type "{name}" is not equal to the value '
            f'"{format_bytes(need) if need else "0"}" determined by Node Allocatable feature',
            fix,
        )


def _reserved_memory_fix(data: Mapping[str, Any], name: str, need: int) -> Fix | None:
    """Put what the other NUMA nodes do not reserve on NUMA node 0, as the GPU performance guide's example does."""
    entries = _reserved_entries(data)
    others = 0
    zero_index: int | None = None
    for index, entry in entries:
        if entry.get("numaNode") == 0:
            zero_index = index if zero_index is None else zero_index
            continue
        value = _quantity(as_mapping(entry.get("limits")).get(name, 0))
        others += int(value or 0)
    remaining = need - others
    if remaining <= 0:
        return None
    text = format_bytes(remaining)
    description = f"reserve {text} of {name} on NUMA node 0 so reservedMemory adds up to {format_bytes(need)}"
    if zero_index is not None:
        edit = Edit("add", ("reservedMemory", zero_index, "limits", name), text)
    elif isinstance(data.get("reservedMemory"), list):
        edit = Edit("add", ("reservedMemory", "-"), {"numaNode": 0, "limits": {name: text}})
    else:
        edit = Edit("add", ("reservedMemory",), [{"numaNode": 0, "limits": {name: text}}])
    return Fix(description, Safety.UNSAFE, (edit,))


# --- KG805 ---------------------------------------------------------------------------------------------------


def _check_reserved_cpus(doc: Document, ctx: RuleContext) -> Iterator[RawFinding]:
    if not is_kubelet_config(doc):
        return
    data = as_mapping(doc.data)
    reservation = cpu_reservation(data)
    if reservation.error is not None:
        yield RawFinding(
            _field(data, "reservedSystemCPUs"),
            reservation.error + ": the kubelet does not start",
            severity=Severity.ERROR,
        )
        return
    static = data.get("cpuManagerPolicy") == "static"
    if reservation.cpus is not None:
        cgroups = [name for name in ("kubeReservedCgroup", "systemReservedCgroup") if data.get(name)]
        if cgroups:
            yield RawFinding(
                (cgroups[0],),
                f"reservedSystemCPUs cannot be combined with {' or '.join(cgroups)}: "
                "the kubelet's configuration validation fails and it does not start (distributions "
                "such as EKS nodeadm or k0s set these cgroups by default: clear them)",
                severity=Severity.ERROR,
            )
        overridden = [
            (s, as_mapping(data.get(s))["cpu"])
            for s in ("kubeReserved", "systemReserved")
            if "cpu" in as_mapping(data.get(s))
        ]
        if overridden:
            listed = format_cpulist(reservation.cpus)
            what = " and ".join(f"{s}.cpu {v!r}" for s, v in overridden)
            edits = tuple(Edit("remove", (s, "cpu")) for s, _ in overridden)
            yield RawFinding(
                (overridden[0][0], "cpu"),
                f"reservedSystemCPUs {listed} overrides {what}: the kubelet drops kubeReserved.cpu and sets "
                f"systemReserved.cpu to {len(reservation.cpus)}, so exactly the {len(reservation.cpus)} listed CPUs "
                "are reserved and these values are ignored",
                Fix("remove the cpu entries the kubelet ignores", Safety.SAFE, edits),
            )
    elif static and reservation.count == 0:
        yield RawFinding(
            _field(data, "cpuManagerPolicy"),
            "the static CPU manager needs a CPU reservation (kubeReserved.cpu + systemReserved.cpu above "
            "zero, or reservedSystemCPUs): the kubelet does not start",
            severity=Severity.ERROR,
        )
    node = ctx.node
    if node is None:
        return
    online = {cpu.id for cpu in node.cpus}
    if reservation.cpus is not None and not set(reservation.cpus) <= online:
        missing = sorted(set(reservation.cpus) - online)
        yield RawFinding(
            ("reservedSystemCPUs",),
            f"reservedSystemCPUs names CPUs {format_cpulist(missing)} that "
            f"node '{node.name}' does not have (online: {format_cpulist(online)}): the kubelet does not "
            "start",
            severity=Severity.ERROR,
        )
        return
    threads = int(node.threads_per_core)
    if not static or threads < 2 or not _option_true(_policy_options(data), "full-pcpus-only"):
        return
    if reservation.cpus is not None:
        whole = sorted({s for cpu in reservation.cpus for s in node.siblings(cpu)})
        if len(whole) != len(reservation.cpus):
            inner = sorted({cpu for cpu in reservation.cpus if set(node.siblings(cpu)) <= set(reservation.cpus)})
            wasted = sorted(set(whole) - set(reservation.cpus))
            smaller = f" or only the whole cores {format_cpulist(inner)}" if inner else ""
            yield RawFinding(
                ("reservedSystemCPUs",),
                f"reservedSystemCPUs {format_cpulist(reservation.cpus)} splits physical cores on node "
                f"'{node.name}': with full-pcpus-only the siblings {format_cpulist(wasted)} are never "
                f"given out exclusively (wasted); reserve whole cores: {format_cpulist(whole)}{smaller}",
            )
    elif reservation.count % threads:
        yield RawFinding(
            _field(data, "kubeReserved" if "kubeReserved" in data else "systemReserved"),
            f"the kubelet reserves {reservation.count} CPU(s), not a multiple of the {threads} threads "
            f"per core of node '{node.name}': with full-pcpus-only the sibling thread of the partly "
            "reserved core is never given out exclusively; reserve a multiple of "
            f"{threads} CPUs",
        )


KUBELET_CPU_MANAGER_NOT_STATIC = Rule(
    code="KG801",
    name="kubelet-cpu-manager-not-static",
    practice=_PRACTICE,
    severity=Severity.WARNING,
    summary="A KubeletConfiguration leaves the CPU manager at 'none' (or names an unknown policy).",
    target=Target.DOCUMENT,
    kinds=frozenset({_KIND}),
    check=_check_cpu_manager,
    gpu_only=False,
    fixable=True,
    rationale="Only the static CPU manager gives Guaranteed containers with whole CPUs exclusive cores; with "
    "'none' a GPU pod's DataLoader workers compete with every other pod on the node and starve the GPU. The "
    "policy names are lower case (`static`); `Static` stops the kubelet. Switching policy requires draining "
    "the node and deleting /var/lib/kubelet/cpu_manager_state, so the fix is unsafe. The none policy refuses "
    "cpuManagerPolicyOptions outright.",
    bad_example='apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nsystemReserved: {cpu: "1"}',
    good_example="apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\ncpuManagerPolicy: static\n"
    'systemReserved: {cpu: "1"}',
)
KUBELET_FULL_PCPUS_MISSING = Rule(
    code="KG802",
    name="kubelet-full-pcpus-missing",
    practice=_PRACTICE,
    severity=Severity.WARNING,
    summary="The static CPU manager runs without full-pcpus-only (or its options would stop the kubelet).",
    target=Target.DOCUMENT,
    kinds=frozenset({_KIND}),
    check=_check_full_pcpus,
    gpu_only=False,
    fixable=True,
    rationale="Without `full-pcpus-only` the static policy may give a container one hyper-thread of a core whose "
    "sibling goes to another pod, so the 'exclusive' CPUs still share execution units. The option's values are "
    "strings: an unquoted `true` cannot be decoded; unknown options, alpha options (align-by-socket, "
    "distribute-cpus-across-cores in 1.35) without the CPUManagerPolicyAlphaOptions gate, and full-pcpus-only with "
    "distribute-cpus-across-cores all stop the kubelet. With `--node`, nodes without SMT are not flagged.",
    bad_example="cpuManagerPolicy: static",
    good_example='cpuManagerPolicy: static\ncpuManagerPolicyOptions:\n  full-pcpus-only: "true"',
)
KUBELET_TOPOLOGY_POLICY_WEAK = Rule(
    code="KG803",
    name="kubelet-topology-policy-weak",
    practice=_PRACTICE,
    severity=Severity.WARNING,
    summary="The topology manager does not enforce NUMA alignment (none or best-effort), or a policy is invalid.",
    target=Target.DOCUMENT,
    kinds=frozenset({_KIND}),
    check=_check_topology_policy,
    gpu_only=False,
    rationale="The topology manager is what lines up GPUs (device plugin hints), exclusive CPUs and memory on one "
    "NUMA node. 'none' ignores NUMA; best-effort admits misaligned pods. single-numa-node rejects pods that "
    "cannot fit one NUMA node (an 8-GPU pod on a 2-NUMA, 4-GPUs-per-node machine never fits), restricted rejects "
    "only pods whose merged hint is not preferred. Unknown or malformed topologyManagerPolicyOptions stop the "
    "kubelet, and so, with `--node`, do more NUMA nodes than max-allowable-numa-nodes (default 8).",
    bad_example="topologyManagerPolicy: best-effort",
    good_example="topologyManagerPolicy: single-numa-node\ntopologyManagerScope: pod",
)
KUBELET_RESERVED_MEMORY_MISMATCH = Rule(
    code="KG804",
    name="kubelet-reserved-memory-mismatch",
    practice=_PRACTICE,
    severity=Severity.ERROR,
    summary="memoryManagerPolicy Static: reservedMemory does not add up to kube + system reserved + hard eviction.",
    target=Target.DOCUMENT,
    kinds=frozenset({_KIND}),
    check=_check_reserved_memory,
    gpu_only=False,
    fixable=True,
    rationale="At start-up the Static memory manager checks, per memory type, that the reservedMemory entries of "
    "all NUMA nodes add up exactly to kubeReserved + systemReserved + the hard-eviction threshold (for memory, "
    "evictionHard memory.available: 100Mi by default, and 0 when evictionHard is given without it unless "
    "mergeDefaultEvictionSettings is true). Any difference and the kubelet does not start. The GPU performance "
    "guide's own example (2Gi reserved against 2Gi + 2Gi + 100Mi) fails this way. The fix puts the difference on "
    "NUMA node 0.",
    bad_example="memoryManagerPolicy: Static\nkubeReserved: {memory: 2Gi}\nsystemReserved: {memory: 2Gi}\n"
    "reservedMemory:\n- numaNode: 0\n  limits: {memory: 2Gi}",
    good_example="memoryManagerPolicy: Static\nkubeReserved: {memory: 2Gi}\nsystemReserved: {memory: 2Gi}\n"
    "reservedMemory:\n- numaNode: 0\n  limits: {memory: 4196Mi}",
)
KUBELET_RESERVED_CPUS_CONFLICT = Rule(
    code="KG805",
    name="kubelet-reserved-cpus-conflict",
    practice=_PRACTICE,
    severity=Severity.WARNING,
    summary="Reserved CPUs conflict: reservedSystemCPUs with reserved cgroups or cpu reservations, or split cores.",
    target=Target.DOCUMENT,
    kinds=frozenset({_KIND}),
    check=_check_reserved_cpus,
    gpu_only=False,
    fixable=True,
    rationale="When reservedSystemCPUs is set the kubelet deletes kubeReserved.cpu and sets systemReserved.cpu to "
    "the number of listed CPUs, so cpu values written there are ignored; combined with kubeReservedCgroup or "
    "systemReservedCgroup the configuration is rejected. The static policy needs a non-zero reservation. With "
    "`--node` and full-pcpus-only, reserved CPUs that are not whole cores waste their sibling threads, which "
    "are never handed out exclusively.",
    bad_example='reservedSystemCPUs: "0-3"\nkubeReserved: {cpu: "1"}\nsystemReserved: {cpu: "1"}',
    good_example='reservedSystemCPUs: "0-1,112-113"',
)

RULES: tuple[Rule, ...] = (
    KUBELET_CPU_MANAGER_NOT_STATIC,
    KUBELET_FULL_PCPUS_MISSING,
    KUBELET_TOPOLOGY_POLICY_WEAK,
    KUBELET_RESERVED_MEMORY_MISMATCH,
    KUBELET_RESERVED_CPUS_CONFLICT,
)
