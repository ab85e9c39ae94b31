"""Image pull time rules: image pull time for GPU pods (pull policy, mutable tags, CUDA `-devel` images).

Image references are the one parser's (kubegpu.manifests.image, distribution/reference ParseNormalizedNamed);
pull-policy defaulting follows kubernetes v1.35 SetDefaults_Container (Always when the parsed tag is `latest`,
IfNotPresent otherwise).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from functools import lru_cache

from kubegpu.manifests import ContainerRef, PodTemplate, memoised
from kubegpu.manifests.gpu_containers import gpu_containers
from kubegpu.manifests.image import ImageRef, parse_image
from kubegpu.manifests.placeholders import DEPENDS_ON, MARKER, placeholders_in, render
from kubegpu.ruleapi import Edit, Fix, RawFinding, Rule, RuleContext, Safety, Severity, Target
from kubegpu.ruleapi.options import RuleOption, regular_expressions

_PRACTICE = "image pull time"


# A tag "looks like a version" when one of its dash-separated parts starts with major.minor (v0.6.3, 24.05-py3,
# 2.46.0.0e19ea-py39-gpu, 12.4.1-runtime-ubuntu22.04) or carries a full x.y.z after a word (vectoradd-cuda12.5.0),
# when it is a bare build number (14), or when it carries a date or a commit hash; `latest` never does.
_VERSION_PART = re.compile(r"^[vVrR]?\d+\.\d+|^[a-zA-Z]+\d+\.\d+\.\d+")
_TAG_PARTS = re.compile(r"[-_+]")
_BUILD_NUMBER = re.compile(r"^[vV]?\d+$")
_DATE = re.compile(r"(?<!\d)(?:\d{8}|\d{4}-\d{2}-\d{2}|\d{4}_\d{2}_\d{2})(?!\d)")
_COMMIT = re.compile(r"^(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}$")


def tag_is_version(tag: str, extra_patterns: Sequence[str] = ()) -> bool:
    """Does a tag name one build (a version, a date or a commit) rather than a moving pointer (latest, main, gpu)?"""
    return _tag_is_version(tag, tuple(extra_patterns))


@lru_cache(maxsize=4096)  # a repository uses a few dozen tags thousands of times
def _tag_is_version(tag: str, extra_patterns: tuple[str, ...]) -> bool:
    if not tag:
        return False
    parts = re.split(r"[-_+]", tag)
    if any(part.lower() == "latest" for part in parts):
        return False
    for pattern in extra_patterns:
        if re.fullmatch(pattern, tag):
            return True
    if _BUILD_NUMBER.match(tag) or any(_VERSION_PART.match(part) for part in parts):
        return True
    if _DATE.search(tag):
        return True
    return any(_COMMIT.match(part) for part in parts)


# Families whose `-devel` and `-runtime` tags are published in pairs (same version, same OS), so that the runtime
# variant of a devel tag is a name substitution: nvidia/cuda, built from NVIDIA's container-images layout
# dist/<version>/<os>/{base,runtime,devel}[/cudnn] (devel FROM runtime, each with a cudnn sibling), and
# pytorch/pytorch (<torch>-cuda<x>-cudnn<y>-{runtime,devel}).
_RUNTIME_PAIRED = {
    "docker.io/nvidia/cuda": re.compile(r"^\d+\.\d+(?:\.\d+)?-(?:cudnn\d*-)?devel(?:-[a-z0-9.]+)?$"),
    "nvcr.io/nvidia/cuda": re.compile(r"^\d+\.\d+(?:\.\d+)?-(?:cudnn\d*-)?devel(?:-[a-z0-9.]+)?$"),
    "docker.io/pytorch/pytorch": re.compile(r"^\d+\.\d+(?:\.\d+)?-cuda\d+\.\d+-cudnn\d+-devel$"),
}
_CUDA_HINT = re.compile(r"cuda|cudnn|pytorch|torch|tensorflow|nvidia|ngc|nvcr")


def is_devel_image(ref: ImageRef) -> bool:
    """A CUDA-family image whose tag marks the `devel` flavour (compilers, headers, static libraries)."""
    if not ref.tag:
        return False
    if "devel" not in ref.tag.lower().split("-"):
        return False
    return ref.name in _RUNTIME_PAIRED or bool(_CUDA_HINT.search(ref.name) or _CUDA_HINT.search(ref.tag.lower()))


def runtime_variant(ref: ImageRef) -> str | None:
    """The `-runtime` tag of a devel image, when its family's naming scheme makes it derivable; else None."""
    pattern = _RUNTIME_PAIRED.get(ref.name)
    if pattern is None or not pattern.match(ref.tag) or ref.tag.split("-").count("devel") != 1:
        return None
    return "-".join("runtime" if part == "devel" else part for part in ref.tag.split("-"))


def image_of(container: ContainerRef) -> tuple[str, ImageRef] | None:
    """The container's image text and its parse, or None when there is no image or it does not parse."""
    return memoised(container, "images.image_of", _image_of, container)


def _image_of(container: ContainerRef) -> tuple[str, ImageRef] | None:
    image = container.data.get("image")
    if not isinstance(image, str):
        return None
    ref = parse_image(image.strip())
    if ref is None and placeholders_in(image, image=True):
        ref = parse_image(render(image.strip(), image=True))  # a templated registry still has its :latest
    return (image, ref) if ref is not None else None


def undecided_tag(image: str, ref: ImageRef) -> str | None:
    """The placeholder that decides the tag of an image (as image_of gives it: the text and its parse), such as
    `app:${TAG}` or a whole `${IMAGE}`; None when the tag is known."""
    if ref.digest:
        return None
    slots = placeholders_in(image, image=True)
    if not slots:
        return None
    if MARKER in ref.tag:
        return slots[-1]
    last = ref.path.rsplit("/", 1)[-1]
    return slots[-1] if not ref.tag and MARKER in last else None


_KIND_WORDS = {"container": "container", "init": "init container", "sidecar": "sidecar"}


def _describe(container: ContainerRef) -> str:
    what = _KIND_WORDS[container.kind]
    name = container.name
    return f"{what} '{name}'" if name else what


def _is_gpu(container: ContainerRef, template: PodTemplate, ctx: RuleContext) -> bool:
    """Does the container get the pod's GPUs, as the one pod model decides (sidecars never do)? Asked only for
    a finding (no set of paths built per template)."""
    # (the pod model's GPU containers are the template's own ContainerRefs: identity answers before the path does)
    return any(
        gpu is container or gpu.path == container.path
        for gpu, _res in gpu_containers(template, ctx.accelerator_resources)
    )


def _pulled(container: ContainerRef, gpu: bool) -> str:
    """Which image is downloaded again, worded for the container's role: the GPU container's is the multi-GB one;
    a sidecar's, an init container's or another helper's is not, but the GPU container waits for it."""
    if gpu:
        return "the multi-GB GPU image is downloaded again"
    if container.kind == "sidecar":
        return "the sidecar's image is downloaded again (the sidecar starts before the GPU container, which waits)"
    if container.kind == "init":
        return "the init container's image is downloaded again (the GPU container starts only after it has run)"
    return "this helper container's image is downloaded again (not the GPU container's, but the pod waits for it)"


def _whose(container: ContainerRef, gpu: bool) -> str:
    """`its image` for the GPU container, `the sidecar's image` (and so on) for the others."""
    if gpu:
        return "its image"
    return {"sidecar": "the sidecar's image", "init": "the init container's image"}.get(
        container.kind, "this helper container's image"
    )


def _check_pull_always(template: PodTemplate, ctx: RuleContext) -> Iterator[RawFinding]:
    for container in template.containers:
        policy = container.data.get("imagePullPolicy")
        if policy != "Always" and policy not in (None, ""):
            continue  # IfNotPresent or Never: nothing to report (most containers)
        parsed = image_of(container)
        if parsed is None:
            continue
        image, ref = parsed
        slot = undecided_tag(image, ref)
        if slot is not None and policy in (None, ""):
            gpu = _is_gpu(container, template, ctx)
            yield RawFinding(
                (*container.path, "image"),
                f"{_describe(container)} pulls '{image}' with no imagePullPolicy: Kubernetes defaults it to Always "
                f"when the tag is latest or missing, and here the tag {DEPENDS_ON} {slot}; "
                f"check the rendered manifest (this GPU pod would re-pull {_whose(container, gpu)} on every start)",
                None,
                Severity.INFO,
            )
            continue
        if policy == "Always":
            path = (*container.path, "imagePullPolicy")
            how = "sets imagePullPolicy: Always"
            op = "replace"
        elif policy in (None, "") and ref.kube_tag == "latest":
            path = (*container.path, "image")
            how = (
                f"pulls '{image}' with no imagePullPolicy, which Kubernetes defaults to Always because the tag "
                f"is {'missing (so latest)' if not ref.tag else 'latest'}"
            )
            op = "add"  # (a `latest` tag is never pinned: no fix, so no edit is built here)
        else:
            continue
        extra = IMMUTABLE_TAGS.read(ctx, "image-tag-mutable")
        pinned = slot is None and (bool(ref.digest) or (ref.tag != "latest" and tag_is_version(ref.tag, extra)))
        what = _pulled(container, _is_gpu(container, template, ctx))
        fix = (
            Fix(
                "set imagePullPolicy: IfNotPresent (the image is pinned)",
                Safety.SAFE,
                (Edit(op, (*container.path, "imagePullPolicy"), "IfNotPresent"),),
            )
            if pinned
            else None
        )
        advice = (
            "the image is pinned, so IfNotPresent gives the same guarantee without the registry round trip"
            if pinned
            else "pin a version tag or a digest, then set IfNotPresent"
        )
        yield RawFinding(
            path,
            f"{_describe(container)} {how}: each start of this GPU pod asks the registry first, and whenever the "
            f"tag has moved (or the node lost the image) {what} while the pod's GPUs "
            f"sit allocated and idle; a registry outage or rate limit blocks the start even with the image on the "
            f"node; {advice}",
            fix,
        )


def _check_tag_mutable(template: PodTemplate, ctx: RuleContext) -> Iterator[RawFinding]:
    extra = IMMUTABLE_TAGS.read(ctx, "image-tag-mutable")
    for container in template.containers:
        parsed = image_of(container)
        if parsed is None:
            continue
        image, ref = parsed
        if ref.digest:
            continue
        slot = undecided_tag(image, ref)
        if slot is not None:
            yield RawFinding(
                (*container.path, "image"),
                f"{_describe(container)} image '{image}': whether its tag is pinned {DEPENDS_ON} "
                f"{slot}; a moving tag (latest, main) lets replicas of one GPU job run different code",
                None,
                Severity.INFO,
            )
            continue
        if not ref.tag:
            why = "has no tag, so it means ':latest'"
        # (the substring test first: most tags hold no "latest" and need no split into parts)
        elif "latest" in (low := ref.tag.lower()) and (low == "latest" or "latest" in _TAG_PARTS.split(low)):
            why = f"uses the moving tag '{ref.tag}'"
        elif not tag_is_version(ref.tag, extra):
            why = f"uses the tag '{ref.tag}', which is not a version, a date or a commit"
        else:
            continue
        gpu = _is_gpu(container, template, ctx)
        differ = "different code" if gpu else f"different versions of this {_noun(container)}"
        yield RawFinding(
            (*container.path, "image"),
            f"{_describe(container)} image '{image}' {why}: nodes that already hold the tag keep their copy while "
            f"new nodes pull whatever it points to now, so replicas of one GPU job can run {differ}, and "
            "IfNotPresent cannot be used safely; pin a version tag or a digest (@sha256:...)",
        )


def _noun(container: ContainerRef) -> str:
    return {"sidecar": "sidecar", "init": "init container"}.get(container.kind, "helper container")


def _compiler(container: ContainerRef, template: PodTemplate, ctx: RuleContext) -> str:
    """Who might need the -devel image's compilers: the job in the GPU container, else this other container."""
    return "the job" if _is_gpu(container, template, ctx) else f"this {_noun(container)}"


def _check_devel(template: PodTemplate, ctx: RuleContext) -> Iterator[RawFinding]:
    for container in template.containers:
        parsed = image_of(container)
        if parsed is None:
            continue
        image, ref = parsed
        if not is_devel_image(ref):
            continue
        variant = runtime_variant(ref)
        fix = None
        suggestion = "use the family's -runtime (or -base) image, or a multi-stage build that copies the build output"
        if variant is not None:
            new_image = ref.with_tag(variant)
            suggestion = f"use '{new_image}'"
            if not ref.digest:
                fix = Fix(
                    f"use the runtime variant {new_image}",
                    Safety.UNSAFE,
                    (Edit("replace", (*container.path, "image"), new_image),),
                )
            else:
                suggestion += " (pinned by its own digest)"
        yield RawFinding(
            (*container.path, "image"),
            f"{_describe(container)} runs the -devel image '{image}': compilers, headers and static libraries add "
            f"gigabytes to every pull while the GPUs wait, and nothing at run time needs them unless "
            f"{_compiler(container, template, ctx)} compiles CUDA code as it starts; "
            f"{suggestion}",
            fix,
        )


IMMUTABLE_TAGS = RuleOption[tuple[str, ...]](
    name="immutable-tags",
    help="regular expressions (full match) of further tags your registry keeps immutable; image-pull-always "
    "reads them too",
    expected="a list of regular expressions",
    example='["build-[0-9]+"]',
    parse=regular_expressions,
    default=(),
    default_text="none",
)

IMAGE_PULL_ALWAYS = Rule(
    code="KG301",
    name="image-pull-always",
    practice=_PRACTICE,
    severity=Severity.WARNING,
    summary="A GPU pod pulls an image with imagePullPolicy Always (set, or defaulted from a :latest or missing tag).",
    target=Target.TEMPLATE,
    check=_check_pull_always,
    fixable=True,
    rationale="GPU images are 10-30 GB. With Always the kubelet resolves the tag at the registry on every container "
    "start; when the tag has moved, or the image was garbage-collected, the whole image is pulled again while the "
    "pod already holds its GPUs, and a registry outage or rate limit stops a restart that could have used the "
    "cached copy. Kubernetes defaults the policy to Always when the tag is `latest` or missing. Pinning a version "
    "tag or a digest and using IfNotPresent gives the same certainty about which image runs: the safe fix sets "
    "IfNotPresent only for images pinned that way, never for :latest. Every container of a GPU pod counts, init "
    "containers and sidecars included: the pod holds its GPUs while any of its images is pulled. The message "
    "calls only the GPU container's image (the container the pod model gives the GPUs; never a sidecar) the "
    "multi-GB one, and names a sidecar's, init container's or helper's image as such. Other linters "
    "(Polaris, kube-score, checkov) require Always; for multi-GB GPU images that trade is wrong.",
    bad_example="image: nvcr.io/nvidia/pytorch:24.05-py3\nimagePullPolicy: Always",
    good_example="image: nvcr.io/nvidia/pytorch:24.05-py3\nimagePullPolicy: IfNotPresent",
)
IMAGE_TAG_MUTABLE = Rule(
    code="KG302",
    name="image-tag-mutable",
    practice=_PRACTICE,
    severity=Severity.WARNING,
    summary="A GPU pod's image has no tag, `latest`, or a tag that is not a version (main, stable, nightly, gpu).",
    target=Target.TEMPLATE,
    check=_check_tag_mutable,
    options=(IMMUTABLE_TAGS,),
    rationale="A moving tag makes the node's cache lie: nodes that pulled it earlier keep the old image, new nodes "
    "get the new one, and a multi-node job can start with mixed code. It also forces imagePullPolicy Always to get "
    "updates, which re-pulls 10-30 GB images. A tag counts as a version when one of its dash-separated parts starts "
    "with major.minor (`24.05-py3`, `v0.6.3`, `2.3.1-cuda12.1-cudnn8-runtime`, `12.4.1-runtime-ubuntu22.04`), or "
    "it carries a date (`20240501`, `2025-05-27`) or a commit hash; any tag containing `latest` does not. Digests "
    "(`@sha256:...`) always pass. A registry port (`myreg:5000/img`) is not a tag. Placeholders (`${REGISTRY}`, "
    "`<your-registry>`, `$(VAR)`, `PROJECT_ID`) are read around: `:latest` after a templated registry is still "
    "latest; where a placeholder decides the tag the finding is information naming it.",
    bad_example="image: vllm/vllm-openai:latest\n---\nimage: myorg/trainer:main",
    good_example="image: vllm/vllm-openai:v0.8.5\n---\nimage: myorg/trainer@sha256:3f9a...",
)
IMAGE_DEVEL_RUNTIME = Rule(
    code="KG303",
    name="image-devel-runtime",
    practice=_PRACTICE,
    severity=Severity.WARNING,
    summary="A GPU pod runs a CUDA/PyTorch `-devel` image instead of the `-runtime` variant.",
    target=Target.TEMPLATE,
    check=_check_devel,
    fixable=True,
    rationale="`-devel` images add nvcc, headers and static libraries to the runtime: nvidia/cuda devel images "
    "are about 3x their runtime variants (e.g. 4.2 GB vs 1.3 GB), every byte pulled while the pod holds GPUs. A "
    "workload needs them only when it compiles CUDA code at start (DeepSpeed JIT ops, "
    "torch.utils.cpp_extension.load); then suppress the rule with a reason. The unsafe fix swaps to the runtime "
    "variant where the family publishes devel and runtime tags in pairs (nvidia/cuda, nvcr.io/nvidia/cuda, "
    "pytorch/pytorch); it is unsafe because anything that calls the compiler at run time breaks.",
    bad_example="image: nvidia/cuda:12.4.1-cudnn-devel-ubuntu22.04",
    good_example="image: nvidia/cuda:12.4.1-cudnn-runtime-ubuntu22.04",
)

RULES: tuple[Rule, ...] = (IMAGE_PULL_ALWAYS, IMAGE_TAG_MUTABLE, IMAGE_DEVEL_RUNTIME)
