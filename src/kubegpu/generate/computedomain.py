"""`gen computedomain --for M`: the DRA ComputeDomain and claim that keep a job on one NVLink.

Follows the NVIDIA DRA driver for GPUs (resource.nvidia.com/v1beta1 ComputeDomain, CRD at d7309c3e)
and its multi-node NVLink guide: pods claim the generated ResourceClaimTemplate and are held to
one `nvidia.com/gpu.clique` (the NVL72 NVLink domain GPU Feature Discovery labels).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kubegpu.errors import InputError
from kubegpu.generate.output import Generated, Note, OutFile, YamlDoc
from kubegpu.generate.patches import PatchBuilder, bundle
from kubegpu.generate.workload import Workload, containers, gpu_count, pod_metadata

API_VERSION = "resource.nvidia.com/v1beta1"
CLIQUE_LABEL = "nvidia.com/gpu.clique"
DOMAIN_LABEL = "kubegpu.io/compute-domain"
_NAME_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


@dataclass(frozen=True)
class ComputeDomainOptions:
    """What `gen computedomain` was asked for."""

    name: str | None = None
    wait_for_all_nodes: bool = False
    gpus_per_domain: int = 72


def generate(workload: Workload, options: ComputeDomainOptions, out_dir: Path | None = None) -> Generated:
    name = options.name or f"{workload.name}-cd"
    if not _NAME_RE.match(name) or len(name) > 63:
        raise InputError(f"--name: {name!r} is not a valid object name")
    claim = f"{name}-channel"
    pods = workload.pods
    gpus = sum(ref.pods * sum(gpu_count(c) for c in containers(workload.pod_spec(ref))) for ref in workload.templates)
    if gpus == 0:
        raise InputError(
            f"{workload.kind}/{workload.name} requests no GPUs: nothing to keep in an NVLink domain",
            file=workload.source,
            line=workload.line,
        )
    if gpus > options.gpus_per_domain:
        raise InputError(
            f"{workload.kind}/{workload.name} asks for {gpus} GPUs but one NVLink domain has "
            f"{options.gpus_per_domain}: it cannot fit in one ComputeDomain",
            file=workload.source,
            line=workload.line,
        )
    num_nodes = pods if options.wait_for_all_nodes else 0
    metadata: dict[str, Any] = {"name": name}
    if workload.namespace:
        metadata["namespace"] = workload.namespace
    cd = YamlDoc(
        {
            "apiVersion": API_VERSION,
            "kind": "ComputeDomain",
            "metadata": metadata,
            "spec": {"numNodes": num_nodes, "channel": {"resourceClaimTemplate": {"name": claim}}},
        },
        header=(
            f"An IMEX domain for {workload.kind}/{workload.name} ({pods} pods, {gpus} GPUs): GPU",
            "memory shared over multi-node NVLink, isolated from other jobs, torn down after.",
        ),
        notes=(
            Note(
                ("spec", "numNodes"),
                "0 is the driver's recommendation with IMEXDaemonsWithDNSNames (its default):\n"
                "each pod starts once its local IMEX daemon is up; the job must check its peers."
                if num_nodes == 0
                else f"{num_nodes}: pods wait until IMEX daemons on all {num_nodes} nodes joined\n"
                "(needed when the driver runs with IMEXDaemonsWithDNSNames=false).",
            ),
            Note(
                ("spec", "channel", "resourceClaimTemplate", "name"),
                "The driver creates this ResourceClaimTemplate; every pod claims it.",
            ),
        ),
    )
    builder = PatchBuilder(workload)
    for ref in workload.templates:
        spec = workload.pod_spec(ref)
        builder.set(
            (*pod_metadata(workload, ref), "labels", DOMAIN_LABEL),
            name,
            "Marks the pods of this domain for the affinity below.",
        )
        builder.append(
            (*ref.spec_path, "resourceClaims"),
            {"name": "compute-domain-channel", "resourceClaimTemplateName": claim},
            "One IMEX channel of the ComputeDomain per pod.",
        )
        for i, container in enumerate(containers(spec)):
            if gpu_count(container) == 0:
                continue
            builder.append(
                (*ref.spec_path, "containers", i, "resources", "claims"),
                {"name": "compute-domain-channel"},
                f"{container.get('name')} gets the channel device injected.",
            )
        affinity = dict(spec.get("affinity") or {})
        node_affinity = affinity.get("nodeAffinity")
        if node_affinity is None:
            builder.set(
                (*ref.spec_path, "affinity", "nodeAffinity"),
                {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [{"matchExpressions": [{"key": CLIQUE_LABEL, "operator": "Exists"}]}]
                    }
                },
                "Only nodes in an NVLink clique (MNNVL-capable: GB200/GB300 NVL72 trays).",
            )
        builder.append(
            (
                *ref.spec_path,
                "affinity",
                "podAffinity",
                "requiredDuringSchedulingIgnoredDuringExecution",
            ),
            {
                "labelSelector": {"matchLabels": {DOMAIN_LABEL: name}},
                "topologyKey": CLIQUE_LABEL,
            },
            "All pods of the job in one clique (one NVLink domain): a ComputeDomain spanning\n"
            "two racks gets two IMEX domains and the GPUs cannot reach each other over NVLink.",
        )
    result = bundle(
        builder,
        "patch-computedomain.yaml",
        (
            f"ComputeDomain for {workload.kind}/{workload.name}; needs the NVIDIA DRA driver",
            "(ComputeDomains enabled) and DRA in the cluster. Apply with kubectl apply -k.",
        ),
        out_dir,
        (OutFile("computedomain.yaml", (cd,)),),
    )
    return result.generated
