"""KubeletConfiguration rules (KG8xx): CPU manager, topology manager, memory-manager reservations, reserved CPUs.

Follows kubernetes v1.35: cmd/kubelet/app/server.go, pkg/kubelet/apis/config/validation and pkg/kubelet/cm. The
facts (policy names, option maturity per release, eviction defaults, the reserved-memory arithmetic) come from
kubegpu.kubelet, imported only once a KubeletConfiguration is seen so that lint start-up stays fast.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from kubegpu.manifests import Document, FieldPath, as_mapping, memoised
from kubegpu.ruleapi import Edit, Fix, RawFinding, Rule, RuleContext, Safety, Severity, Target
from kubegpu.topology.cpulist import format_cpulist
from kubegpu.units.quantity import format_bytes

if TYPE_CHECKING:
    from kubegpu.kubelet.validation import ConfigIssue

_PRACTICE = "Guaranteed QoS and CPU alignment"
_KIND = "KubeletConfiguration"  # the kind the rules are run for (kubegpu.kubelet.validation.KIND)


def go_parse_bool(value: str) -> bool | None:
    """strconv.ParseBool (kubegpu.kubelet.features.parse_go_bool): True/False, None for what Go refuses."""
    from kubegpu.kubelet.validation import go_bool

    return go_bool(value)


def _issues(doc: Document, ctx: RuleContext) -> tuple[ConfigIssue, ...] | None:
    """The validator's issues of a KubeletConfiguration document (None for any other object), found once per
    document and node for the five rules."""
    from kubegpu.kubelet.validation import is_kubelet_configuration, validate

    if not is_kubelet_configuration(doc.kind, doc.api_version):
        return None
    return memoised(doc, ("kubelet_validation", id(ctx.node)), validate, as_mapping(doc.data), ctx.node)


def _of(issues: tuple[ConfigIssue, ...], *codes: str) -> list[ConfigIssue]:
    return [issue for issue in issues if issue.code in codes]


def _policy_options(data: Mapping[str, Any]) -> Mapping[str, Any]:
    return as_mapping(data.get("cpuManagerPolicyOptions"))


# --- KG801 ---------------------------------------------------------------------------------------------------


def _check_cpu_manager(doc: Document, ctx: RuleContext) -> Iterator[RawFinding]:
    issues = _issues(doc, ctx)
    if issues is None:
        return
    from kubegpu.kubelet import validation as kv

    data = as_mapping(doc.data)
    policy = data.get("cpuManagerPolicy", "none")
    if policy == "static":
        return
    path = kv.field(data, "cpuManagerPolicy")
    for issue in _of(issues, kv.CPU_POLICY_UNKNOWN):
        yield RawFinding(
            issue.path,
            f"cpuManagerPolicy {issue.value!r} is not a CPU manager policy (none, static; lower "
            "case): the kubelet does not start",
            severity=Severity.ERROR,
        )
        return
    for issue in _of(issues, kv.NONE_POLICY_OPTIONS):
        yield RawFinding(
            issue.path,
            "cpuManagerPolicyOptions are set but the CPU manager policy is "
            'none, which accepts no options: the kubelet does not start ("None policy: received '
            'unsupported options")',
            severity=Severity.ERROR,
        )
    reservation = kv.cpu_reservation(data)
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
    issues = _issues(doc, ctx)
    if issues is None:
        return
    from kubegpu.kubelet import validation as kv

    data = as_mapping(doc.data)
    options = _policy_options(data)
    codes = (kv.CPU_OPTION_UNQUOTED, kv.CPU_OPTION_UNKNOWN, kv.CPU_OPTION_NOT_BOOL, kv.CPU_OPTION_ALPHA)
    for issue in _of(issues, *codes, kv.CPU_OPTION_BETA, kv.CPU_OPTIONS_INCOMPATIBLE):
        yield RawFinding(issue.path, _option_message(issue), severity=Severity.ERROR)
    if data.get("cpuManagerPolicy") != "static":
        return  # the none policy refuses any option (kubelet-cpu-manager-not-static reports it)
    full = kv.option_true(options, "full-pcpus-only")
    if full or ("full-pcpus-only" in options and not isinstance(options["full-pcpus-only"], str)):
        return
    node = ctx.node
    if node is not None and int(getattr(node, "threads_per_core", 1)) < 2:
        return  # no SMT: every CPU is a whole core already
    edit = Edit("add", ("cpuManagerPolicyOptions", "full-pcpus-only"), "true")
    smt = "" if node is None else f" (the node has {node.threads_per_core} threads per core)"
    yield RawFinding(
        kv.field(data, "cpuManagerPolicyOptions") if "cpuManagerPolicyOptions" in data else ("cpuManagerPolicy",),
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


def _option_message(issue: ConfigIssue) -> str:
    """The words for a CPU manager policy option that stops the kubelet."""
    from kubegpu.kubelet import validation as kv
    from kubegpu.kubelet.features import CPU_ALPHA_GATE, CPU_BETA_GATE, CPU_OPTION_MATURITY

    name, value = issue.name, issue.value
    if issue.code == kv.CPU_OPTION_UNQUOTED:
        return (
            f"cpuManagerPolicyOptions.{name} is written as {value!r} without quotes: the field is a "
            "map of strings, so the kubelet cannot decode its configuration; quote it "
            f"('\"{str(value).lower()}\"')"
        )
    if issue.code == kv.CPU_OPTION_UNKNOWN:
        return (
            f"{name!r} is not a CPU manager policy option (known: "
            f"{', '.join(CPU_OPTION_MATURITY)}): the kubelet does not start (unknown CPU Manager "
            "Policy option)"
        )
    if issue.code == kv.CPU_OPTION_NOT_BOOL:
        return (
            f"cpuManagerPolicyOptions.{name} {value!r} is not a boolean: the kubelet does not "
            "start (bad value for option)"
        )
    if issue.code == kv.CPU_OPTION_ALPHA:
        return (
            f"{name} is an alpha option in Kubernetes {issue.detail}: without featureGates "
            f"{CPU_ALPHA_GATE}: true the kubelet does not start"
        )
    if issue.code == kv.CPU_OPTION_BETA:
        return f"{name} is a beta option and featureGates {CPU_BETA_GATE} is false: the kubelet does not start"
    return f"{value} and {name} cannot be used together: the kubelet does not start"  # an incompatible pair


# --- KG803 ---------------------------------------------------------------------------------------------------


def _check_topology_policy(doc: Document, ctx: RuleContext) -> Iterator[RawFinding]:
    issues = _issues(doc, ctx)
    if issues is None:
        return
    from kubegpu.kubelet import validation as kv

    data = as_mapping(doc.data)
    policy = data.get("topologyManagerPolicy", "none")
    path = kv.field(data, "topologyManagerPolicy")
    for issue in _of(issues, kv.TOPOLOGY_POLICY_UNKNOWN):
        yield RawFinding(
            issue.path,
            f"topologyManagerPolicy {issue.value!r} must be one of {', '.join(kv.TOPOLOGY_POLICIES)}: "
            "the kubelet does not start",
            severity=Severity.ERROR,
        )
        return
    for issue in _of(issues, kv.TOPOLOGY_SCOPE_UNKNOWN):
        yield RawFinding(
            issue.path,
            f"topologyManagerScope {issue.value!r} must be container or pod: the kubelet does not start",
            severity=Severity.ERROR,
        )
    for issue in _of(issues, kv.MEMORY_POLICY_UNKNOWN):
        yield RawFinding(
            issue.path,
            f"memoryManagerPolicy {issue.value!r} must be None or Static (capitalised): the kubelet does not start",
            severity=Severity.ERROR,
        )
    memory_policy = data.get("memoryManagerPolicy", "None")
    yield from _topology_advice(data, policy, memory_policy, path)
    for issue in _of(
        issues, kv.TM_OPTION_UNKNOWN, kv.TM_OPTION_UNQUOTED, kv.TM_OPTION_NOT_BOOL, kv.TM_MAX_NUMA_INVALID
    ):
        yield RawFinding(issue.path, _tm_option_message(issue), severity=Severity.ERROR)
    tm_options = as_mapping(data.get("topologyManagerPolicyOptions"))
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
    for issue in _of(issues, kv.TM_NUMA_LIMIT):
        numa = issue.value
        yield RawFinding(
            issue.path,
            f"node '{node.name if node is not None else ''}' has {numa} NUMA nodes (memory-only nodes count): with a "
            f"topology manager policy the kubelet refuses to start on more than {issue.detail}; set "
            f'topologyManagerPolicyOptions max-allowable-numa-nodes: "{numa}"',
            severity=Severity.ERROR,
        )


def _tm_option_message(issue: ConfigIssue) -> str:
    """The words for a topology manager policy option that stops the kubelet."""
    from kubegpu.kubelet import validation as kv
    from kubegpu.kubelet.features import TM_OPTION_MATURITY
    from kubegpu.kubelet.topologymanager.options import DEFAULT_MAX_ALLOWABLE_NUMA_NODES

    name, value = issue.name, issue.value
    if issue.code == kv.TM_OPTION_UNKNOWN:
        return (
            f"{name!r} is not a topology manager policy option (known: "
            f"{', '.join(TM_OPTION_MATURITY)}): the kubelet does not start"
        )
    if issue.code == kv.TM_OPTION_UNQUOTED:
        return (
            f"topologyManagerPolicyOptions.{name} is written as {value!r} without quotes: the "
            "field is a map of strings, so the kubelet cannot decode its configuration"
        )
    if issue.code == kv.TM_OPTION_NOT_BOOL:
        return f"prefer-closest-numa-nodes {value!r} is not a boolean: the kubelet does not start"
    return (
        f"max-allowable-numa-nodes {value!r} must be an integer of at least "
        f"{DEFAULT_MAX_ALLOWABLE_NUMA_NODES}: the kubelet does not start"
    )


def _topology_advice(data: Mapping[str, Any], policy: Any, memory_policy: Any, path: FieldPath) -> Iterator[RawFinding]:
    """What a valid topology manager policy leaves misaligned (none, best-effort; memory without hints)."""
    from kubegpu.kubelet import validation as kv

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
            kv.field(data, "memoryManagerPolicy"),
            f"topologyManagerPolicy {policy} aligns GPUs and CPUs, but memoryManagerPolicy None gives "
            "no memory hints: a pod's memory may sit on another NUMA node; consider Static (with "
            "reservedMemory)",
            severity=Severity.INFO,
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


def _check_reserved_memory(doc: Document, ctx: RuleContext) -> Iterator[RawFinding]:
    issues = _issues(doc, ctx)
    if issues is None:
        return
    from kubegpu.kubelet import validation as kv

    data = as_mapping(doc.data)
    entry_codes = (kv.RESERVED_MEMORY_NUMA_INVALID, kv.RESERVED_MEMORY_NUMA_MISSING)
    limit_codes = (kv.RESERVED_MEMORY_TYPE, kv.RESERVED_MEMORY_NOT_POSITIVE, kv.RESERVED_MEMORY_DUPLICATE)
    reported: set[FieldPath] = set()
    for issue in _of(issues, *entry_codes, *limit_codes):
        if issue.path in reported:
            continue  # a limit's first issue only
        reported.add(issue.path)
        yield RawFinding(issue.path, _reserved_memory_message(issue, ctx), severity=Severity.ERROR)
    bad = any(issue.code != kv.RESERVED_MEMORY_NUMA_MISSING for issue in _of(issues, *entry_codes, *limit_codes))
    if data.get("memoryManagerPolicy") != "Static" or bad:
        return
    yield from _reserved_memory_balance(data, ctx)


def _reserved_memory_message(issue: ConfigIssue, ctx: RuleContext) -> str:
    from kubegpu.kubelet import validation as kv

    name = issue.name
    if issue.code == kv.RESERVED_MEMORY_NUMA_INVALID:
        return f"reservedMemory[{issue.path[1]}] has no valid numaNode"
    if issue.code == kv.RESERVED_MEMORY_NUMA_MISSING:
        node = ctx.node
        numa_ids = set(node.numa_ids) if node is not None else set()
        return (
            f"reservedMemory names NUMA node {issue.numa}, which node '{node.name if node is not None else ''}' does "
            f"not have (it has {format_cpulist(numa_ids)}): the kubelet does not start"
        )
    if issue.code == kv.RESERVED_MEMORY_TYPE:
        return f"reservedMemory type {name!r} is not memory or hugepages-<size>: the kubelet configuration is invalid"
    if issue.code == kv.RESERVED_MEMORY_NOT_POSITIVE:
        return (
            f"reservedMemory {name} {issue.value!r} must be a quantity above zero: the kubelet configuration is invalid"
        )
    return f"reservedMemory repeats {name} for NUMA node {issue.numa}: the kubelet configuration is invalid"


def _reserved_memory_balance(data: Mapping[str, Any], ctx: RuleContext) -> Iterator[RawFinding]:
    """The Static memory manager's start-up check: per memory type, reservedMemory adds up to kube + system reserved
    (+ the hard-eviction threshold for memory)."""
    from kubegpu.kubelet import validation as kv
    from kubegpu.kubelet.memorymanager.reserved import is_memory_type

    totals: dict[str, int] = {}
    for _index, entry in kv.reserved_entries(data):
        for name, raw in as_mapping(entry.get("limits")).items():
            totals[str(name)] = totals.get(str(name), 0) + int(kv.quantity(raw) or 0)
    node = ctx.node
    capacity = sum(n.memory_bytes for n in node.numa_nodes) if node is not None else None
    required: dict[str, int | None] = {}
    explain: dict[str, str] = {}
    for section in ("kubeReserved", "systemReserved"):
        for name, raw in as_mapping(data.get(section)).items():
            if not is_memory_type(str(name)):
                continue
            value = kv.quantity(raw)
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
    from kubegpu.kubelet import validation as kv

    entries = kv.reserved_entries(data)
    others = 0
    zero_index: int | None = None
    for index, entry in entries:
        if entry.get("numaNode") == 0:
            zero_index = index if zero_index is None else zero_index
            continue
        value = kv.quantity(as_mapping(entry.get("limits")).get(name, 0))
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
    issues = _issues(doc, ctx)
    if issues is None:
        return
    from kubegpu.kubelet import validation as kv

    data = as_mapping(doc.data)
    for issue in _of(issues, kv.RESERVED_CPUS_INVALID):
        yield RawFinding(issue.path, issue.detail + ": the kubelet does not start", severity=Severity.ERROR)
        return
    reservation = kv.cpu_reservation(data)
    if reservation.cpus is not None:
        for issue in _of(issues, kv.RESERVED_CPUS_WITH_CGROUPS):
            yield RawFinding(
                issue.path,
                f"reservedSystemCPUs cannot be combined with {issue.name}: "
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
    for issue in _of(issues, kv.STATIC_WITHOUT_RESERVATION):
        yield RawFinding(
            issue.path,
            "the static CPU manager needs a CPU reservation (kubeReserved.cpu + systemReserved.cpu above "
            "zero, or reservedSystemCPUs): the kubelet does not start",
            severity=Severity.ERROR,
        )
    node = ctx.node
    if node is None:
        return
    for issue in _of(issues, kv.RESERVED_CPUS_OFFLINE):
        online = {cpu.id for cpu in node.cpus}
        yield RawFinding(
            issue.path,
            f"reservedSystemCPUs names CPUs {format_cpulist(issue.value)} that "
            f"node '{node.name}' does not have (online: {format_cpulist(online)}): the kubelet does not "
            "start",
            severity=Severity.ERROR,
        )
        return
    yield from _split_cores(data, reservation, node)


def _split_cores(data: Mapping[str, Any], reservation: Any, node: Any) -> Iterator[RawFinding]:
    """With full-pcpus-only, reserved CPUs that are not whole cores waste their sibling threads."""
    from kubegpu.kubelet import validation as kv

    threads = int(node.threads_per_core)
    static = data.get("cpuManagerPolicy") == "static"
    if not static or threads < 2 or not kv.option_true(_policy_options(data), "full-pcpus-only"):
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
            kv.field(data, "kubeReserved" if "kubeReserved" in data else "systemReserved"),
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
