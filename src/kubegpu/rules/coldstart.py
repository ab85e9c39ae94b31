"""Cold-start rule: a GPU inference server whose startup (or liveness) probe gives up before its weights load.

The prediction is `coldstart_model.predict` (the one the `kubegpu coldstart` command prints); probe semantics
follow kubernetes v1.35 pkg/kubelet/prober.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from kubegpu.manifests import ContainerRef, PodTemplate, memoised
from kubegpu.manifests.gpu_containers import gpu_containers
from kubegpu.ruleapi import Edit, Fix, RawFinding, Rule, RuleContext, Safety, Severity, Target
from kubegpu.ruleapi.options import RuleOption, byte_sizes, positive_number
from kubegpu.serving.coldstart import (
    DEFAULT_INIT_SECONDS,
    DEFAULT_LOAD_GBPS,
    DEFAULT_PULL_GBPS,
    PROBE_MARGIN,
    ModelSize,
    Prediction,
    Rates,
    has_probe_budget,
    model_size_of,
    predict,
)
from kubegpu.serving.servers import recognise

_NAME = "startup-probe-too-short"
_HANDLERS = ("httpGet", "tcpSocket", "grpc", "exec")


def _rate(name: str, help: str, default: float) -> RuleOption[float]:
    return RuleOption[float](
        name=name,
        help=help,
        expected="a number of GB/s above 0",
        example=f"{default:g}",
        parse=positive_number(),
        default=default,
    )


LOAD_GBPS = _rate("load-gbps", "weight load rate (the best cold rate from `kubegpu loadbench`)", DEFAULT_LOAD_GBPS)
DOWNLOAD_GBPS = _rate("download-gbps", "rate of a download the server does itself", DEFAULT_PULL_GBPS)
PULL_GBPS = _rate(
    "pull-gbps", "image pull rate (not counted against probes; used by `kubegpu coldstart`)", DEFAULT_PULL_GBPS
)
INIT_SECONDS = RuleOption[float](
    name="init-seconds",
    help="the server's start besides the load",
    expected="a number of seconds, 0 or more",
    example="20",
    parse=positive_number(allow_zero=True),
    default=DEFAULT_INIT_SECONDS,
)
MODEL_SIZES = RuleOption[Mapping[str, int]](
    name="model-sizes",
    help="sizes of models the built-in table does not know, by model id (matched without case)",
    expected='a table of model id to bytes (a whole number or a quantity such as "141G")',
    example='{"acme/house-model-v3" = "60G"}',
    parse=byte_sizes,
    default={},
    default_text="none",
)


def rates_from(ctx: RuleContext) -> Rates:
    return Rates(
        pull_gbps=PULL_GBPS.read(ctx, _NAME),
        download_gbps=DOWNLOAD_GBPS.read(ctx, _NAME),
        download_source="the download-gbps option" if DOWNLOAD_GBPS.given(ctx, _NAME) else Rates().download_source,
        load_gbps=LOAD_GBPS.read(ctx, _NAME),
        load_source="the load-gbps option" if LOAD_GBPS.given(ctx, _NAME) else Rates().load_source,
        init_seconds=INIT_SECONDS.read(ctx, _NAME),
    )


def _model(ctx: RuleContext, prediction_server: Any) -> ModelSize | None:
    model = getattr(prediction_server, "model", None)
    if isinstance(model, str):
        for key, size in MODEL_SIZES.read(ctx, _NAME).items():
            if key.lower() == model.lower():
                return ModelSize(size, "the model-sizes option")
    return model_size_of(prediction_server)


def _fix(container: ContainerRef, prediction: Prediction) -> Fix | None:
    budget = prediction.budget
    suggestion = prediction.suggestion()
    if budget is None:
        return None
    if budget.kind == "startupProbe":
        probe = container.data.get("startupProbe")
        assert isinstance(probe, Mapping)
        edits = tuple(
            Edit("replace" if key in probe else "add", (*budget.path, key), value)
            for key, value in (
                ("failureThreshold", suggestion["failureThreshold"]),
                ("periodSeconds", suggestion["periodSeconds"]),
            )
            if probe.get(key) != value
        )
        return Fix(f"let the startupProbe wait {_wait(suggestion)} s", Safety.UNSAFE, edits)
    liveness = container.data.get("livenessProbe")
    assert isinstance(liveness, Mapping)
    handler = {k: liveness[k] for k in _HANDLERS if k in liveness}
    if not handler:
        return None
    startup = {
        **handler,
        "periodSeconds": suggestion["periodSeconds"],
        "failureThreshold": suggestion["failureThreshold"],
    }
    return Fix(
        f"add a startupProbe with the livenessProbe's check that waits {_wait(suggestion)} s",
        Safety.UNSAFE,
        (Edit("add", (*container.path, "startupProbe"), startup),),
    )


def _wait(suggestion: Mapping[str, int]) -> int:
    return suggestion["initialDelaySeconds"] + suggestion["periodSeconds"] * suggestion["failureThreshold"]


def _check(template: PodTemplate, ctx: RuleContext) -> Iterator[RawFinding]:
    # Only a probe can kill a slow start: containers without one are not recognised or predicted (most of them).
    servers = [
        (c, server)
        for c, _ in gpu_containers(template, ctx.accelerator_resources)
        if has_probe_budget(c) and (server := recognise(template, c)) is not None
    ]
    if not servers:
        return  # no inference server with a probe: nothing to judge
    rates = memoised(ctx, "coldstart.rates", rates_from, ctx)  # the run's options: read once per run
    for container, server in servers:
        model = _model(ctx, server)
        if model is None:
            continue  # an unknown size predicts nothing
        prediction = predict(template, container, server, {}, model, rates)
        budget = prediction.budget
        if budget is None or not prediction.killed:
            continue
        terms = " + ".join(
            f"{t.name} {t.seconds:.0f} s" + ("" if t.name == "server start" else f" ({t.arithmetic})")
            for t in prediction.terms
            if t.under_probe
        )
        suggestion = prediction.suggestion()
        other = (
            ""
            if budget.kind == "startupProbe"
            else " (there is no startupProbe, so the livenessProbe runs from the start)"
        )
        yield RawFinding(
            budget.path,
            f"{server.name} in container '{prediction.container}' needs about {prediction.under_probe:.0f} s before it "
            f"answers, but its {budget.kind} restarts it after {budget.seconds} s{other}: {terms}; the kubelet "
            "kills it while it loads and it never becomes ready; give it a startupProbe with periodSeconds "
            f"{suggestion['periodSeconds']} and failureThreshold {suggestion['failureThreshold']} "
            f"({_wait(suggestion)} s, {PROBE_MARGIN:g}× the prediction)",
            _fix(container, prediction),
        )


STARTUP_PROBE_TOO_SHORT = Rule(
    code="KG404",
    name=_NAME,
    practice="model loading",
    severity=Severity.WARNING,
    summary="A GPU inference server's startupProbe (or livenessProbe) gives up before its weights can load.",
    target=Target.TEMPLATE,
    check=_check,
    fixable=True,
    rationale="A model server answers its health check only once its weights are in GPU memory: tens to hundreds "
    "of GB read at a few hundred MB/s to a few GB/s. The kubelet restarts a container whose startupProbe fails "
    "failureThreshold times in a row (first try after initialDelaySeconds, then every periodSeconds: defaults 0, "
    "3 and 10 s, so 30 s), and without a startupProbe the livenessProbe does the same from the start. A budget "
    "shorter than the load restarts the server in a loop, each time from an empty GPU. The prediction is the one "
    "`kubegpu coldstart` shows: the weights download when the server fetches them itself, the weights load "
    "(size / load rate) and the server's own start; the image pull happens before the probes start and is not "
    "counted. The size comes from a table of known Hugging Face models (Llama 3.x, Mistral, Mixtral, Qwen 2.5) "
    "or the model-sizes option; a server whose model size is unknown is not judged. Defaults: load 0.31 GB/s "
    "(vLLM's safetensors loader in the Run:ai Model Streamer benchmarks), download 0.05 GB/s, server start 20 s "
    "(vLLM time-to-ready minus load time in the same benchmarks); measure yours with `kubegpu loadbench` and set "
    "load-gbps. The fix (unsafe: it changes how long a hung server goes unnoticed) sets the startupProbe's "
    f"failureThreshold to cover {PROBE_MARGIN:g}× the prediction, or adds a startupProbe with the livenessProbe's "
    "check.",
    options=(LOAD_GBPS, DOWNLOAD_GBPS, PULL_GBPS, INIT_SECONDS, MODEL_SIZES),
    bad_example="args: [--model, meta-llama/Llama-3.1-70B-Instruct]\n"
    "startupProbe: {httpGet: {path: /health, port: 8000}, periodSeconds: 10, failureThreshold: 30}  # 300 s",
    good_example="startupProbe: {httpGet: {path: /health, port: 8000}, periodSeconds: 10, failureThreshold: 75}",
)

RULES: tuple[Rule, ...] = (STARTUP_PROBE_TOO_SHORT,)
