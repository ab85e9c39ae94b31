"""Guaranteed QoS rules: Guaranteed QoS and whole, SMT-aligned CPUs for GPU pods (static CPU manager).

Follows kubernetes v1.35 QoS (pkg/apis/core/v1/helper/qos) and the static CPU manager's admission.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from decimal import ROUND_CEILING, Decimal
from typing import Any

import kubegpu.manifests.pod as podmodel
from kubegpu.errors import QuantityError
from kubegpu.manifests import ContainerRef, FieldPath, PodTemplate, format_path, is_mapping, memoised
from kubegpu.manifests.accelerators import is_accelerator
from kubegpu.manifests.gpu_containers import all_container_resources, gpu_containers
from kubegpu.manifests.resources import ResourceValue, container_resources, template_pod
from kubegpu.ruleapi import Edit, Fix, RawFinding, Rule, RuleContext, Safety, Severity, Target
from kubegpu.ruleapi.options import RuleOption, boolean, whole_number
from kubegpu.serving.kserve_supply import Supply, effective, supply
from kubegpu.units import parse_quantity
from kubegpu.units.quantity import format_quantity

_PRACTICE = "Guaranteed QoS and CPU alignment"


_QOS_RESOURCES = ("cpu", "memory")


def qos_class(template: PodTemplate) -> str:
    """The pod's QoS class as the API server computes it (the one pod model's; invalid quantities count as
    unset, invalid-quantity reports them); worked out once per template."""
    return memoised(template, "qos.qos_class", _qos_class, template)


def _qos_class(template: PodTemplate) -> str:
    return podmodel.qos_class(template_pod(template))


_Values = Mapping[str, ResourceValue]


def _pod_level(template: PodTemplate) -> tuple[_Values, _Values, FieldPath] | None:
    """Pod-level `spec.resources` (requests, limits, its path), or None when the pod spec has none."""
    resources = template.spec.get("resources")
    if not is_mapping(resources) or template.volumes_field is None:
        return None  # (a TrainJob's trainer has `resources` of its own container, not pod-level ones)
    path: FieldPath = (*template.path, "resources")
    sections: list[dict[str, ResourceValue]] = []
    for section in ("requests", "limits"):
        values = resources.get(section)
        out: dict[str, ResourceValue] = {}
        for name, raw in values.items() if isinstance(values, Mapping) else ():
            try:
                out[str(name)] = ResourceValue(str(name), raw, (*path, section, str(name)), parse_quantity(raw))
            except QuantityError as err:
                out[str(name)] = ResourceValue(str(name), raw, (*path, section, str(name)), None, str(err))
        sections.append(out)
    return sections[0], sections[1], path


def _problems(
    requests: _Values, limits: _Values, owner: FieldPath, defaulted: Mapping[str, Decimal] | None = None
) -> tuple[list[str], list[Edit] | None]:
    """What keeps one set of requests and limits from Guaranteed, and the edits that fix it (None when no edit
    can: the caller builds the Fix only when it reports the problems). `owner`: the path of the pod spec or
    container whose `resources` they are (an edit's path is built only for a problem).

    `defaulted` are the requests after API defaulting where that is not simply the limit (pod-level requests
    default to the containers' total).
    """
    problems: list[str] = []
    edits: list[Edit] = []
    can_fix = True
    for name in _QOS_RESOURCES:
        limit = limits.get(name)
        request = requests.get(name)
        if (limit is not None and limit.quantity is None) or (request is not None and request.quantity is None):
            # invalid-quantity reports it; the QoS model reads it as unset, so no edit of the rest makes the pod
            # Guaranteed: no fix (and a fix of None with no problems tells the caller so).
            can_fix = False
            continue
        if limit is None:
            if request is not None and request.quantity is not None and request.quantity.value > 0:
                problems.append(f"{name} limit missing")
                edits.append(Edit("add", (*owner, "resources", "limits", name), request.raw))
            else:
                problems.append(f"no {name} request or limit")
                can_fix = False
            continue
        assert limit.quantity is not None
        if limit.quantity.value <= 0:
            problems.append(f"{name} limit is {limit.raw} (a zero limit is no limit)")
            can_fix = False
            continue
        if request is None:
            default = (defaulted or {}).get(name, limit.quantity.value)
            if default != limit.quantity.value:
                problems.append(
                    f"{name} request defaults to the containers' {format_quantity(default)}, not the limit {limit.raw}"
                )
                edits.append(Edit("add", (*owner, "resources", "requests", name), limit.raw))
            continue  # otherwise the API server defaults the request to the limit
        assert request.quantity is not None
        if request.quantity.value != limit.quantity.value:
            problems.append(f"{name} request {request.raw} != limit {limit.raw}")
            edits.append(Edit("replace", request.path, limit.raw))
    return problems, edits if can_fix else None


def _equal_fix(edits: list[Edit] | None) -> Fix | None:
    # Adding a limit caps the container; raising a request changes scheduling: both are unsafe.
    return (
        Fix("make requests equal limits (Guaranteed QoS)", Safety.UNSAFE, tuple(edits)) if edits is not None else None
    )


_NOT_GUARANTEED = (
    "the pod is not Guaranteed, so the static CPU manager gives it no exclusive CPUs and the "
    "memory manager no NUMA-local memory"
)


_CONTAINER_KIND_WORDS = {"container": "container", "init": "init container", "sidecar": "sidecar"}


def _check_guaranteed(template: PodTemplate, ctx: RuleContext) -> Iterator[RawFinding]:
    """Every container, init and sidecar included, needs cpu and memory limits equal to requests.

    With pod-level resources (`spec.resources`, beta and on by default since v1.34) the pod's QoS class comes
    from them alone, and the v1.35 static CPU and memory managers skip the pod unless the alpha
    PodLevelResourceManagers gate is on.
    """
    pod_level = _pod_level(template)
    if pod_level is not None:
        yield from _check_pod_level_guaranteed(template, pod_level)
        return
    yield from _check_containers_guaranteed(template)


def _check_pod_level_guaranteed(
    template: PodTemplate, pod_level: tuple[_Values, _Values, FieldPath]
) -> Iterator[RawFinding]:
    """Pod-level resources decide the QoS class alone; the CPU and memory managers skip such pods."""
    guaranteed = qos_class(template) == podmodel.GUARANTEED
    model = template_pod(template).resources
    requests, limits, _path = pod_level
    problems, pod_edits = _problems(requests, limits, template.path, model.requests if model is not None else None)
    if not guaranteed:
        if not pod_level[0] and not pod_level[1]:
            problems = [
                "an empty `resources` at pod level decides the QoS class alone (BestEffort), whatever "
                "the containers set; remove it"
            ]
        if problems:
            yield RawFinding(
                pod_level[2],
                f"pod-level resources: {'; '.join(problems)}: {_NOT_GUARANTEED}",
                _equal_fix(pod_edits),
            )
    else:
        yield RawFinding(
            pod_level[2],
            "pod-level resources make the pod Guaranteed, but the static CPU and memory managers skip pods "
            "with pod-level resources unless the alpha PodLevelResourceManagers feature gate is on: the GPU "
            "pod gets no exclusive CPUs or NUMA-local memory; set equal cpu and memory requests and limits "
            "on every container instead",
            None,
            Severity.INFO,
        )


def _check_containers_guaranteed(template: PodTemplate) -> Iterator[RawFinding]:
    """Every container, init and sidecar included, with cpu and memory limits equal to requests (KServe's fill
    included); one finding naming them all."""
    containers = template.containers
    supplies = [supply(template, container) for container in containers]  # in the order of the containers
    # Without KServe's fill, the sums of requests and limits decide (ComputePodQOS), as the kubelet sees the pod:
    # asked at the first container with a problem, since a pod with none yields nothing either way.
    sums_decide = not any(supplies)
    # One finding per pod template naming every container that breaks Guaranteed QoS; its fix covers them all
    # (init containers and sidecars included) or is withheld, since a partial fix leaves the pod Burstable.
    parts: list[str] = []
    undecided: list[tuple[ContainerRef, Supply]] = []  # containers whose cpu and memory a runtime not in the input sets
    edits: list[Edit] = []
    anchor: FieldPath | None = None
    fixable = True
    unreadable: list[str] = []
    for container, supplied in zip(containers, supplies, strict=True):
        res = container_resources(container)
        requests, limits = res.requests, res.limits
        if supplied is not None and supplied.known:
            requests, limits = effective(requests, supplied.requests), effective(limits, supplied.limits)
        problems, own_edits = _problems(requests, limits, container.path)
        if supplied is not None and not supplied.known and problems and not _unequal(res.requests, res.limits):
            undecided.append((container, supplied))  # what the runtime sets decides; nothing written is wrong
            continue
        if supplied is not None and problems:
            own_edits = _pin_edits(res)  # KServe's values are not in this file: pin this container's own instead
        if own_edits is None:
            fixable = False
            if not problems:
                unreadable.append(f"'{_label(container)}'")
        if not problems:
            continue
        if anchor is None and sums_decide and qos_class(template) == podmodel.GUARANTEED:
            return
        what = _CONTAINER_KIND_WORDS[container.kind]
        source = (
            f"; KServe fills in what it leaves out from {supplied.source}"
            if supplied is not None and supplied.known
            else ""
        )
        parts.append(f"{what} '{_label(container)}' ({'; '.join(problems)}{source})")
        if anchor is None:
            anchor = res.resources_path if "resources" in container.data else container.path
        if own_edits is not None:
            edits.extend(own_edits)
    if anchor is None:
        yield from _undecided(undecided)
        return
    fix_all = (
        Fix(
            f"make requests equal limits in every container ({len(parts)}) for Guaranteed QoS",
            Safety.UNSAFE,
            tuple(edits),
        )
        if fixable and edits
        else None
    )
    hint = (
        f"; no automatic fix while {', '.join(unreadable)} has a cpu or memory value that is not a quantity "
        "(invalid-quantity)"
        if unreadable
        else ""
    )
    yield RawFinding(anchor, f"{', '.join(parts)}: {_NOT_GUARANTEED}{hint}", fix_all)


def _undecided(undecided: Sequence[tuple[ContainerRef, Supply]]) -> Iterator[RawFinding]:
    """A container whose cpu and memory come from a ServingRuntime not in the input: its QoS is not known here."""
    if undecided:
        container, supplied = undecided[0]
        yield RawFinding(
            (*container.path, "resources") if "resources" in container.data else container.path,
            f"KServe builds container '{_label(container)}' on {supplied.source}, taking the cpu and memory it "
            "leaves out from that runtime's container: whether the GPU pod is Guaranteed depends on them; give "
            "the runtime (or this predictor) equal cpu and memory requests and limits",
            None,
            Severity.INFO,
        )


def _pin_edits(res: Any) -> list[Edit] | None:
    """Equal cpu and memory requests and limits written on the container itself, so that nothing KServe adds
    (default resources, a ServingRuntime's) decides its QoS; None when a value is missing or not positive, or when
    nothing needs writing."""
    edits: list[Edit] = []
    for name in _QOS_RESOURCES:
        request, limit = res.requests.get(name), res.limits.get(name)
        chosen = limit or request
        if chosen is None or chosen.quantity is None or chosen.quantity.value <= 0:
            return None
        if limit is None:
            edits.append(Edit("add", (*res.resources_path, "limits", name), chosen.raw))
        if request is None:
            edits.append(Edit("add", (*res.resources_path, "requests", name), chosen.raw))
        elif limit is not None and request.quantity != limit.quantity:
            edits.append(Edit("replace", request.path, limit.raw))
    return edits or None


def _unequal(requests: _Values, limits: _Values) -> bool:
    """A cpu or memory request written with a different limit: not Guaranteed, whatever a runtime adds."""
    for name in _QOS_RESOURCES:
        request, limit = requests.get(name), limits.get(name)
        if (
            request is not None
            and limit is not None
            and request.quantity
            and limit.quantity
            and request.quantity.value != limit.quantity.value
        ):
            return True
    return False


def _label(container: ContainerRef) -> str:
    """The container's name, or the field that holds it (a KServe model, an Argo step, a TrainJob trainer)."""
    return container.name or format_path(container.path)


def _cpu_value(ctx: RuleContext, template: PodTemplate) -> Iterator[tuple[Any, Any, Decimal]]:
    for container, res in gpu_containers(template, ctx.accelerator_resources):
        cpu = res.limits.get("cpu") or res.requests.get("cpu")
        if cpu is None or cpu.quantity is None:
            continue
        yield container, res, cpu.quantity.value


def _cpu_edits(res: Any, value: Decimal) -> tuple[Edit, ...]:
    text = format_quantity(value)
    edits = []
    for section in (res.requests, res.limits):
        entry = section.get("cpu")
        if entry is not None:
            edits.append(Edit("replace", entry.path, text))
    return tuple(edits)


def _check_cpu_integer(template: PodTemplate, ctx: RuleContext) -> Iterator[RawFinding]:
    for container, res, value in _cpu_value(ctx, template):
        if value <= 0 or podmodel.exclusive_cpus(podmodel.GUARANTEED, value):
            continue  # whole CPUs: pinned once the pod is Guaranteed
        rounded = value.to_integral_value(rounding=ROUND_CEILING)
        yield RawFinding(
            res.resources_path,
            f"container '{_label(container)}' asks for {format_quantity(value)} CPUs: only whole CPUs get exclusive "
            f"cores from the static CPU manager; use {rounded}",
            Fix(f"round CPUs up to {rounded}", Safety.UNSAFE, _cpu_edits(res, rounded)),
        )


# x86 GPU servers run two threads per core; Grace and other SMT-1 hosts say so with --smt 1, --node or the option.
DEFAULT_THREADS_PER_CORE = 2


def _smt_level(ctx: RuleContext) -> tuple[int, bool]:
    """Threads per core of the target nodes and whether it is assumed. The command line decides before the
    configuration: `--smt N`, then the `--node` profile, then the rule's `threads-per-core` option, else two."""
    if ctx.smt:
        return ctx.smt, False
    node = ctx.node
    if node is not None:
        return int(getattr(node, "threads_per_core", 1)), False
    for option in (THREADS_PER_CORE, SMT):
        level = option.read(ctx, "gpu-cpu-not-smt-multiple")
        if level is not None:
            return level, False
    return DEFAULT_THREADS_PER_CORE, True


# SMT levels in use: 1 (Grace, most Arm), 2 (x86), 4 and 8 (POWER).
THREADS_PER_CORE = RuleOption[int | None](
    name="threads-per-core",
    help="threads per core of the target nodes when no --smt or --node is given (1 for Grace and other hosts "
    "without SMT); the command line decides before it",
    expected="a whole number from 1 to 8",
    example="1",
    parse=whole_number(1, 8),
    default=None,
    default_text="2 is assumed, and each finding says so",
)
SMT = replace(THREADS_PER_CORE, name="smt", help="older name of threads-per-core", default_text="none")
FULL_PCPUS_ONLY = RuleOption[bool | None](
    name="full-pcpus-only",
    help="whether the target nodes' kubelets run the static CPU manager with full-pcpus-only when no "
    "--kubelet-config is given (false where they do not, as on most managed node pools: the check is then off)",
    expected="true or false",
    example="false",
    parse=boolean,
    default=None,
    default_text="assumed true, and each finding says so",
)


def _full_pcpus_only_off(ctx: RuleContext) -> bool:
    """A given KubeletConfiguration that does not reject odd CPU counts: no static CPU manager policy (no exclusive
    CPUs at all; the none policy refuses policy options), or no full-pcpus-only option (odd counts share cores);
    without one, the `full-pcpus-only` option set to false."""
    config = ctx.kubelet_config
    if not is_mapping(config):
        return FULL_PCPUS_ONLY.read(ctx, "gpu-cpu-not-smt-multiple") is False
    if str(config.get("cpuManagerPolicy") or "none") != "static":
        return True
    options = config.get("cpuManagerPolicyOptions")
    return not (isinstance(options, Mapping) and str(options.get("full-pcpus-only")).lower() == "true")


def _smt_check(ctx: RuleContext) -> tuple[int, bool] | None:
    """The SMT level to check against and whether it is assumed; None when the run checks nothing (one thread
    per core, or a kubelet configuration that accepts odd counts)."""
    smt, assumed = _smt_level(ctx)
    return None if smt < 2 or _full_pcpus_only_off(ctx) else (smt, assumed)


def _check_cpu_smt(template: PodTemplate, ctx: RuleContext) -> Iterator[RawFinding]:
    check = memoised(ctx, "qos.smt_check", _smt_check, ctx)  # the run's options and kubelet: read once per run
    if check is None:
        return
    smt, assumed = check
    for container, res, value in _cpu_value(ctx, template):
        pinned = podmodel.exclusive_cpus(podmodel.GUARANTEED, value)  # the CPUs it pins once the pod is Guaranteed
        if not pinned or pinned % smt == 0:
            continue
        # Asked only here, where most pods never get: pods with pod-level resources get no exclusive CPUs, so no
        # SMT alignment check either.
        if _pod_level(template) is not None:
            return
        rounded = (pinned + smt - 1) // smt * smt
        # Only Guaranteed pods get exclusive CPUs, so only they are rejected; a Burstable pod will be once
        # gpu-pod-not-guaranteed is fixed, so it is still reported, as a warning.
        guaranteed = qos_class(template) == podmodel.GUARANTEED
        when = (
            "the kubelet rejects the pod"
            if guaranteed
            else "once the pod is Guaranteed (gpu-pod-not-guaranteed), the kubelet rejects it"
        )
        node = (
            (
                f"the {smt} threads per core assumed for x86 GPU servers (give --smt 1, --node or the "
                "threads-per-core option for Grace and other hosts without SMT)"
            )
            if assumed
            else f"the node's {smt} threads per core"
        )
        given_kubelet = isinstance(ctx.kubelet_config, Mapping)
        stated = given_kubelet or FULL_PCPUS_ONLY.read(ctx, "gpu-cpu-not-smt-multiple") is not None
        option = (
            "with full-pcpus-only"
            if stated
            else "assuming the static CPU manager runs with full-pcpus-only (not every node pool does: set "
            "full-pcpus-only = false under [rules.gpu-cpu-not-smt-multiple] or give --kubelet-config where it "
            "does not),"
        )
        yield RawFinding(
            res.resources_path,
            f"container '{_label(container)}' asks for {pinned} CPUs, not a multiple of {node}: {option} "
            f"{when} (SMTAlignmentError); use {rounded}",
            Fix(f"round CPUs up to {rounded} (a multiple of {smt})", Safety.UNSAFE, _cpu_edits(res, Decimal(rounded))),
            None if guaranteed and not assumed else Severity.WARNING,
        )


def _check_gpu_request_limit(template: PodTemplate, ctx: RuleContext) -> Iterator[RawFinding]:
    """Extended resources: integer, limit required, request equal to limit (API validation)."""
    prefixes = ctx.accelerator_resources
    for container, res in all_container_resources(template):
        requests, limits = res.requests, res.limits
        # The accelerator test once per name (a request named in the limits takes the limit's answer), and no merged
        # dict per container, which no other rule reads.
        accel_limits = {name: value for name, value in limits.items() if is_accelerator(name, prefixes)}
        accel_requests = [
            (name, value)
            for name, value in requests.items()
            if (name in accel_limits if name in limits else is_accelerator(name, prefixes))
        ]
        for name, request in accel_requests:
            limit = accel_limits.get(name)
            if limit is None:
                yield RawFinding(
                    request.path,
                    f"container '{_label(container)}' requests {name} without a limit: the API server rejects "
                    "extended resources without limits (requests must equal limits)",
                    Fix(
                        f"set the {name} limit to the request",
                        Safety.SAFE,
                        (Edit("add", (*res.resources_path, "limits", name), request.raw),),
                    ),
                )
            elif (
                request.quantity is not None
                and limit.quantity is not None
                and request.quantity.value != limit.quantity.value
            ):
                yield RawFinding(
                    request.path,
                    f"container '{_label(container)}': {name} request {request.raw} != limit {limit.raw}; the API "
                    "server rejects extended resources whose request differs from the limit",
                )
        # Each accelerator once, requests' order first, its limit's value where it has one.
        values = [accel_limits.get(name, request) for name, request in accel_requests]
        values += [limit for name, limit in accel_limits.items() if name not in requests]
        for value in values:
            # (a YAML integer is whole: most accelerator counts are written so, and need no Decimal test)
            if type(value.raw) is not int and value.quantity is not None and not value.quantity.is_integer():
                yield RawFinding(
                    value.path,
                    f"container '{_label(container)}': {value.name} is {value.raw}; extended "
                    "resources must be whole numbers (use a GPU-sharing mechanism for fractions)",
                )


GPU_POD_NOT_GUARANTEED = Rule(
    code="KG101",
    name="gpu-pod-not-guaranteed",
    practice=_PRACTICE,
    severity=Severity.WARNING,
    summary="A GPU pod is not in the Guaranteed QoS class (every container: cpu and memory requests = limits).",
    target=Target.TEMPLATE,
    check=_check_guaranteed,
    fixable=True,
    rationale="The static CPU manager pins CPUs and the memory manager places memory only for Guaranteed "
    "pods; a Burstable GPU pod shares CPUs with everything else on the node, and its DataLoader and "
    "launch threads starve the GPU. Init containers and restartable sidecars count: one Burstable "
    "sidecar makes the whole pod Burstable. Only cpu and memory count (not hugepages or GPUs), a zero limit "
    "is no limit, and a missing request defaults to its limit. With pod-level `spec.resources` the class "
    "comes from those alone (an empty `resources: {}` makes the pod BestEffort, and a missing pod-level request "
    "defaults to the containers' total request, not to the limit), and the static CPU and memory managers skip "
    "the pod unless the alpha PodLevelResourceManagers gate is on (reported as info). `kubegpu admit` and the "
    "simulator compute the same class. One finding per pod template names every container that breaks "
    "Guaranteed QoS; its unsafe fix covers all of them (init containers, restartable sidecars and every app "
    "container) or is withheld, since a partial fix leaves the pod Burstable: it is withheld when a container "
    "has neither a request nor a limit to copy, a zero limit, or a cpu or memory value that is not a quantity. "
    "A KServe InferenceService is judged as KServe completes it: a framework predictor (`pytorch:`, "
    "`tensorflow:`, ...) or a custom predictor's first container gets inferenceservice-config's default cpu 1 "
    "and memory 2Gi for each request and limit it leaves out (so limits alone are Burstable there, and a GPU "
    "limit alone is Guaranteed), and a `model:` predictor takes what it leaves out from its ServingRuntime: "
    "read from the input when it is there, assumed as KServe ships it for its model format (cpu 1, memory 2Gi), "
    "and otherwise reported at info, since that runtime decides.",
    bad_example='resources:\n  requests: {cpu: "8", memory: 64Gi, nvidia.com/gpu: 1}\n  limits: {nvidia.com/gpu: 1}',
    good_example='resources:\n  requests: {cpu: "8", memory: 64Gi, nvidia.com/gpu: 1}\n'
    '  limits: {cpu: "8", memory: 64Gi, nvidia.com/gpu: 1}',
)
GPU_CPU_NOT_INTEGER = Rule(
    code="KG102",
    name="gpu-cpu-not-integer",
    practice=_PRACTICE,
    severity=Severity.WARNING,
    summary="A GPU container asks for a fractional number of CPUs, so it cannot get exclusive cores.",
    target=Target.TEMPLATE,
    check=_check_cpu_integer,
    fixable=True,
    rationale="The static CPU manager assigns exclusive CPUs only to Guaranteed containers with an integer "
    "CPU request; `7500m` runs on the shared pool. `3000m` is an integer.",
    bad_example="cpu: 7500m",
    good_example='cpu: "8"',
)
GPU_CPU_NOT_SMT_MULTIPLE = Rule(
    code="KG103",
    name="gpu-cpu-not-smt-multiple",
    practice=_PRACTICE,
    severity=Severity.ERROR,
    summary="A GPU container's CPU count is not a multiple of the node's threads per core (SMTAlignmentError).",
    target=Target.TEMPLATE,
    check=_check_cpu_smt,
    fixable=True,
    options=(THREADS_PER_CORE, SMT, FULL_PCPUS_ONLY),
    rationale="With cpuManagerPolicyOptions full-pcpus-only the kubelet admits only CPU counts that fill whole "
    "physical cores and rejects the rest with SMTAlignmentError. The SMT level comes from `--smt N`, else the "
    "`--node` profile, else the `threads-per-core` option (the command line decides before the configuration); "
    "without any, two threads per core are assumed (x86 GPU servers) and the finding says so, as a warning. "
    "Grace and other hosts without SMT set 1 (`--smt 1`, a profile with one thread per core, or "
    "`threads-per-core = 1`), which silences the check. A given --kubelet-config without the static CPU manager "
    "policy or without full-pcpus-only turns the check off; one with both keeps it on (the SMT level still comes "
    "from the above, as a KubeletConfiguration does not state it). Without one, the static CPU manager with "
    "full-pcpus-only is assumed and the finding says so; `full-pcpus-only = false` states that the nodes do not "
    "run it (most managed node pools' default) and turns the check off. Only Guaranteed pods get exclusive CPUs, so a "
    "pod that is not Guaranteed yet is reported as a warning: fixing gpu-pod-not-guaranteed gets it rejected.",
    bad_example='cpu: "7"   # on a 2-threads-per-core node',
    good_example='cpu: "8"',
)
GPU_REQUEST_LIMIT_MISMATCH = Rule(
    code="KG104",
    name="gpu-request-limit-mismatch",
    practice=_PRACTICE,
    severity=Severity.ERROR,
    summary="A GPU (extended resource) request differs from its limit, lacks one, or is fractional.",
    target=Target.TEMPLATE,
    check=_check_gpu_request_limit,
    fixable=True,
    gpu_only=False,
    rationale="The API server rejects containers whose extended-resource requests differ from limits or "
    "are not whole numbers; the error only shows at apply time, often deep in a CI pipeline.",
    bad_example="requests: {nvidia.com/gpu: 2}\nlimits: {nvidia.com/gpu: 1}",
    good_example="limits: {nvidia.com/gpu: 2}",
)

RULES: tuple[Rule, ...] = (
    GPU_POD_NOT_GUARANTEED,
    GPU_CPU_NOT_INTEGER,
    GPU_CPU_NOT_SMT_MULTIPLE,
    GPU_REQUEST_LIMIT_MISMATCH,
)
