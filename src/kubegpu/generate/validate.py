"""Validate generated objects: core kinds against Kubernetes' OpenAPI schemas, others against ours.

Core kinds go through kubernetes-validate (strict, pinned to Kubernetes 1.35); KubeletConfiguration,
KubeSchedulerConfiguration, Kustomization and the CRDs we emit go through the structural schemas
vendored in `schemas/` (each names its upstream repository, path and version in its header).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Any

import jsonschema
import yaml

from kubegpu.errors import MissingExtraError
from kubegpu.generate.workload import templates_of
from kubegpu.manifests import Document, get_path

KUBERNETES_VERSION = "1.35.0"

# (apiVersion, kind) -> vendored schema file
VENDORED: Mapping[tuple[str, str], str] = {
    ("kubelet.config.k8s.io/v1beta1", "KubeletConfiguration"): "kubeletconfiguration.yaml",
    (
        "kubescheduler.config.k8s.io/v1",
        "KubeSchedulerConfiguration",
    ): "kubeschedulerconfiguration.yaml",
    ("kustomize.config.k8s.io/v1beta1", "Kustomization"): "kustomization.yaml",
    ("kueue.x-k8s.io/v1beta2", "ResourceFlavor"): "kueue-resourceflavor.yaml",
    ("kueue.x-k8s.io/v1beta2", "ClusterQueue"): "kueue-clusterqueue.yaml",
    ("kueue.x-k8s.io/v1beta2", "LocalQueue"): "kueue-localqueue.yaml",
    ("kueue.x-k8s.io/v1beta2", "Topology"): "kueue-topology.yaml",
    ("scheduling.volcano.sh/v1beta1", "Queue"): "volcano-queue.yaml",
    ("scheduling.volcano.sh/v1beta1", "PodGroup"): "volcano-podgroup.yaml",
    ("scheduling.run.ai/v2", "Queue"): "kai-queue.yaml",
    ("scheduling.run.ai/v2alpha2", "PodGroup"): "kai-podgroup.yaml",
    ("kai.scheduler/v1", "SchedulingShard"): "kai-schedulingshard.yaml",
    ("resource.nvidia.com/v1beta1", "ComputeDomain"): "nvidia-computedomain.yaml",
}


class SchemaViolation(Exception):
    """A generated object does not match its schema; names the object and the field."""


class NoSchema(SchemaViolation):
    """Neither Kubernetes nor kubegpu has a schema for this apiVersion and kind."""


@dataclass(frozen=True)
class SchemaInfo:
    """A vendored schema and the upstream it was taken from."""

    schema: Mapping[str, Any]
    source: Mapping[str, Any]


@functools.cache
def load_vendored(filename: str) -> SchemaInfo:
    """Read one vendored schema file (YAML: `source` and `schema`)."""
    text = resources.files("kubegpu.generate").joinpath("schemas", filename).read_text("utf-8")
    data = yaml.safe_load(text)
    return SchemaInfo(schema=data["schema"], source=data["source"])


def _strict(schema: Any) -> Any:
    """Reject unknown fields as the API server's pruning would drop them (structural schemas)."""
    if isinstance(schema, list):
        return [_strict(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {key: _strict(value) for key, value in schema.items()}
    if (
        out.get("type") == "object"
        and "properties" in out
        and "additionalProperties" not in out
        and not out.get("x-kubernetes-preserve-unknown-fields")
    ):
        out["additionalProperties"] = False
    return out


@functools.cache
def _validator(filename: str) -> jsonschema.protocols.Validator:
    info = load_vendored(filename)
    schema = _strict(dict(info.schema))
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    return cls(schema)


def validate_object(obj: Mapping[str, Any]) -> str:
    """Validate one object; return which schema was used; raise SchemaViolation when invalid."""
    api_version = str(obj.get("apiVersion", ""))
    kind = str(obj.get("kind", ""))
    name = (obj.get("metadata") or {}).get("name", "")
    label = f"{kind}/{name}" if name else kind
    filename = VENDORED.get((api_version, kind))
    if filename is not None:
        errors = sorted(_validator(filename).iter_errors(dict(obj)), key=lambda e: list(e.path))
        if errors:
            first = errors[0]
            where = ".".join(str(p) for p in first.absolute_path) or "(root)"
            raise SchemaViolation(f"{label}: {where}: {first.message}")
        return f"vendored:{filename}"
    return _validate_core(obj, label)


def _validate_core(obj: Mapping[str, Any], label: str) -> str:
    try:
        import kubernetes_validate
    except ImportError as err:  # the `validate` extra
        raise MissingExtraError("validate", "validating against the Kubernetes schema") from err
    try:
        kubernetes_validate.validate(dict(obj), KUBERNETES_VERSION, strict=True)
    except kubernetes_validate.SchemaNotFoundError as err:
        raise NoSchema(f"{label}: no schema for {obj.get('apiVersion')} {err.kind}") from err
    except kubernetes_validate.ValidationError as err:
        where = ".".join(str(p) for p in err.path) or "(root)"
        raise SchemaViolation(f"{label}: {where}: {err.message}") from err
    return f"kubernetes-{KUBERNETES_VERSION}"


def validate_workload(obj: Mapping[str, Any], source: str = "<patched>") -> list[str]:
    """Validate a (patched) workload; for kinds without a schema (operators' custom resources), each of its
    pod templates with pod metadata of its own is validated as a core PodTemplate instead."""
    try:
        return [validate_object(obj)]
    except NoSchema:
        name = str((obj.get("metadata") or {}).get("name") or "workload")
        used = []
        doc = Document(source=source, index=0, data=obj)
        for ref in templates_of(doc):
            if not ref.own_metadata or ref.spec_path[-1] != "spec":
                continue  # a spec inside a custom object (KServe): no core schema describes it
            template = {"metadata": get_path(obj, ref.metadata_path or ()) or {}}
            template["spec"] = get_path(obj, ref.spec_path)
            used.append(
                validate_object(
                    {
                        "apiVersion": "v1",
                        "kind": "PodTemplate",
                        "metadata": {"name": f"{name}-{ref.role or 'pods'}".lower()},
                        "template": template,
                    }
                )
            )
        if not used:
            raise
        return used
