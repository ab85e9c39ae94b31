"""inference-scale-to-zero: an autoscaler or serving platform scales a GPU inference service to zero replicas, so
the next request waits for a node, the image and the model. Defaults follow KServe v0.15 (minReplicas 1), KEDA
v2.15 (minReplicaCount 0), Knative Serving v1.x (min-scale 0 under the KPA class with scale-to-zero on), Ray Serve
2.x (autoscaling_config.min_replicas 1) and kubernetes v1.35 HPA (minReplicas 1).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

import yaml

from kubegpu.manifests import (
    Document,
    FieldPath,
    PodTemplate,
    get_path,
    is_mapping,
    uses_accelerators,
)
from kubegpu.ruleapi import Edit, Fix, RawFinding, Rule, RuleContext, Safety, Severity, Target
from kubegpu.rules.models.common import PRACTICE
from kubegpu.serving.servers import same_namespace
from kubegpu.workloads import pod_templates

# --- inference-scale-to-zero -----------------------------------------------------------------------------------

_KNATIVE_MIN = ("autoscaling.knative.dev/min-scale", "autoscaling.knative.dev/minScale")
_KNATIVE_CLASS = "autoscaling.knative.dev/class"


def _gpu_templates(doc: Document, ctx: RuleContext) -> list[PodTemplate]:
    return [t for t in pod_templates(doc) if uses_accelerators(t, ctx.accelerator_resources)]


def _target(ctx: RuleContext, scaler: Document, ref: Any, default_kind: str) -> Document | None:
    """The scale target named by an autoscaler's scaleTargetRef, when it is in the input."""
    if not isinstance(ref, Mapping) or not isinstance(ref.get("name"), str):
        return None
    ctx.whole_input(scaler)  # declares the read; the kind index below answers it without a scan
    kind = str(ref.get("kind") or default_kind).lower()
    for indexed_kind, docs in ctx.documents_by_kind.items():
        if indexed_kind.lower() != kind:
            continue
        for doc in docs:
            if doc.ref.name == ref["name"] and same_namespace(doc.ref.namespace, scaler.ref.namespace):
                return doc
    return None


def _int_value(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value.strip())
    return None


_COLD = "the next request waits for a GPU node, the image pull and the model load: minutes for a large model"


def _check_scale_to_zero(doc: Document, ctx: RuleContext) -> Iterator[RawFinding]:
    spec = doc.data.get("spec") if is_mapping(doc.data) else None
    if not is_mapping(spec):
        return
    check = _SCALERS.get((doc.api_version.split("/")[0], doc.kind))
    if check is not None:
        yield from check(doc, spec, ctx)


def _hpa_to_zero(doc: Document, spec: Mapping[str, Any], ctx: RuleContext) -> Iterator[RawFinding]:
    minimum = _int_value(spec.get("minReplicas"))
    target = _target(ctx, doc, spec.get("scaleTargetRef"), "Deployment")
    if minimum == 0 and target is not None and _gpu_templates(target, ctx):
        yield RawFinding(
            ("spec", "minReplicas"),
            f"HPA minReplicas 0 scales the GPU {target.kind} '{target.ref.name}' to zero "
            f"(HPAScaleToZero): {_COLD}; keep at least one warm replica",
            Fix("keep one warm replica", Safety.UNSAFE, (Edit("replace", ("spec", "minReplicas"), 1),)),
        )


def _keda_to_zero(doc: Document, spec: Mapping[str, Any], ctx: RuleContext) -> Iterator[RawFinding]:
    target = _target(ctx, doc, spec.get("scaleTargetRef"), "Deployment")
    if target is None or not _gpu_templates(target, ctx):
        return
    minimum = _int_value(spec.get("minReplicaCount"))
    name = f"the GPU {target.kind} '{target.ref.name}'"
    if "minReplicaCount" not in spec:
        yield RawFinding(
            ("spec",),
            f"KEDA ScaledObject has no minReplicaCount, and KEDA's default is 0: it scales "
            f"{name} to zero when idle; {_COLD}; set minReplicaCount: 1 or more",
            Fix("keep one warm replica", Safety.UNSAFE, (Edit("add", ("spec", "minReplicaCount"), 1),)),
        )
    elif minimum == 0:
        yield RawFinding(
            ("spec", "minReplicaCount"),
            f"KEDA minReplicaCount 0 scales {name} to zero when idle; {_COLD}",
            Fix("keep one warm replica", Safety.UNSAFE, (Edit("replace", ("spec", "minReplicaCount"), 1),)),
        )
    if _int_value(spec.get("idleReplicaCount")) == 0 and (minimum or 0) > 0:
        yield RawFinding(
            ("spec", "idleReplicaCount"),
            f"KEDA idleReplicaCount 0 scales {name} to zero whenever "
            f"no trigger is active, below minReplicaCount; {_COLD}",
            Fix("drop idleReplicaCount", Safety.UNSAFE, (Edit("remove", ("spec", "idleReplicaCount")),)),
        )


def _vllm_runtime_to_zero(doc: Document, spec: Mapping[str, Any], ctx: RuleContext) -> Iterator[RawFinding]:
    # vllm-project/production-stack vllmruntime_types.go: autoscalingConfig (KEDA) minReplicas, default 1
    scaling = spec.get("autoscalingConfig")
    if (
        isinstance(scaling, Mapping)
        and scaling.get("enabled") is True
        and _int_value(scaling.get("minReplicas")) == 0
        and _gpu_templates(doc, ctx)
    ):
        yield RawFinding(
            ("spec", "autoscalingConfig", "minReplicas"),
            f"VLLMRuntime '{doc.ref.name}' autoscalingConfig.minReplicas 0 lets KEDA scale its GPU "
            f"pods to zero when idle: {_COLD}; keep at least one warm replica",
            Fix(
                "keep one warm replica",
                Safety.UNSAFE,
                (Edit("replace", ("spec", "autoscalingConfig", "minReplicas"), 1),),
            ),
        )


def _knative_to_zero(doc: Document, spec: Mapping[str, Any], ctx: RuleContext) -> Iterator[RawFinding]:
    for template in _gpu_templates(doc, ctx):
        yield from _knative(template)


def _kserve_to_zero(doc: Document, spec: Mapping[str, Any], ctx: RuleContext) -> Iterator[RawFinding]:
    for template in _gpu_templates(doc, ctx):
        component = template.spec
        if template.path[-1] == "workerSpec":
            continue
        if _int_value(component.get("minReplicas")) == 0:
            yield RawFinding(
                (*template.path, "minReplicas"),
                f"KServe {template.role} minReplicas 0 lets the autoscaler (Knative in Serverless "
                f"mode, KEDA in Standard mode) scale the GPU model server to zero; {_COLD}; keep at "
                "least 1 (KServe's default)",
                Fix("keep one warm replica", Safety.UNSAFE, (Edit("replace", (*template.path, "minReplicas"), 1),)),
            )


def _ray_service_to_zero(doc: Document, spec: Mapping[str, Any], ctx: RuleContext) -> Iterator[RawFinding]:
    if not _gpu_templates(doc, ctx):
        return
    for name in _ray_serve_scale_to_zero(spec.get("serveConfigV2")):
        yield RawFinding(
            ("spec", "serveConfigV2"),
            f"Ray Serve deployment '{name}' asks for GPUs with autoscaling_config.min_replicas 0: "
            f"Serve drops its last replica when idle and the GPU worker can be released; {_COLD}; "
            "set min_replicas: 1",
        )


# Each autoscaler (and each serving kind with its own), by API group and kind: what scales GPU pods to zero.
_SCALERS: Mapping[tuple[str, str], Callable[[Document, Mapping[str, Any], RuleContext], Iterator[RawFinding]]] = {
    ("autoscaling", "HorizontalPodAutoscaler"): _hpa_to_zero,
    ("keda.sh", "ScaledObject"): _keda_to_zero,
    ("production-stack.vllm.ai", "VLLMRuntime"): _vllm_runtime_to_zero,
    ("serving.knative.dev", "Service"): _knative_to_zero,
    ("serving.kserve.io", "InferenceService"): _kserve_to_zero,
    ("ray.io", "RayService"): _ray_service_to_zero,
}


def _ray_serve_scale_to_zero(config: Any) -> Iterator[str]:
    """GPU deployments of a Ray Serve config (serveConfigV2 text) whose autoscaling minimum is 0 replicas."""
    if not isinstance(config, str) or len(config) > 1_000_000 or ("&" in config and "*" in config):
        return  # embedded YAML with anchors and aliases is not expanded here (no alias-bomb guard at this level)
    try:
        parsed = yaml.safe_load(config)
    except yaml.YAMLError:
        return
    applications = parsed.get("applications") if isinstance(parsed, Mapping) else None
    for application in applications if isinstance(applications, list) else []:
        deployments = application.get("deployments") if isinstance(application, Mapping) else None
        for deployment in deployments if isinstance(deployments, list) else []:
            if not isinstance(deployment, Mapping):
                continue
            autoscaling = deployment.get("autoscaling_config")
            actor = deployment.get("ray_actor_options")
            gpus = actor.get("num_gpus") if isinstance(actor, Mapping) else None
            if (
                isinstance(autoscaling, Mapping)
                and _int_value(autoscaling.get("min_replicas")) == 0
                and isinstance(gpus, (int, float))
                and not isinstance(gpus, bool)
                and gpus > 0
            ):
                yield str(deployment.get("name") or "?")


def _knative(template: PodTemplate) -> Iterator[RawFinding]:
    annotations = template.annotations
    meta = template.metadata_path or ("spec", "template", "metadata")
    key = next((k for k in _KNATIVE_MIN if k in annotations), None)
    if key is not None:
        if _int_value(annotations[key]) == 0:
            yield RawFinding(
                (*meta, "annotations", key),
                f'Knative {key}: "0" lets the GPU revision scale to zero; {_COLD}',
                Fix("keep one warm replica", Safety.UNSAFE, (Edit("replace", (*meta, "annotations", key), "1"),)),
            )
        return
    if str(annotations.get(_KNATIVE_CLASS, "kpa.autoscaling.knative.dev")).startswith("hpa."):
        return  # the HPA class never scales to zero; its minimum defaults to 1
    metadata = get_path(template.document.data, meta)
    if isinstance(metadata, Mapping) and isinstance(metadata.get("annotations"), Mapping):
        edit = Edit("add", (*meta, "annotations", _KNATIVE_MIN[0]), "1")
        path: FieldPath = (*meta, "annotations")
    elif isinstance(metadata, Mapping):
        edit = Edit("add", (*meta, "annotations"), {_KNATIVE_MIN[0]: "1"})
        path = meta
    else:
        edit = Edit("add", meta, {"annotations": {_KNATIVE_MIN[0]: "1"}})
        path = meta[:-1]
    yield RawFinding(
        path,
        "Knative revision template has no autoscaling.knative.dev/min-scale; with the default "
        "KPA class and scale-to-zero enabled (Knative's defaults) the minimum is 0, so the GPU service "
        f"scales to zero when idle; {_COLD}",
        Fix("keep one warm replica", Safety.UNSAFE, (edit,)),
    )


INFERENCE_SCALE_TO_ZERO = Rule(
    code="KG403",
    name="inference-scale-to-zero",
    practice=PRACTICE,
    severity=Severity.WARNING,
    summary="A GPU inference workload can scale to zero (HPA/KEDA/Knative/KServe minimum of 0 replicas).",
    target=Target.DOCUMENT,
    kinds=frozenset(
        {"HorizontalPodAutoscaler", "ScaledObject", "VLLMRuntime", "Service", "InferenceService", "RayService"}
    ),
    check=_check_scale_to_zero,
    gpu_only=False,
    fixable=True,
    rationale="With no warm replica the first request after an idle period waits for a GPU node, the 10-30 GB "
    "image and the model load: minutes for large models. Flagged: an HPA with minReplicas 0 (needs the "
    "HPAScaleToZero gate) whose target in the input uses GPUs; a KEDA ScaledObject with minReplicaCount 0 or "
    "absent (KEDA's default is 0) or idleReplicaCount 0; a RayService whose Serve config gives a GPU deployment "
    "(ray_actor_options.num_gpus in the config) autoscaling_config.min_replicas 0 (Ray Serve's default is 1); a "
    'Knative Service whose GPU revision sets min-scale "0" or omits it (under the default KPA class with '
    "scale-to-zero enabled the minimum defaults to 0; the HPA class "
    "is exempt); a KServe InferenceService component with minReplicas 0 (KServe's default is 1). Scaling to zero "
    "can be a deliberate cost choice: suppress with a reason then. The fix (unsafe: it keeps a GPU allocated) sets "
    "the minimum to 1.",
    bad_example="kind: ScaledObject\nspec:\n  scaleTargetRef: {name: vllm}\n  triggers: [...]",
    good_example="kind: ScaledObject\nspec:\n  scaleTargetRef: {name: vllm}\n  minReplicaCount: 1\n  triggers: [...]",
)
