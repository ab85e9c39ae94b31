"""The cold-start model: seconds from a GPU inference pod's creation to its server answering, term by term.

Terms: image pull (every image of the pod, pulled one after another as the kubelet does with its default
serializeImagePulls: true; lazy pulling fetches only what start-up reads), a weights download the server does
itself, the weights load (bytes / load rate) and the server's own start. Probe budgets follow kubernetes v1.35
(pkg/kubelet/prober: a probe first runs after initialDelaySeconds, then every periodSeconds, and the container is
restarted after failureThreshold consecutive failures; defaults 0, 10 and 3; the startupProbe holds liveness back
until it succeeds). Only what happens after the container starts counts against its probes.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubegpu.manifests import ContainerRef, FieldPath, PodTemplate
from kubegpu.serving.servers import PERSISTENT_SOURCES, Server, mount_for, mounts

# --- defaults, each with where it comes from -----------------------------------------------------------------

#: vLLM's default safetensors loader on AWS gp3 and io2, Llama-3-8B (15 GB): 47-48 s, flat whatever the disk
#: (run-ai/runai-model-streamer docs/src/benchmarks.md).
DEFAULT_LOAD_GBPS = 0.31
DEFAULT_LOAD_SOURCE = "default: vLLM's safetensors loader, 0.31 GB/s in the Run:ai Model Streamer benchmarks"
#: vLLM time to ready minus weight load time in the same benchmarks: 66.1-48.0, 35.1-14.3, 62.7-47.0, 28.3-7.5 s.
DEFAULT_INIT_SECONDS = 20.0
#: 12 GB images take 2-8 minutes to pull depending on registry bandwidth: the middle, 4 minutes, is 0.05 GB/s.
DEFAULT_PULL_GBPS = 0.05
DEFAULT_PULL_SOURCE = "default: 12 GB images pull in 2-8 minutes (the middle, 4 minutes)"
#: Lazy pulling: containers read 6.4 % of their image's data at start (Harter et al., Slacker, FAST '16).
LAZY_FRACTION = 0.064
PROBE_MARGIN = 1.5

#: Layer and manifest annotations that mark lazily pullable images (containerd/stargz-snapshotter estargz,
#: awslabs/soci-snapshotter, containerd/nydus-snapshotter).
LAZY_ANNOTATIONS = {
    "containerd.io/snapshot/stargz/toc.digest": "eStargz",
    "com.amazon.soci.index-digest": "SOCI",
    "containerd.io/snapshot/nydus-bootstrap": "Nydus",
}
_LAZY_RUNTIME = re.compile(r"(stargz|soci|nydus)", re.IGNORECASE)

_INDEX_SOURCE = "model.safetensors.index.json metadata.total_size on the Hugging Face Hub"
_PARAMS_SOURCE = "the model card's parameter count × 2 bytes (bf16 safetensors)"


@dataclass(frozen=True)
class KnownModel:
    bytes: int
    source: str


#: Weight sizes of popular Hugging Face models (lower-case ids); instruct variants share the base's size.
KNOWN_MODELS: Mapping[str, KnownModel] = {
    **{
        m: KnownModel(16_060_522_496, _INDEX_SOURCE)
        for m in (
            "meta-llama/llama-3.1-8b",
            "meta-llama/llama-3.1-8b-instruct",
            "meta-llama/meta-llama-3-8b",
            "meta-llama/meta-llama-3-8b-instruct",
            "meta-llama/meta-llama-3.1-8b-instruct",
        )
    },
    **{
        m: KnownModel(141_107_412_992, _INDEX_SOURCE)
        for m in (
            "meta-llama/llama-3.1-70b",
            "meta-llama/llama-3.1-70b-instruct",
            "meta-llama/llama-3.3-70b-instruct",
            "meta-llama/meta-llama-3-70b-instruct",
            "meta-llama/meta-llama-3.1-70b-instruct",
        )
    },
    **{
        m: KnownModel(2_471_628_800, _PARAMS_SOURCE)
        for m in ("meta-llama/llama-3.2-1b", "meta-llama/llama-3.2-1b-instruct")
    },
    **{
        m: KnownModel(6_425_499_648, _PARAMS_SOURCE)
        for m in ("meta-llama/llama-3.2-3b", "meta-llama/llama-3.2-3b-instruct")
    },
    "mistralai/mistral-7b-instruct-v0.2": KnownModel(14_483_464_192, _PARAMS_SOURCE),
    "mistralai/mixtral-8x7b-instruct-v0.1": KnownModel(93_405_585_408, _PARAMS_SOURCE),
    **{m: KnownModel(15_231_233_024, _PARAMS_SOURCE) for m in ("qwen/qwen2.5-7b", "qwen/qwen2.5-7b-instruct")},
    **{m: KnownModel(145_412_407_296, _PARAMS_SOURCE) for m in ("qwen/qwen2.5-72b", "qwen/qwen2.5-72b-instruct")},
}


def known_model(reference: str | None) -> tuple[str, KnownModel] | None:
    """The table entry for a hub id, an hf:// URI or a local path ending in org/name (a cache layout)."""
    if not reference:
        return None
    text = reference.strip().rstrip("/").lower()
    text = re.sub(r"^hf://", "", text).split("@", 1)[0]
    parts = [p for p in text.split("/") if p]
    for candidate in (text, "/".join(parts[-2:])):
        if candidate in KNOWN_MODELS:
            return candidate, KNOWN_MODELS[candidate]
    return None


# --- inputs --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ImageFacts:
    """What is known of one image: compressed bytes to pull, whether it pulls lazily, and from where."""

    bytes: int | None
    lazy: str | None = None  # eStargz, SOCI or Nydus
    source: str = "unknown"


@dataclass(frozen=True)
class Rates:
    pull_gbps: float = DEFAULT_PULL_GBPS
    pull_source: str = DEFAULT_PULL_SOURCE
    download_gbps: float = DEFAULT_PULL_GBPS
    download_source: str = "default: the image pull rate"
    load_gbps: float = DEFAULT_LOAD_GBPS
    load_source: str = DEFAULT_LOAD_SOURCE
    init_seconds: float = DEFAULT_INIT_SECONDS
    lazy_fraction: float = LAZY_FRACTION


@dataclass(frozen=True)
class ModelSize:
    bytes: int
    source: str


# --- outputs -------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Term:
    """One term of the prediction: what, how long, the arithmetic, and whether the probes are running then."""

    name: str
    seconds: float
    arithmetic: str
    under_probe: bool
    source: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "term": self.name,
            "seconds": round(self.seconds, 1),
            "arithmetic": self.arithmetic,
            "under_probe": self.under_probe,
            "source": self.source,
        }


@dataclass(frozen=True)
class ProbeBudget:
    """How long a container may take before its startup (or liveness) probe has it restarted."""

    kind: str  # "startupProbe" or "livenessProbe"
    initial_delay: int
    period: int
    failure_threshold: int
    path: FieldPath

    @property
    def seconds(self) -> int:
        return self.initial_delay + self.failure_threshold * self.period

    @property
    def arithmetic(self) -> str:
        return (
            f"initialDelaySeconds {self.initial_delay} + failureThreshold {self.failure_threshold} × "
            f"periodSeconds {self.period} = {self.seconds} s"
        )


@dataclass(frozen=True)
class Prediction:
    container: str
    server: str | None
    terms: tuple[Term, ...]
    budget: ProbeBudget | None
    notes: tuple[str, ...] = field(default=())
    not_counted: tuple[str, ...] = field(default=())  # terms left out for want of a size: the total is a floor

    @property
    def complete(self) -> bool:
        return not self.not_counted

    @property
    def total(self) -> float:
        return sum(t.seconds for t in self.terms)

    @property
    def under_probe(self) -> float:
        return sum(t.seconds for t in self.terms if t.under_probe)

    @property
    def killed(self) -> bool:
        """The probes give up before the server is predicted to answer."""
        return self.budget is not None and self.budget.seconds < self.under_probe

    def suggestion(self) -> dict[str, int]:
        return suggest_probe(self.under_probe, self.budget)

    def as_dict(self) -> dict[str, Any]:
        budget = (
            None
            if self.budget is None
            else {
                "probe": self.budget.kind,
                "seconds": self.budget.seconds,
                "initialDelaySeconds": self.budget.initial_delay,
                "periodSeconds": self.budget.period,
                "failureThreshold": self.budget.failure_threshold,
            }
        )
        return {
            "container": self.container,
            "server": self.server,
            "terms": [t.as_dict() for t in self.terms],
            "seconds_to_ready": round(self.total, 1),
            "complete": self.complete,
            "not_counted": list(self.not_counted),
            "seconds_under_probe": round(self.under_probe, 1),
            "probe_budget": budget,
            "killed_by_probe": self.killed,
            "suggested_startup_probe": self.suggestion() if self.killed or self.budget is None else None,
            "notes": list(self.notes),
        }


# --- the model -----------------------------------------------------------------------------------------------


def _int(value: Any, default: int) -> int:
    if isinstance(value, bool):
        return default
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return default


_BUDGET_PROBES = ("startupProbe", "livenessProbe")


def has_probe_budget(container: ContainerRef) -> bool:
    """Whether `probe_budget` finds a probe that can restart the container (without building its budget)."""
    data = container.data
    return any(isinstance(data.get(kind), Mapping) for kind in _BUDGET_PROBES)


def probe_budget(container: ContainerRef) -> ProbeBudget | None:
    """The startupProbe's budget, else the livenessProbe's; None when neither can restart the container."""
    for kind in _BUDGET_PROBES:
        probe = container.data.get(kind)
        if isinstance(probe, Mapping):
            return ProbeBudget(
                kind,
                _int(probe.get("initialDelaySeconds"), 0),
                max(1, _int(probe.get("periodSeconds"), 10)),
                max(1, _int(probe.get("failureThreshold"), 3)),
                (*container.path, kind),
            )
    return None


def suggest_probe(needed: float, budget: ProbeBudget | None) -> dict[str, int]:
    """startupProbe settings that wait PROBE_MARGIN × the predicted time (the period kept, 10 s by default)."""
    period = budget.period if budget is not None and budget.kind == "startupProbe" else 10
    delay = budget.initial_delay if budget is not None and budget.kind == "startupProbe" else 0
    threshold = max(3, math.ceil((needed * PROBE_MARGIN - delay) / period))
    return {"initialDelaySeconds": delay, "periodSeconds": period, "failureThreshold": threshold}


def pod_images(template: PodTemplate) -> list[str]:
    """The distinct images of the pod in the order the kubelet pulls them (init containers first); a container
    whose controller gives it its image (a KServe `model:` predictor) counts its runtime's, named in words when
    the input does not hold the runtime, so that a size given for every other image covers it."""
    ordered = sorted(template.containers, key=lambda c: 0 if c.kind in ("init", "sidecar") else 1)
    images: list[str] = []
    for container in ordered:
        image = container.data.get("image") or _given_image(template, container)
        if isinstance(image, str) and image and image not in images:
            images.append(image)
    return images


def _given_image(template: PodTemplate, container: ContainerRef) -> str | None:
    fill = template.fill(container)
    if fill is None or fill.container_name is None:
        return None
    if fill.image:
        return fill.image
    return f"the image of {fill.runtime}" if fill.runtime else "the image of the ServingRuntime KServe selects"


def container_name(template: PodTemplate, container: ContainerRef) -> str:
    """The container's name, or the one its controller gives it (KServe's `kserve-container`)."""
    if container.name:
        return container.name
    fill = template.fill(container)
    return fill.container_name if fill is not None and fill.container_name else container.name


def lazy_runtime(template: PodTemplate) -> str | None:
    """A runtimeClassName that names a lazy-pulling snapshotter (containerd runtimes can set one per handler)."""
    name = template.spec.get("runtimeClassName")
    if isinstance(name, str):
        match = _LAZY_RUNTIME.search(name)
        if match:
            return {"stargz": "eStargz", "soci": "SOCI", "nydus": "Nydus"}[match.group(1).lower()]
    return None


def lazy_from_manifest(manifest: Mapping[str, Any]) -> str | None:
    """The lazy format an OCI image manifest (or index entry) declares through its annotations."""
    holders: list[Any] = [manifest, *(manifest.get("layers") or []), *(manifest.get("manifests") or [])]
    for holder in holders:
        annotations = holder.get("annotations") if isinstance(holder, Mapping) else None
        if isinstance(annotations, Mapping):
            for key, kind in LAZY_ANNOTATIONS.items():
                if key in annotations:
                    return kind
    return None


def _gb(n: float) -> str:
    return f"{n / 1e9:.2f} GB"


def predict(
    template: PodTemplate,
    container: ContainerRef,
    server: Server | None,
    images: Mapping[str, ImageFacts],
    model: ModelSize | None,
    rates: Rates = Rates(),
) -> Prediction:
    """Seconds to ready of one GPU container of a pod on a node that has none of its images or weights cached."""
    terms: list[Term] = []
    notes: list[str] = []
    runtime_lazy = lazy_runtime(template)
    pulled = 0.0
    parts: list[str] = []
    unknown: list[str] = []
    for image in pod_images(template):
        facts = images.get(image, ImageFacts(None))
        if facts.bytes is None:
            unknown.append(image)
            continue
        lazy = facts.lazy or runtime_lazy
        share = rates.lazy_fraction if lazy else 1.0
        pulled += facts.bytes * share
        parts.append(f"{_gb(facts.bytes)}" + (f" × {share:.1%} ({lazy}, lazy)" if lazy else ""))
    if parts:
        terms.append(
            Term(
                "image pull",
                pulled / (rates.pull_gbps * 1e9),
                f"({' + '.join(parts)}) / {rates.pull_gbps:g} GB/s",
                False,
                f"sizes: {', '.join(sorted({images[i].source for i in images if i not in unknown}))}; "
                f"rate: {rates.pull_source}",
            )
        )
    not_counted: list[str] = []
    if unknown:
        notes.append(f"image size unknown, pull not counted: {', '.join(unknown)} (give --image-size)")
        not_counted.append("image pull")
    if model is None:
        notes.append("model size unknown, download and load not counted (give --model-size or --model-dir)")
        not_counted.append("weights download and load")
    else:
        download = model.bytes / (rates.download_gbps * 1e9)
        if server is not None and server.downloads and not server.streaming:
            in_pod = server.name not in ("KServe", "KServe LLMInferenceService")  # its storage initializer runs first
            if in_pod and _cached(template, container, server):
                notes.append(
                    f"the download cache is a persistent volume: only a pod that finds it empty also "
                    f"downloads {_gb(model.bytes)} ({download:.0f} s at {rates.download_gbps:g} GB/s)"
                )
            else:
                where = "by the server" if in_pod else "storage initializer"
                terms.append(
                    Term(
                        f"weights download ({where})",
                        download,
                        f"{_gb(model.bytes)} / {rates.download_gbps:g} GB/s",
                        in_pod,
                        f"rate: {rates.download_source}",
                    )
                )
        terms.append(
            Term(
                "weights load",
                model.bytes / (rates.load_gbps * 1e9),
                f"{_gb(model.bytes)} / {rates.load_gbps:g} GB/s",
                True,
                f"size: {model.source}; rate: {rates.load_source}",
            )
        )
    if server is not None:
        terms.append(
            Term(
                "server start",
                rates.init_seconds,
                f"{rates.init_seconds:g} s",
                True,
                "engine start besides the load (vLLM time to ready minus load time, Run:ai benchmarks)",
            )
        )
    return Prediction(
        container_name(template, container),
        server.name if server else None,
        tuple(terms),
        probe_budget(container),
        tuple(notes),
        tuple(not_counted),
    )


def _cached(template: PodTemplate, container: ContainerRef, server: Server) -> bool:
    """The server downloads into a volume that outlives the pod (a cache), so a restart does not download again."""
    views = mounts(template, container)
    for path in server.write_paths:
        view = mount_for(views, path)
        if view is not None and view.source in PERSISTENT_SOURCES:
            return True
    return False


def model_size_of(server: Server | None) -> ModelSize | None:
    """The model's size from the known-models table, when the server names a known model."""
    found = known_model(server.model if server else None)
    if found is None:
        return None
    name, entry = found
    return ModelSize(entry.bytes, f"{name}: {entry.source}")


def describe(predictions: Sequence[Prediction]) -> str:
    """The arithmetic of each prediction, for the command's text output."""
    lines: list[str] = []
    for p in predictions:
        lines.append(f"container '{p.container}'" + (f" ({p.server})" if p.server else "") + ":")
        for term in p.terms:
            mark = "" if term.under_probe else "  (before the container starts)"
            lines.append(f"  {term.name:<36} {term.seconds:>8.1f} s = {term.arithmetic}{mark}")
            if term.source:
                lines.append(f"  {'':<36}            ({term.source})")
        floor = "" if p.complete else f"  (at least: {' and '.join(p.not_counted)} not counted)"
        lines.append(f"  {'seconds to ready':<36} {p.total:>8.1f} s{floor}")
        lines.append(f"  {'of which after the container starts':<36} {p.under_probe:>8.1f} s{floor}")
        if p.budget is None:
            lines.append("  no startupProbe or livenessProbe: nothing restarts it while it loads")
        else:
            verdict = (
                "too short: restarted before it is ready"
                if p.killed
                else "long enough"
                if p.complete
                else "long enough for what is counted"
            )
            lines.append(f"  {p.budget.kind}: {p.budget.arithmetic}: {verdict}")
            if p.killed:
                s = p.suggestion()
                lines.append(
                    f"  suggested startupProbe: initialDelaySeconds {s['initialDelaySeconds']}, periodSeconds "
                    f"{s['periodSeconds']}, failureThreshold {s['failureThreshold']} "
                    f"({s['initialDelaySeconds'] + s['periodSeconds'] * s['failureThreshold']} s)"
                )
        lines.extend(f"  note: {note}" for note in p.notes)
    return "\n".join(lines)
