"""A render-heavy repository shaped like an operator's (KServe's `config/`): kustomizations holding large
CustomResourceDefinitions, overlays sharing bases, kustomize Components, charts, and a few plain files. Written
here from scratch; the bench (`bench/bench_render.py`) builds a larger one with the same function.

Every GPU workload in it lacks a memory-backed /dev/shm, so each gives one KG201 finding at the file that
declares it, whichever render brings it in.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path

GPU_CONTAINER = (
    "      containers:\n      - name: server\n        image: registry.example.com/serve:1.0\n"
    "        resources:\n          limits: {nvidia.com/gpu: 1, cpu: '4', memory: 16Gi}\n"
    "          requests: {nvidia.com/gpu: 1, cpu: '4', memory: 16Gi}\n"
)


def gpu_deployment(name: str, labels: str = "") -> str:
    return (
        f"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\n{labels}spec:\n  replicas: 1\n"
        f"  selector:\n    matchLabels: {{app: {name}}}\n  template:\n    metadata:\n      labels: {{app: {name}}}\n"
        f"    spec:\n{GPU_CONTAINER}"
    )


def large_crd(group: str, kind: str, kib: int) -> str:
    """A CustomResourceDefinition whose schema is about `kib` KiB: nested properties with long descriptions, and
    a pod template's shape inside the schema (as operators' CRDs have), which no rule may mistake for a pod."""
    plural = kind.lower() + "s"
    lines = [
        "apiVersion: apiextensions.k8s.io/v1",
        "kind: CustomResourceDefinition",
        "metadata:",
        "  annotations:",
        "    controller-gen.kubebuilder.io/version: v0.16.0",
        f"  name: {plural}.{group}",
        "spec:",
        f"  group: {group}",
        "  names:",
        f"    kind: {kind}",
        f"    plural: {plural}",
        "  scope: Namespaced",
        "  versions:",
        "  - name: v1",
        "    served: true",
        "    storage: true",
        "    schema:",
        "      openAPIV3Schema:",
        "        type: object",
        "        properties:",
        "          spec:",
        "            type: object",
        "            properties:",
        "              containers:",
        "                type: array",
        "                items:",
        "                  type: object",
        "                  properties:",
        "                    image: {type: string}",
        "                    name: {type: string}",
    ]
    text = "The field's meaning, in the words an API reference would use; repeated to give the schema its size. "
    field = 0
    while sum(len(line) + 1 for line in lines) < kib * 1024:
        lines += [
            f"              field{field}:",
            "                type: object",
            f"                description: {json.dumps(text * 4)}",
            "                properties:",
            "                  value:",
            "                    type: string",
            f"                    description: {json.dumps(text * 2)}",
        ]
        field += 1
    return "\n".join(lines) + "\n"


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _kustomization(folder: Path, body: str, kind: str = "Kustomization") -> None:
    version = "v1alpha1" if kind == "Component" else "v1beta1"
    _write(folder / "kustomization.yaml", f"apiVersion: kustomize.config.k8s.io/{version}\nkind: {kind}\n{body}")


@dataclass(frozen=True)
class RenderRepo:
    """What the repository holds, and what a whole-repository lint must do with it."""

    root: Path
    kustomize_runs: int  # kustomize builds a whole-repository lint runs: each once
    helm_runs: int
    kustomizations: int  # kustomization folders in it
    gpu_sources: tuple[str, ...]  # files declaring a GPU workload without /dev/shm: one KG201 each


def write_render_repo(root: Path, overlays: int = 3, crds: int = 3, crd_kib: int = 64, charts: int = 2) -> RenderRepo:
    """Write the repository under `root`; `overlays` overlays share one default base that holds `crds` CRDs."""
    config = root / "config"
    for i in range(crds):
        _write(config / "crd" / "full" / f"crd-{i}.yaml", large_crd("serving.example.com", f"Server{i}", crd_kib))
    _kustomization(config / "crd" / "full", "resources:\n" + "".join(f"- crd-{i}.yaml\n" for i in range(crds)))
    _write(
        config / "rbac" / "role.yaml",
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: manager}\n"
        "rules: [{apiGroups: [''], resources: [pods], verbs: [get]}]\n---\n"
        "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: manager}\n",
    )
    _kustomization(config / "rbac", "resources:\n- role.yaml\n")
    _write(
        config / "configmap" / "config.yaml",
        'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: serving-config}\ndata: {deploy: \'{"mode": "raw"}\'}\n',
    )
    _kustomization(config / "configmap", "resources:\n- config.yaml\n")
    _write(config / "manager" / "manager.yaml", gpu_deployment("model-server"))
    _kustomization(config / "manager", "resources:\n- manager.yaml\n")
    _kustomization(
        config / "default",
        "namespace: serving-system\nresources:\n- ../crd/full\n- ../rbac\n- ../configmap\n- ../manager\n",
    )
    # A Component the overlays add: kustomize builds it only under `components:`.
    _write(config / "components" / "batcher" / "batcher.yaml", gpu_deployment("batcher"))
    _kustomization(config / "components" / "batcher", "resources:\n- batcher.yaml\n", kind="Component")
    for i in range(overlays):
        _write(
            config / "overlays" / f"env-{i}" / "replicas.yaml",
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: model-server}\nspec: {replicas: 2}\n",
        )
        _kustomization(
            config / "overlays" / f"env-{i}",
            "resources:\n- ../../default\ncomponents:\n- ../../components/batcher\npatches:\n- path: replicas.yaml\n",
        )
    # A Component nothing includes: built alone (under `components:` of kubegpu's wrapper).
    _write(config / "components" / "standalone" / "tuner.yaml", gpu_deployment("tuner"))
    _kustomization(config / "components" / "standalone", "resources:\n- tuner.yaml\n", kind="Component")
    # An overlay that fails to build (a patch file that is missing), and the base only it includes: the base is
    # built itself after all, so its workload is still linted.
    _write(config / "legacy" / "base" / "legacy.yaml", gpu_deployment("legacy"))
    _kustomization(config / "legacy" / "base", "resources:\n- legacy.yaml\n")
    _kustomization(config / "legacy" / "broken", "resources:\n- ../base\npatches:\n- path: missing-patch.yaml\n")
    for j in range(charts):
        chart = root / "charts" / f"server-{j}"
        _write(chart / "Chart.yaml", f"apiVersion: v2\nname: server-{j}\nversion: 0.1.0\n")
        _write(chart / "values.yaml", "replicas: 1\n")
        _write(chart / "templates" / "deployment.yaml", gpu_deployment(f"chart-server-{j}"))
    _write(root / "docs" / "samples" / "pod.yaml", gpu_deployment("sample"))
    sources = (
        "config/manager/manager.yaml",
        "config/components/batcher/batcher.yaml",
        "config/components/standalone/tuner.yaml",
        "config/legacy/base/legacy.yaml",
        *(f"charts/server-{j}/templates/deployment.yaml" for j in range(charts)),
        "docs/samples/pod.yaml",
    )
    # a git work tree: a folder given inside it may read the whole tree (its bases)
    subprocess.run(["git", "init", "-q", str(root)], check=True, capture_output=True)
    # overlays + standalone component + broken overlay (fails) + its base built after it
    return RenderRepo(root, overlays + 3, charts, 9 + overlays, sources)


def counting_tools(folder: Path, count_file: Path) -> dict[str, str]:
    """`helm` and `kubectl` wrappers in `folder` that add a line to `count_file` per run (the program's name),
    then run the real program: the environment (PATH first) that makes kubegpu use them."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("helm", "kubectl", "kustomize"):
        real = shutil.which(name)
        if real is None:
            continue
        wrapper = folder / name
        wrapper.write_text(f'#!/bin/sh\necho {name} >> "{count_file}"\nexec "{real}" "$@"\n')
        wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    return {"PATH": f"{folder}{os.pathsep}{os.environ.get('PATH', '')}"}


def runs(count_file: Path) -> dict[str, int]:
    """Runs of each program the wrappers counted."""
    lines = count_file.read_text().split() if count_file.exists() else []
    return {"helm": lines.count("helm"), "kustomize": lines.count("kubectl") + lines.count("kustomize")}
