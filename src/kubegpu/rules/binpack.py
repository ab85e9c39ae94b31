"""Bin-packing rules (KG7xx): a scheduler profile that bin-packs GPUs, and GPU pods that actually use it.

Follows kubernetes v1.35 kube-scheduler config (apis/config/v1 defaults: NodeResourcesFit LeastAllocated on
cpu and memory, a resource weight of 0 defaults to 1; validation: weights in (0, 100], RTCR shape points).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from kubegpu.manifests import Document, FieldPath, PodTemplate, as_mapping
from kubegpu.manifests.resources import is_accelerator
from kubegpu.ruleapi import Edit, Fix, RawFinding, Rule, RuleContext, Safety, Severity, Target
from kubegpu.workloads import kind_of

_PRACTICE = "bin-packing"

API_GROUP = "kubescheduler.config.k8s.io"
DEFAULT_SCHEDULER = "default-scheduler"
FIT = "NodeResourcesFit"
LEAST, MOST, RTCR = "LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"
MAX_WEIGHT = 100


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def is_scheduler_config(doc: Document) -> bool:
    return doc.kind == "KubeSchedulerConfiguration" and doc.api_version.split("/")[0] == API_GROUP


@dataclass(frozen=True)
class ProfileScoring:
    """How one profile's NodeResourcesFit scores nodes, and where its arguments sit in the document."""

    index: int
    name: str
    strategy: str  # LeastAllocated, MostAllocated, RequestedToCapacityRatio, or "" when Fit scoring is disabled
    resources: tuple[tuple[str, Any], ...]  # (name, weight) as written, defaults applied when absent
    packs: bool
    args_path: FieldPath | None  # path of NodeResourcesFit args, None when the profile uses the defaults
    other_scoring: str = ""  # e.g. a NodeResourceTopologyMatch strategy, for the message

    def gpu_weighted(self, accelerators: Sequence[str]) -> bool:
        return any(is_accelerator(str(name), accelerators) for name, _ in self.resources)


def _disabled(plugins: Mapping[str, Any], point: str) -> bool:
    disabled = _list(as_mapping(plugins.get(point)).get("disabled"))
    return any(as_mapping(item).get("name") in (FIT, "*") for item in disabled)


def _rtcr_packs(shape: list[Any]) -> bool:
    points: list[tuple[int, int]] = []
    for point in shape:
        utilization, score = as_mapping(point).get("utilization"), as_mapping(point).get("score")
        if isinstance(utilization, int) and isinstance(score, int):
            points.append((utilization, score))
    if len(points) < 2:
        return False
    points.sort()
    return points[-1][1] > points[0][1]


def profile_scoring(doc: Document) -> list[ProfileScoring]:
    """Every profile of a KubeSchedulerConfiguration, with its effective NodeResourcesFit strategy."""
    profiles = _list(as_mapping(doc.data).get("profiles")) or [{}]
    out: list[ProfileScoring] = []
    for i, raw in enumerate(profiles):
        profile = as_mapping(raw)
        name = str(profile.get("schedulerName") or DEFAULT_SCHEDULER)
        plugins = as_mapping(profile.get("plugins"))
        args_path: FieldPath | None = None
        args: Mapping[str, Any] = {}
        other = ""
        for j, entry in enumerate(_list(profile.get("pluginConfig"))):
            entry = as_mapping(entry)
            if entry.get("name") == FIT:
                args_path = ("profiles", i, "pluginConfig", j, "args")
                args = as_mapping(entry.get("args"))
            elif isinstance(as_mapping(entry.get("args")).get("scoringStrategy"), Mapping):
                other_type = as_mapping(as_mapping(entry.get("args")).get("scoringStrategy")).get("type")
                if other_type:
                    other = f"{entry.get('name')} scores with {other_type}"
        strategy_args = as_mapping(args.get("scoringStrategy"))
        strategy = str(strategy_args.get("type") or LEAST)
        resources = tuple(
            (str(as_mapping(r).get("name")), as_mapping(r).get("weight", 1))
            for r in _list(strategy_args.get("resources"))
        ) or (("cpu", 1), ("memory", 1))
        if _disabled(plugins, "score") or _disabled(plugins, "multiPoint"):
            strategy = ""
        packs = strategy == MOST or (
            strategy == RTCR
            and _rtcr_packs(_list(as_mapping(strategy_args.get("requestedToCapacityRatio")).get("shape")))
        )
        out.append(ProfileScoring(i, name, strategy, resources, packs, args_path, other))
    return out


class _SameInput:
    """A cache key for one lint run's documents: the same tuple object (hashing 2000 items per pod is too slow)."""

    __slots__ = ("documents",)

    def __init__(self, documents: tuple[Document, ...]) -> None:
        self.documents = documents

    def __hash__(self) -> int:
        return id(self.documents)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _SameInput) and other.documents is self.documents


def gpu_packing_profiles(documents: tuple[Document, ...], accelerators: Sequence[str]) -> tuple[str, ...]:
    """Names of the profiles in the input that bin-pack by an accelerator resource."""
    return _packing_profiles(_SameInput(documents), tuple(accelerators))


@lru_cache(maxsize=2)  # one entry per lint run; the key keeps its tuple alive, so ids are never reused meanwhile
def _packing_profiles(key: _SameInput, accelerators: tuple[str, ...]) -> tuple[str, ...]:
    names: list[str] = []
    for doc in key.documents:
        if is_scheduler_config(doc):
            names += [p.name for p in profile_scoring(doc) if p.packs and p.gpu_weighted(accelerators)]
    return tuple(dict.fromkeys(names))


# --- KG701 ---------------------------------------------------------------------------------------------------


def _check_spreads(doc: Document, ctx: RuleContext) -> Iterator[RawFinding]:
    if not is_scheduler_config(doc):
        return
    profiles = profile_scoring(doc)
    accelerators = ctx.accelerator_resources
    for profile in profiles:
        if profile.args_path is None:
            continue
        strategy_path = (*profile.args_path, "scoringStrategy")
        strategy = as_mapping(as_mapping(_path_get(doc.data, profile.args_path)).get("scoringStrategy"))
        raw = _list(strategy.get("resources"))
        yield from _bad_weights(profile, strategy_path, raw)
        type_path = (*strategy_path, "type")
        if profile.strategy in (LEAST, RTCR) and not profile.packs and profile.gpu_weighted(accelerators):
            fix = (
                Fix(
                    f"score with {MOST} (bin-packing) in profile '{profile.name}'",
                    Safety.UNSAFE,
                    (Edit("add", type_path, MOST),),
                )
                if profile.strategy == LEAST
                else None
            )
            yield RawFinding(
                type_path if _has(doc, type_path) else strategy_path,
                f"profile '{profile.name}' scores GPUs with {profile.strategy} spreading: every GPU pod "
                "goes to the emptiest node, leaving a few free GPUs on every node so that an 8-GPU job "
                f"fits nowhere; use {MOST} (or a rising RequestedToCapacityRatio shape)",
                fix,
            )
        elif profile.packs and not profile.gpu_weighted(accelerators):
            resources_path = (*strategy_path, "resources")
            entry = {"name": "nvidia.com/gpu", "weight": 10}
            edit = (
                Edit("add", (*resources_path, "-"), entry)
                if raw
                else Edit("add", resources_path, [entry, {"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}])
            )
            yield RawFinding(
                resources_path if raw else strategy_path,
                f"profile '{profile.name}' bin-packs with {profile.strategy} but its resources leave out "
                "nvidia.com/gpu: extended resources are scored only when listed, so GPU pods are packed "
                "by CPU and memory alone and GPUs still fragment; add {name: nvidia.com/gpu, weight: 10}",
                Fix("score nvidia.com/gpu (weight 10) in the bin-packing strategy", Safety.UNSAFE, (edit,)),
            )
    if any(p.packs and p.gpu_weighted(accelerators) for p in profiles):
        return
    spreading = [p for p in profiles if p.strategy == LEAST and not p.gpu_weighted(accelerators)]
    if not spreading:
        return
    names = ", ".join(f"'{p.name}'" for p in spreading)
    others = "; ".join(p.other_scoring for p in spreading if p.other_scoring)
    yield RawFinding(
        ("profiles",) if "profiles" in as_mapping(doc.data) else ("kind",),
        f"no profile of this KubeSchedulerConfiguration bin-packs GPUs: {names} "
        f"score{'s' if len(spreading) == 1 else ''} with "
        f"NodeResourcesFit {LEAST} on {_resource_names(spreading[0])}"
        + (f" ({others})" if others else "")
        + ", which spreads pods and fragments GPUs; add a profile with scoringStrategy MostAllocated "
        "weighting nvidia.com/gpu (a gpu-binpack profile, as `kubegpu gen scheduler` writes) and "
        "point GPU pods at it",
    )


def _bad_weights(profile: ProfileScoring, strategy_path: FieldPath, resources: list[Any]) -> Iterator[RawFinding]:
    """Resource weights outside (0, 100], which kube-scheduler's configuration validation rejects."""
    for k, resource in enumerate(resources):
        weight = as_mapping(resource).get("weight")
        if isinstance(weight, int) and not isinstance(weight, bool) and (weight < 0 or weight > MAX_WEIGHT):
            yield RawFinding(
                (*strategy_path, "resources", k, "weight"),
                f"profile '{profile.name}': resource weight {weight} of "
                f"{as_mapping(resource).get('name')} is not in (0, {MAX_WEIGHT}]: kube-scheduler "
                "rejects the configuration and does not start",
                severity=Severity.ERROR,
            )


def _resource_names(profile: ProfileScoring) -> str:
    return ", ".join(name for name, _ in profile.resources)


def _path_get(data: Any, path: FieldPath) -> Any:
    current = data
    for part in path:
        if isinstance(part, int):
            current = current[part] if isinstance(current, list) and 0 <= part < len(current) else None
        else:
            current = current.get(part) if isinstance(current, Mapping) else None
    return current


def _has(doc: Document, path: FieldPath) -> bool:
    return _path_get(doc.data, path) is not None


# --- KG702 ---------------------------------------------------------------------------------------------------


def _check_unused(template: PodTemplate, ctx: RuleContext) -> Iterator[RawFinding]:
    configs = ctx.documents_of("KubeSchedulerConfiguration")
    if not configs:
        return  # no scheduler configuration in the input (most runs): no profile to name
    adapter = kind_of(template.document)
    if template.metadata_path is None or (adapter is not None and not adapter.scheduler_settable):
        return  # TrainJob's trainer and KServe components set no schedulerName here; Volcano Jobs use volcano
    current = template.spec.get("schedulerName")
    if current and current != DEFAULT_SCHEDULER:
        return
    profiles = gpu_packing_profiles(configs, ctx.accelerator_resources)
    if not profiles or DEFAULT_SCHEDULER in profiles:
        return
    path = (*template.path, "schedulerName")
    yield RawFinding(
        path if current else template.path,
        f"{template.description} uses GPUs but runs on the default scheduler, which spreads pods, while the input "
        f"defines the bin-packing profile{'s' if len(profiles) > 1 else ''} {', '.join(repr(p) for p in profiles)}; "
        f"set schedulerName: {profiles[0]}",
        Fix(f"set schedulerName: {profiles[0]}", Safety.UNSAFE, (Edit("add", path, profiles[0]),)),
    )


SCHEDULER_SPREADS_GPUS = Rule(
    code="KG701",
    name="scheduler-spreads-gpus",
    practice=_PRACTICE,
    severity=Severity.WARNING,
    summary="A KubeSchedulerConfiguration spreads GPU pods (LeastAllocated), packs without nvidia.com/gpu, or has "
    "weights outside 1..100.",
    target=Target.DOCUMENT,
    kinds=frozenset({"KubeSchedulerConfiguration"}),
    check=_check_spreads,
    gpu_only=False,
    fixable=True,
    rationale="kube-scheduler's default NodeResourcesFit strategy is LeastAllocated on cpu and memory: it puts each "
    "pod on the emptiest node. With GPUs that leaves 16 free GPUs spread 2 per node, and an 8-GPU job fits "
    "nowhere. A bin-packing profile scores with MostAllocated (or a rising RequestedToCapacityRatio shape) and "
    "must list nvidia.com/gpu, because extended resources are scored only when listed. Resource weights outside "
    "(0, 100] make kube-scheduler refuse the configuration (0 is defaulted to 1).",
    bad_example="profiles:\n- schedulerName: default-scheduler   # NodeResourcesFit defaults: LeastAllocated",
    good_example="profiles:\n- schedulerName: gpu-binpack\n  pluginConfig:\n  - name: NodeResourcesFit\n    args:\n"
    "      scoringStrategy:\n        type: MostAllocated\n        resources:\n        - {name: nvidia.com/gpu, "
    "weight: 10}\n        - {name: cpu, weight: 1}\n        - {name: memory, weight: 1}",
)
BINPACK_PROFILE_UNUSED = Rule(
    code="KG702",
    name="binpack-profile-unused",
    practice=_PRACTICE,
    severity=Severity.WARNING,
    summary="A GPU pod runs on the default scheduler while the input defines a GPU bin-packing profile.",
    target=Target.TEMPLATE,
    check=_check_unused,
    fixable=True,
    rationale="A bin-packing profile only affects pods that name it in spec.schedulerName; GPU pods left on the "
    "default scheduler keep spreading and fragmenting GPUs. Runs when a KubeSchedulerConfiguration with a "
    "MostAllocated (or rising RequestedToCapacityRatio) profile weighting GPUs is linted together with the "
    "workloads.",
    bad_example="spec:\n  containers: [...]   # nvidia.com/gpu: 1, no schedulerName",
    good_example="spec:\n  schedulerName: gpu-binpack",
)

RULES: tuple[Rule, ...] = (SCHEDULER_SPREADS_GPUS, BINPACK_PROFILE_UNUSED)
