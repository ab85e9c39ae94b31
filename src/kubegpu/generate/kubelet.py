"""`gen kubelet`: a KubeletConfiguration for one node that starts and admits the largest GPU pod.

Follows kubelet v1.35 through kubegpu.kubelet: static CPU manager (full-pcpus-only on SMT),
reservedSystemCPUs as whole cores on one NUMA node, memory manager Static with reservedMemory equal
to kubeReserved + systemReserved + the hard-eviction threshold, and the strictest topology policy
under which the model admits the pod; the model, not a copied example, makes every choice.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kubegpu.errors import InputError
from kubegpu.generate.output import Generated, Note, OutFile, YamlDoc
from kubegpu.generate.workload import load_workloads, pod_gpus, spec_requests
from kubegpu.kubelet import Admission, KubeletConfig, KubeletStartupError, NodeState, PodRequest
from kubegpu.kubelet.eviction import DEFAULT_EVICTION_HARD, MEMORY_AVAILABLE
from kubegpu.topology.cpulist import format_cpulist
from kubegpu.topology.model import NodeTopology
from kubegpu.units.quantity import parse_quantity

API_VERSION = "kubelet.config.k8s.io/v1beta1"
MiB = 2**20
GiB = 2**30
EVICTION_HARD = DEFAULT_EVICTION_HARD  # written out in full: the kubelet's defaults (five signals since v1.30)
POLICIES = ("single-numa-node", "restricted", "best-effort", "none")
DEFAULT_SHARE = 0.9  # of allocatable CPU and memory for the default pod shape (DaemonSets get the rest)
_SHAPE_RE = re.compile(r"^(?P<gpus>\d+)(:(?P<cpu>[^:]+)(:(?P<memory>[^:]+))?)?$")


@dataclass(frozen=True)
class PodShape:
    """The largest GPU pod the node must admit: GPUs, CPUs (millicores) and memory (bytes)."""

    gpus: int
    cpu_millis: int
    memory_bytes: int
    name: str = "largest-gpu-pod"
    source: str = "shape"
    spec: Mapping[str, Any] | None = None  # the real pod spec when read from a manifest

    def describe(self) -> str:
        cpus = self.cpu_millis / 1000
        cpu = str(int(cpus)) if cpus == int(cpus) else f"{cpus:g}"
        return f"{self.gpus} GPUs, {cpu} CPUs, {_mem(self.memory_bytes)} memory"


@dataclass(frozen=True)
class KubeletOptions:
    """What `gen kubelet` was asked for."""

    reserve_cores: int = 2
    kube_reserved_memory: str = "2Gi"
    system_reserved_memory: str = "2Gi"
    largest_gpu_pod: str | None = None


@dataclass(frozen=True)
class PolicyTrial:
    """One topology manager policy tried against the largest pod."""

    policy: str
    admitted: bool
    reason: str
    message: str
    why: str = ""


@dataclass(frozen=True)
class KubeletPlan:
    """The generated configuration and the evidence behind it."""

    config: dict[str, Any]
    shape: PodShape
    reserved_cpus: tuple[int, ...]
    reserved_numa: int
    trials: tuple[PolicyTrial, ...]
    admission: Admission

    @property
    def policy(self) -> str:
        return str(self.config["topologyManagerPolicy"])


def _mem(value: int) -> str:
    for suffix, size in (("Gi", GiB), ("Mi", MiB), ("Ki", 1024)):
        if value % size == 0:
            return f"{value // size}{suffix}"
    return str(value)


def _gpu_resource(node: NodeTopology) -> str:
    if not node.gpus:
        raise InputError(f"node {node.name!r} has no GPUs: gen kubelet sizes a GPU node")
    return node.gpus[0].resource_name


# --------------------------------------------------------------------------- reservation


def reserved_cores(node: NodeTopology, cores: int) -> tuple[int, tuple[int, ...]]:
    """`cores` whole physical cores (siblings included) on one NUMA node, lowest ids first.

    The NUMA node is the one with the fewest GPUs attached (ties: lowest id), so the CPUs closest to
    the GPUs stay allocatable.
    """
    if cores < 1:
        raise InputError("--reserve-cores must be at least 1 (the static CPU policy needs a reservation)")
    with_cpus = sorted({c.numa for c in node.cpus})
    gpus_on = {n: sum(1 for g in node.gpus if g.numa_node == n) for n in with_cpus}
    numa = min(with_cpus, key=lambda n: (gpus_on[n], n))
    core_ids = sorted(
        {c.core for c in node.cpus if c.numa == numa},
        key=lambda core: min(c.id for c in node.cpus if c.core == core),
    )
    if cores >= len(core_ids):
        raise InputError(
            f"--reserve-cores {cores}: NUMA node {numa} has only {len(core_ids)} cores (keep some for pods)"
        )
    chosen = set(core_ids[:cores])
    return numa, tuple(sorted(c.id for c in node.cpus if c.core in chosen))


# --------------------------------------------------------------------------- the pod


def parse_shape(text: str, node: NodeTopology, default_cpu: int, default_mem: int) -> PodShape:
    """`N`, `N:CPUS`, `N:CPUS:MEMORY` or `gpus=N,cpu=C,memory=M`; missing parts scale with N."""
    gpus_total = len(node.gpus)
    fields: dict[str, str] = {}
    if "=" in text:
        for part in text.split(","):
            key, _, value = part.partition("=")
            key = key.strip().lower()
            if key not in ("gpus", "gpu", "cpu", "cpus", "memory", "mem") or not value.strip():
                raise InputError(f"--largest-gpu-pod: cannot read {part!r} (use gpus=N,cpu=C,memory=M)")
            fields[{"gpu": "gpus", "cpus": "cpu", "mem": "memory"}.get(key, key)] = value.strip()
        if "gpus" not in fields:
            raise InputError("--largest-gpu-pod: gpus=N is required")
    else:
        match = _SHAPE_RE.match(text.strip())
        if not match:
            raise InputError(f"--largest-gpu-pod: {text!r} is not N, N:CPUS:MEMORY, gpus=N,... or a manifest file")
        fields = {k: v for k, v in match.groupdict().items() if v}
    try:
        gpus = int(fields["gpus"])
        cpu = parse_quantity(fields["cpu"]).millis if "cpu" in fields else None
        memory = parse_quantity(fields["memory"]).ceil if "memory" in fields else None
    except (ValueError, InputError) as err:
        raise InputError(f"--largest-gpu-pod: {err}") from err
    if gpus < 1 or gpus > gpus_total:
        raise InputError(f"--largest-gpu-pod: {gpus} GPUs, but node {node.name!r} has {gpus_total}")
    tpc = node.threads_per_core
    if cpu is None:
        cpu = (default_cpu * gpus // gpus_total) // (1000 * tpc) * 1000 * tpc
    if memory is None:
        memory = (default_mem * gpus // gpus_total) // GiB * GiB
    if cpu <= 0 or memory <= 0:
        raise InputError("--largest-gpu-pod: CPU and memory must be positive")
    return PodShape(gpus, cpu, memory)


def shape_from_manifest(path: str) -> PodShape:
    """The GPU pod template in `path` with the most GPUs (then CPUs): its per-pod requests."""
    best: tuple[int, int, PodShape] | None = None
    for workload in load_workloads([path]):
        for ref in workload.templates:
            spec = workload.pod_spec(ref)
            gpus = pod_gpus(spec)
            if gpus == 0:
                continue
            totals = spec_requests(spec)
            shape = PodShape(
                gpus,
                totals.get("cpu", 0),
                totals.get("memory", 0),
                name=workload.name or "pod",
                source=f"{workload.where()} {workload.kind}/{workload.name}",
                spec=spec,
            )
            key = (gpus, shape.cpu_millis, shape)
            if best is None or key[:2] > best[:2]:
                best = key
    if best is None:
        raise InputError("no pod template requesting GPUs", file=path)
    return best[2]


def pod_request(shape: PodShape, resource: str) -> PodRequest:
    """What the kubelet model admits: the manifest's pod spec, or the shape as one container."""
    if shape.spec is not None:
        return PodRequest.from_pod_spec(shape.name, shape.spec, source=shape.source)
    cpu = shape.cpu_millis
    cpu_text = str(cpu // 1000) if cpu % 1000 == 0 else f"{cpu}m"
    amounts = {"cpu": cpu_text, "memory": str(shape.memory_bytes), resource: shape.gpus}
    spec = {"containers": [{"name": "main", "image": "x", "resources": {"requests": amounts, "limits": amounts}}]}
    return PodRequest.from_pod_spec(shape.name, spec, source=shape.source)


# --------------------------------------------------------------------------- the configuration


def _config(
    node: NodeTopology,
    options: KubeletOptions,
    reserved: Sequence[int],
    numa: int,
    policy: str,
) -> dict[str, Any]:
    kube_mem = parse_quantity(options.kube_reserved_memory).ceil
    sys_mem = parse_quantity(options.system_reserved_memory).ceil
    eviction = parse_quantity(EVICTION_HARD[MEMORY_AVAILABLE]).ceil
    cfg: dict[str, Any] = {"apiVersion": API_VERSION, "kind": "KubeletConfiguration"}
    cfg["cpuManagerPolicy"] = "static"
    if node.threads_per_core > 1:
        cfg["cpuManagerPolicyOptions"] = {"full-pcpus-only": "true"}
    cfg["reservedSystemCPUs"] = format_cpulist(reserved)
    cfg["kubeReserved"] = {"memory": options.kube_reserved_memory}
    cfg["systemReserved"] = {"memory": options.system_reserved_memory}
    cfg["evictionHard"] = dict(EVICTION_HARD)
    cfg["memoryManagerPolicy"] = "Static"
    cfg["reservedMemory"] = [{"numaNode": numa, "limits": {"memory": _mem(kube_mem + sys_mem + eviction)}}]
    cfg["topologyManagerPolicy"] = policy
    cfg["topologyManagerScope"] = "pod"
    tm_options: dict[str, str] = {}
    numa_ids = node.numa_ids
    if policy in ("restricted", "best-effort") and len(numa_ids) > 2:
        tm_options["prefer-closest-numa-nodes"] = "true"
    if len(numa_ids) > 8 and policy != "none":
        tm_options["max-allowable-numa-nodes"] = str(len(numa_ids))
    if tm_options:
        cfg["topologyManagerPolicyOptions"] = tm_options
    return cfg


def _allocatable(node: NodeTopology, options: KubeletOptions, reserved: int) -> tuple[int, int]:
    # host memory on NUMA nodes with CPUs: memory-only nodes (GPU HBM onlined as NUMA memory on
    # Grace systems) count in the kubelet's capacity but are not what a pod's memory request means
    with_cpus = {c.numa for c in node.cpus}
    total_mem = sum(n.memory_bytes for n in node.numa_nodes if n.id in with_cpus)
    reservation = (
        parse_quantity(options.kube_reserved_memory).ceil
        + parse_quantity(options.system_reserved_memory).ceil
        + parse_quantity(EVICTION_HARD[MEMORY_AVAILABLE]).ceil
    )
    cpu = (node.num_cpus - reserved) * 1000
    return int(cpu * DEFAULT_SHARE), int((total_mem - reservation) * DEFAULT_SHARE)


def plan(node: NodeTopology, options: KubeletOptions) -> KubeletPlan:
    """Choose every setting, proving each with the kubelet model; InputError when impossible."""
    resource = _gpu_resource(node)
    for flag, text in (
        ("--kube-reserved-memory", options.kube_reserved_memory),
        ("--system-reserved-memory", options.system_reserved_memory),
    ):
        if parse_quantity(text).ceil <= 0:
            raise InputError(f"{flag} must be positive")
    numa, reserved = reserved_cores(node, options.reserve_cores)
    cpu_default, mem_default = _allocatable(node, options, len(reserved))
    spec = options.largest_gpu_pod
    if spec is None:
        shape = parse_shape(str(len(node.gpus)), node, cpu_default, mem_default)
        shape = PodShape(
            shape.gpus,
            shape.cpu_millis,
            shape.memory_bytes,
            source="default: every GPU, 90% of allocatable CPU and host memory",
        )
    elif re.match(r"^[\d:=,a-zA-Z.]+$", spec) and not spec.endswith((".yaml", ".yml", ".json")):
        shape = parse_shape(spec, node, cpu_default, mem_default)
        shape = PodShape(shape.gpus, shape.cpu_millis, shape.memory_bytes, source=f"--largest-gpu-pod {spec}")
    else:
        shape = shape_from_manifest(spec)
    if shape.gpus > len(node.gpus):
        raise InputError(
            f"the largest GPU pod ({shape.source}) asks for {shape.gpus} GPUs but node "
            f"{node.name!r} has {len(node.gpus)}: no kubelet configuration admits it"
        )
    pod = pod_request(shape, resource)
    trials: list[PolicyTrial] = []
    for policy in POLICIES:
        cfg = _config(node, options, reserved, numa, policy)
        try:
            state = NodeState(node, KubeletConfig.from_dict(cfg, source="generated"))
        except KubeletStartupError as err:
            raise InputError(f"generated configuration would not start the kubelet: {err}") from err
        result = state.admit(pod)
        why = next((ln.strip()[len("why: ") :] for ln in result.explain() if "why:" in ln), "")
        trials.append(PolicyTrial(policy, result.admitted, result.reason, result.message, why))
        if result.admitted:
            return KubeletPlan(cfg, shape, reserved, numa, tuple(trials), result)
    last = trials[-1]
    raise InputError(
        f"node {node.name!r} cannot admit the largest GPU pod ({shape.describe()}) under any "
        f"topology policy: {last.reason}: {last.message}"
    )


# --------------------------------------------------------------------------- the document


def _notes(node: NodeTopology, options: KubeletOptions, p: KubeletPlan) -> list[Note]:
    cfg = p.config
    tpc = node.threads_per_core
    siblings = "siblings included" if tpc > 1 else "no SMT"
    gpus_here = sum(1 for g in node.gpus if g.numa_node == p.reserved_numa)
    notes = [
        Note(
            ("cpuManagerPolicy",),
            "static: containers of Guaranteed pods with whole CPUs get exclusive CPUs, which the\n"
            "topology manager aligns with the pod's GPUs; everything else shares the rest.",
        ),
        Note(
            ("reservedSystemCPUs",),
            f"{options.reserve_cores} whole core(s) = {len(p.reserved_cpus)} CPUs ({siblings}) on "
            f"NUMA node {p.reserved_numa}: fewest GPUs there ({gpus_here}; ties: lowest id),\n"
            "so the CPUs next to most GPUs stay allocatable. Replaces the CPU part of\n"
            "kubeReserved/systemReserved. Pin system daemons here (systemd CPUAffinity)."
            + ("\nWhole cores: a half-reserved core would waste its sibling under full-pcpus-only." if tpc > 1 else ""),
        ),
        Note(
            ("kubeReserved",),
            "Memory only: the CPU reservation is reservedSystemCPUs. No kubeReservedCgroup or\n"
            "systemReservedCgroup: the kubelet refuses them together with reservedSystemCPUs.",
        ),
        Note(
            ("evictionHard",),
            "Written out in full: an explicit map replaces the kubelet's defaults, and its\n"
            "memory.available is part of the reservedMemory sum below.",
        ),
        Note(
            ("memoryManagerPolicy",),
            "Static: Guaranteed pods' memory comes from the NUMA node(s) of their CPUs and GPUs.",
        ),
    ]
    if tpc > 1:
        notes.append(
            Note(
                ("cpuManagerPolicyOptions", "full-pcpus-only"),
                f"SMT node ({tpc} threads per core): exclusive CPUs come as whole cores, no noisy\n"
                f"sibling. Guaranteed pods must ask for a multiple of {tpc} CPUs "
                "(else SMTAlignmentError).",
            )
        )
    limit = cfg["reservedMemory"][0]["limits"]["memory"]
    notes.append(
        Note(
            ("reservedMemory", 0),
            f"{options.kube_reserved_memory} kubeReserved + {options.system_reserved_memory} "
            f"systemReserved + {EVICTION_HARD[MEMORY_AVAILABLE]} eviction = {limit}, exactly:\n"
            "the kubelet does not start when the sum differs. Put on the reserved CPUs' node.",
        )
    )
    rejected = [t for t in p.trials if not t.admitted]
    policy_lines = [
        f"{p.policy}: the strictest policy under which the kubelet model admits the largest GPU",
        f"pod ({p.shape.describe()}; {p.shape.source}).",
    ]
    for trial in rejected:
        policy_lines.append(f"{trial.policy} would reject it: {trial.reason}:")
        policy_lines.append(f"  {trial.message}")
        if trial.why:
            policy_lines.extend(textwrap.wrap(trial.why, 88, initial_indent="  (", subsequent_indent="   "))
            policy_lines[-1] += ")"
    unplaced = sum(1 for g in node.gpus if g.numa_node is None)
    if not rejected:
        what = "CPUs and memory" if unplaced else "CPUs, memory and GPUs"
        policy_lines.append(f"It fits one NUMA node: every pod's {what} share one.")
    if unplaced:
        policy_lines.append(
            f"{unplaced} GPU(s) have no NUMA node (sysfs numa_node -1): "
            "the device plugin sends no\n"
            "hint for them, so no policy can align them with the pod's CPUs."
        )
    notes.append(Note(("topologyManagerPolicy",), "\n".join(policy_lines)))
    notes.append(
        Note(
            ("topologyManagerScope",),
            "pod: one decision for the whole pod, so all its containers share the same NUMA\n"
            "node(s) (container scope can split a pod across nodes).",
        )
    )
    tm = cfg.get("topologyManagerPolicyOptions") or {}
    if "prefer-closest-numa-nodes" in tm:
        notes.append(
            Note(
                ("topologyManagerPolicyOptions", "prefer-closest-numa-nodes"),
                f"{len(node.numa_ids)} NUMA nodes: among equally wide choices take "
                "the closest ones\n"
                "(lowest average distance) instead of the lowest ids.",
            )
        )
    if "max-allowable-numa-nodes" in tm:
        notes.append(
            Note(
                ("topologyManagerPolicyOptions", "max-allowable-numa-nodes"),
                "More than 8 NUMA nodes: without this the kubelet refuses to start.",
            )
        )
    return notes


def generate(node: NodeTopology, options: KubeletOptions) -> tuple[Generated, KubeletPlan]:
    p = plan(node, options)
    assignment = p.admission.containers[0] if p.admission.containers else None
    evidence = []
    if assignment is not None:
        cpus = format_cpulist(assignment.exclusive_cpus) if assignment.exclusive_cpus else "shared"
        numa = "any" if assignment.numa_affinity is None else ",".join(map(str, assignment.numa_affinity))
        gpus = ",".join(next(iter(assignment.devices.values()), ()))
        evidence.append(f"Model check: admitted with CPUs {cpus}, GPUs {gpus}, NUMA node(s) {numa}.")
    header = (
        f"KubeletConfiguration for node {node.name!r} ({node.num_cpus} CPUs, "
        f"{len(node.numa_ids)} NUMA "
        f"nodes, {len(node.gpus)} GPUs), kubelet v1.35.",
        "Generated by kubegpu gen kubelet and checked with its kubelet model: the kubelet starts",
        "with it and admits the largest GPU pod. Changing these settings on a running node needs",
        "a drain and removing /var/lib/kubelet/cpu_manager_state and memory_manager_state.",
        *evidence,
    )
    doc = YamlDoc(p.config, header=header, notes=tuple(_notes(node, options, p)))
    return Generated((OutFile("kubelet-config.yaml", (doc,)),)), p
