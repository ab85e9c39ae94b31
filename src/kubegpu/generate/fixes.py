"""`gen dshm` and `gen fixes`: the rules' own fixes for one workload, written as a kustomize bundle.

Nothing is decided here: the workload is linted with the rules of the chosen fixes and fixed by the fix engine's
object planner (kubegpu.fix.engine.fix_object, which `kubegpu fix` and the admission webhook use), unsafe fixes
included; its RFC 6902 operations become the bundle's patch. So `kubegpu fix --unsafe-fixes` and `gen fixes`
give one answer.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from kubegpu.errors import InputError
from kubegpu.fix.engine import ObjectOutcome, fix_object
from kubegpu.fix.model import FixOptions as EngineOptions
from kubegpu.fix.protocols import FindingLike
from kubegpu.generate.patches import PatchBuilder, PatchBundle, bundle
from kubegpu.generate.scheduler import SchedulerOptions, scheduler_config
from kubegpu.generate.workload import Workload
from kubegpu.lint import LintConfig, NodeTarget, lint_text
from kubegpu.ruleapi.options import OptionValueError
from kubegpu.rules.shm import SIZE_LIMIT, SIZE_OPTION

# Each fix a user can choose, as the rules whose fixes make it up.
FIXES: Mapping[str, tuple[str, ...]] = {
    "dshm": ("KG201", "KG202", "KG203"),  # dshm-missing, dshm-unsized, dshm-host-shared (no fix: reported)
    "qos": ("KG101", "KG102", "KG103", "KG104"),  # Guaranteed QoS, whole CPUs, SMT multiples, accelerator limits
    "pull-policy": ("KG301",),  # image-pull-always (fixed for pinned images only)
    "scheduler": ("KG702",),  # binpack-profile-unused, against the `gen scheduler` profile
}
_SIZED_RULES = ("dshm-missing", "dshm-unsized")


@dataclass(frozen=True)
class FixOptions:
    """What `gen dshm`/`gen fixes` were asked for: an explicit /dev/shm size, the bin-packing profile's name, and
    the lint configuration and node facts `kubegpu fix` would use for the same file."""

    shm_size: str | None = None
    scheduler_name: str = "gpu-binpack"
    lint: LintConfig = field(default_factory=LintConfig)
    target: NodeTarget | None = None


def check_shm_size(text: str) -> str:
    """`--size` as given, when the size-limit option of the /dev/shm rules accepts it; InputError otherwise."""
    try:
        return str(SIZE_LIMIT.check(text, "--size"))
    except OptionValueError as err:
        raise InputError(f"{err}; or leave --size out for half the pod's memory limit") from None


def _config(names: Sequence[str], options: FixOptions) -> LintConfig:
    codes = tuple(code for name in names for code in FIXES[name])
    rule_options: dict[str, Any] = {k: dict(v) for k, v in options.lint.options.items()}
    if options.shm_size is not None:
        for rule in _SIZED_RULES:
            rule_options[rule] = {**rule_options.get(rule, {}), SIZE_OPTION: check_shm_size(options.shm_size)}
    return replace(options.lint, select=codes, ignore=(), options=rule_options)


def _context(workload: Workload, names: Sequence[str], options: FixOptions) -> list[Mapping[str, Any]]:
    """The file's other objects; for the scheduler fix, first the profile `gen scheduler` writes under the name
    given (the fix names the first bin-packing profile of the input)."""
    others = [o for o in workload.context if o is not workload.obj]
    if "scheduler" in names:
        others.insert(0, scheduler_config(SchedulerOptions(scheduler_name=options.scheduler_name)).obj)
    return others


def plan(workload: Workload, names: Sequence[str], options: FixOptions) -> ObjectOutcome:
    """The fix engine's outcome for `workload` with the rules of `names` (unsafe fixes included)."""
    unknown = [n for n in names if n not in FIXES]
    if unknown or not names:
        raise InputError(f"unknown fix {(unknown or [''])[0]!r}: choose from {', '.join(FIXES)}")
    config = _config(names, options)
    tail = "".join("---\n" + json.dumps(o, default=str) + "\n" for o in _context(workload, names, options))

    def lint_object(obj: Mapping[str, Any]) -> list[FindingLike]:
        result = lint_text(workload.source, json.dumps(obj, default=str) + "\n" + tail, config, options.target)
        if result.internal_errors:
            raise InputError(result.internal_errors[0], file=workload.source, line=workload.line)
        # only the workload's own findings (the first object); the rest is context
        return [f for f in result.findings if f.document is not None and f.document.index == 0]

    first = lint_object(workload.obj)
    silenced = _silenced_by_comments(workload, config, options, first)

    def lint(obj: Mapping[str, Any]) -> Sequence[FindingLike]:
        return [f for f in lint_object(obj) if _key(f) not in silenced]

    return fix_object(workload.obj, lint, EngineOptions(unsafe=True), [f for f in first if _key(f) not in silenced])


def _key(finding: FindingLike) -> tuple[str, tuple[object, ...]]:
    """A finding's rule and field, relative to its object (a List item's prefix left out)."""
    prefix = finding.document.prefix if finding.document is not None else ()
    return finding.code, tuple(finding.location.path[len(prefix) :])


def _silenced_by_comments(
    workload: Workload, config: LintConfig, options: FixOptions, found: Sequence[FindingLike]
) -> set[tuple[str, tuple[object, ...]]]:
    """The findings of `found` that the manifest's own `# kubegpu: ignore[...]` line comments silence (the planner
    lints the object without its comments): those `kubegpu lint` of the file does not report."""
    if workload.text is None or "kubegpu:" not in workload.text:
        return set()
    in_file = lint_text(workload.source, workload.text, config, options.target)
    reported = {_key(f) for f in in_file.findings if f.document is not None and f.document.start_line == workload.line}
    return {_key(f) for f in found} - reported


def _not_fixed(outcome: ObjectOutcome, options: FixOptions) -> list[str]:
    """The chosen rules' findings left after fixing, one line each (a /dev/shm size hint where --size would do)."""
    lines = []
    for f in outcome.remaining:
        sizable = f.code in FIXES["dshm"] and options.shm_size is None and "set memory limits" in f.message
        lines.append(f"{f.code} {f.name}: {f.message}" + (" (or give --size)" if sizable else ""))
    return lines


def generate(
    workload: Workload,
    names: Sequence[str],
    options: FixOptions,
    out_dir: Path | None = None,
) -> PatchBundle:
    """A kustomize bundle with the chosen fixes for every pod template of `workload`.

    InputError when nothing is fixed: naming the first finding that has no fix, else saying none was needed.
    The findings of the chosen rules that remain are listed in the bundle's header (`not fixed: ...`).
    """
    outcome = plan(workload, names, options)
    remaining = _not_fixed(outcome, options)
    if not outcome.patch:
        if remaining:
            raise InputError(f"not fixed: {remaining[0]}", file=workload.source, line=workload.line)
        raise InputError(
            f"{workload.kind}/{workload.name} needs none of: {', '.join(names)}",
            file=workload.source,
            line=workload.line,
        )
    builder = PatchBuilder(workload)
    noted: set[int] = set()
    for op, owner in zip(outcome.patch, outcome.patch_owner, strict=True):
        applied = outcome.applied[owner]
        why = "" if owner in noted else f"{applied.code} {applied.name}: {applied.description}."
        noted.add(owner)
        builder.apply(dict(op), why)
    label = "-".join(names)
    header = (
        f"kustomize bundle: {', '.join(names)} for {workload.kind}/{workload.name}.",
        "Apply with kubectl apply -k <folder>; your manifest itself is not edited.",
        "The same fixes `kubegpu fix --unsafe-fixes` makes (the rules named in the patch).",
        *(f"Not fixed (`kubegpu lint` says why): {f.code} {f.name}" for f in outcome.remaining),
    )
    return replace(bundle(builder, f"patch-{label}.yaml", header, out_dir), not_fixed=tuple(remaining))
