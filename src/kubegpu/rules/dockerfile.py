"""Image pull time Dockerfile rule: the image that ships (the final stage) must not be built on a CUDA `-devel` base.

The Dockerfile is read by `kubegpu.manifests.dockerfile` (BuildKit's dockerfile v1 syntax).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from kubegpu.manifests import SourceText
from kubegpu.manifests.dockerfile import VARIABLE, root_chain, stages
from kubegpu.manifests.image import parse_image
from kubegpu.ruleapi import RawFinding, Rule, RuleContext, Severity, Target
from kubegpu.rules.images import is_devel_image, runtime_variant

_PRACTICE = "image pull time"


def _check_dockerfile(source: SourceText, ctx: RuleContext) -> Iterator[RawFinding]:
    if source.text is None:
        return
    all_stages = stages(source.text)
    if not all_stages:
        return
    final = all_stages[-1]
    chain = root_chain(all_stages, final)
    root = chain[-1]
    ref = parse_image(root.resolved)
    devel = ref is not None and is_devel_image(ref)
    if ref is None and root.unresolved:
        # An unset ARG (no default) leaves the base unparseable; the literal text may still say devel.
        literal = parse_image(re.sub(VARIABLE, "0", root.resolved))
        devel = literal is not None and is_devel_image(literal)
        ref = literal if devel else None
    if not devel or ref is None:
        return
    via = ""
    if len(chain) > 1:
        via = " via stage(s) " + " -> ".join(s.name or str(s.index) for s in chain[1:][::-1])
    resolved_note = f" (resolved from ARG defaults: '{root.resolved}')" if root.base != root.resolved else ""
    variant = runtime_variant(ref) if not root.unresolved else None
    advice = (
        f"copy the build output into a stage FROM {ref.with_tag(variant)}"
        if variant
        else "copy the build output into a stage on the family's -runtime or -base image"
    )
    if len(all_stages) == 1:
        what = f"single-stage build on the -devel base '{root.base}'{resolved_note}"
    else:
        label = f"'{final.name}'" if final.name else f"{final.index}"
        what = f"the final stage {label} is built on the -devel base '{root.base}'{resolved_note}{via}"
    yield RawFinding(
        (final.line,),
        f"{what}: the shipped image carries nvcc, headers and static libraries (gigabytes pulled onto every GPU "
        f"node); build in the devel stage, then {advice}",
    )


DOCKERFILE_DEVEL_FINAL_STAGE = Rule(
    code="KG304",
    name="dockerfile-devel-final-stage",
    practice=_PRACTICE,
    severity=Severity.WARNING,
    summary="A Dockerfile's final stage (or only stage) is built on a CUDA/PyTorch `-devel` base image.",
    target=Target.DOCKERFILE,
    check=_check_dockerfile,
    gpu_only=False,
    rationale="The final stage is the image that ships. On a `-devel` base it keeps the CUDA toolkit (nvcc, "
    "headers, static libraries), roughly 3x the `-runtime` image, and every GPU node pulls it. A multi-stage build "
    "compiles in the devel stage and copies the result into a `-runtime` stage. kubegpu follows `FROM` chains "
    "through earlier stages to the image they start from, resolves `${VAR}` from ARG defaults declared before the "
    "first FROM, and reads `FROM --platform=... image AS name`, line continuations, comments, parser directives "
    "and heredocs. A `--target` build that ships an earlier stage is not visible in the file; suppress the rule "
    "with `# kubegpu: ignore[KG304]` on the FROM line then.",
    bad_example="FROM nvidia/cuda:12.4.1-cudnn-devel-ubuntu22.04\nRUN pip install -r requirements.txt",
    good_example="FROM nvidia/cuda:12.4.1-cudnn-devel-ubuntu22.04 AS build\nRUN make\n"
    "FROM nvidia/cuda:12.4.1-cudnn-runtime-ubuntu22.04\nCOPY --from=build /out /app",
)

RULES: tuple[Rule, ...] = (DOCKERFILE_DEVEL_FINAL_STAGE,)
