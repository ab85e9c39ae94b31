"""Topology-aware placement rule (KG601): a multi-node GPU job needs a placement constraint (racks, blocks, NVLink).

Follows Kueue v0.14 TAS (podset-required/preferred/slice-required-topology annotations), Volcano v1.12 Job
networkTopology, KAI Scheduler topology annotations, LeaderWorkerSet exclusive-topology and NVIDIA's DRA driver
ComputeDomain (resource.nvidia.com/v1beta1, device class compute-domain-default-channel.nvidia.com).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from kubegpu.manifests import Document, PodTemplate, as_mapping, get_path, is_mapping, mapping_items
from kubegpu.ruleapi import Edit, Fix, RawFinding, Rule, RuleContext, Safety, Severity, Target
from kubegpu.ruleapi.options import RuleOption, label_key, label_keys
from kubegpu.rules.gang import (
    SHAPED_KINDS,
    is_work_queue_job,
    job_shape,
    kueue_managed,
    object_annotations,
    relative_path,
)
from kubegpu.workloads import GangShape, kind_of
from kubegpu.workloads.stack import stack_of

_PRACTICE = "topology-aware placement"
KUEUE_REQUIRED = "kueue.x-k8s.io/podset-required-topology"
KUEUE_PREFERRED = "kueue.x-k8s.io/podset-preferred-topology"
KUEUE_SLICE_REQUIRED = "kueue.x-k8s.io/podset-slice-required-topology"
KUEUE_TAS_ANNOTATIONS = (KUEUE_REQUIRED, KUEUE_PREFERRED, KUEUE_SLICE_REQUIRED)
KAI_TOPOLOGY_ANNOTATIONS = ("kai.scheduler/topology-required-placement", "kai.scheduler/topology-preferred-placement")
COMPUTE_DOMAIN_CLASS_PREFIX = "compute-domain"
HOSTNAME = "kubernetes.io/hostname"
# Node labels that name a network block, rack, leaf switch or NVLink domain (Kueue docs, GKE, EKS, OCI, NVIDIA GFD).
KNOWN_TOPOLOGY_LABELS = frozenset(
    {
        "cloud.google.com/gke-tpu-topology",  # a multi-host TPU slice's shape: its pods land on one slice's hosts
        "cloud.provider.com/topology-block",
        "cloud.provider.com/topology-rack",
        "cloud.google.com/gce-topology-block",
        "cloud.google.com/gce-topology-subblock",
        "cloud.google.com/gce-topology-host",
        "topology.k8s.aws/network-node-layer-1",
        "topology.k8s.aws/network-node-layer-2",
        "topology.k8s.aws/network-node-layer-3",
        "topology.k8s.aws/network-node-layer-4",
        "topology.k8s.aws/ultraserver-id",
        "nvidia.com/gpu.clique",
        "oci.oraclecloud.com/rdma.local_block_id",
        "oci.oraclecloud.com/rdma.network_block_id",
        "oci.oraclecloud.com/rdma.hpc_island_id",
        "oci.oraclecloud.com/host.rack_id",
        "oci.oraclecloud.com/host.network_block_id",
    }
)
_TOPOLOGY_WORDS = (
    "rack",
    "block",
    "clique",
    "nvlink",
    "spine",
    "leaf",
    "switch",
    "ultraserver",
    "network-node-layer",
    "superpod",
    "island",
)
_GB200_HINTS = ("gb200", "gb300", "nvl72", "gpu.clique")


def topology_label(key: str, extra: Iterable[str] = ()) -> bool:
    """Does a node label key name a rack, block, leaf switch or NVLink domain?"""
    if key in KNOWN_TOPOLOGY_LABELS or key in extra:
        return True
    if key.startswith("topology.kubernetes.io/") or key == HOSTNAME:
        return False  # zone and region span many racks; hostname is one node
    name = key.rsplit("/", 1)[-1].lower()
    return any(word in name for word in _TOPOLOGY_WORDS)


def _extra_labels(ctx: RuleContext) -> tuple[str, ...]:
    return TOPOLOGY_LABELS.read(ctx, "topology-missing")


def _affinity_constraint(template: PodTemplate, ctx: RuleContext) -> str | None:
    """A pod affinity or node selection that keeps the pods under one rack/block/NVLink domain."""
    spec = template.spec
    if spec.get("affinity") is None and spec.get("nodeSelector") is None:
        return None  # most pods: neither field (the walk below finds nothing in empty ones either)
    extra = _extra_labels(ctx)
    affinity = as_mapping(spec.get("affinity"))
    pod_affinity = as_mapping(affinity.get("podAffinity"))
    terms = list(mapping_items(pod_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")))
    terms += [
        as_mapping(t.get("podAffinityTerm"))
        for t in mapping_items(pod_affinity.get("preferredDuringSchedulingIgnoredDuringExecution"))
    ]
    for term in terms:
        key = str(term.get("topologyKey") or "")
        if topology_label(key, extra) or key == HOSTNAME:
            return f"podAffinity on {key}"
    for key, value in as_mapping(spec.get("nodeSelector")).items():
        if topology_label(str(key), extra):
            return f"nodeSelector {key}={value}"
    node_affinity = as_mapping(affinity.get("nodeAffinity"))
    required = as_mapping(node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution"))
    for term in mapping_items(required.get("nodeSelectorTerms")):
        for expression in mapping_items(term.get("matchExpressions")):
            values = expression.get("values")
            if (
                topology_label(str(expression.get("key") or ""), extra)
                and expression.get("operator") == "In"
                and isinstance(values, list)
                and len(values) == 1
            ):
                return f"nodeAffinity {expression.get('key')} In {values}"
    return None


def _compute_domain_templates(ctx: RuleContext) -> set[str]:
    """Names of claim templates (and claims) that hand out a ComputeDomain channel, from the input."""
    names: set[str] = set()
    for doc in ctx.documents_of("ComputeDomain", "ResourceClaimTemplate", "ResourceClaim"):
        if doc.kind == "ComputeDomain":
            name = get_path(doc.data, ("spec", "channel", "resourceClaimTemplate", "name"))
            if name:
                names.add(str(name))
        elif doc.kind in ("ResourceClaimTemplate", "ResourceClaim"):
            spec = as_mapping(doc.data.get("spec"))
            if doc.kind == "ResourceClaimTemplate":
                spec = as_mapping(spec.get("spec"))
            for request in mapping_items(as_mapping(spec.get("devices")).get("requests")):
                device_class = request.get("deviceClassName") or as_mapping(request.get("exactly")).get(
                    "deviceClassName"
                )
                if str(device_class or "").startswith(COMPUTE_DOMAIN_CLASS_PREFIX):
                    names.add(str(doc.metadata.get("name") or ""))
    return names


def _compute_domain_claim(template: PodTemplate, ctx: RuleContext) -> str | None:
    claims = mapping_items(template.spec.get("resourceClaims"))
    if not claims:
        return None
    domains = _compute_domain_templates(ctx)
    for claim in claims:
        name = claim.get("resourceClaimTemplateName") or claim.get("resourceClaimName")
        if name and str(name) in domains:
            return f"ComputeDomain claim {name}"
    return None


def placement_constraint(shape: GangShape, template: PodTemplate, ctx: RuleContext) -> str | None:
    """What keeps this template's pods together, or None (asked per GPU template: any(map(...)) looks keys up
    without a generator)."""
    doc = shape.doc
    # Most templates and jobs carry no annotations: the key look-ups are skipped for empty ones.
    annotations = template.annotations
    if annotations and any(map(annotations.get, KUEUE_TAS_ANNOTATIONS)) and kueue_managed(doc):
        return "Kueue TAS"
    adapter = kind_of(doc)
    own = adapter.placement(doc, template) if adapter is not None else None
    if own is not None:  # the kind's own fields (Volcano networkTopology, Dynamo's packDomain)
        return own
    job_annotations = object_annotations(doc)
    if (job_annotations and any(map(job_annotations.get, KAI_TOPOLOGY_ANNOTATIONS))) or (
        annotations and any(map(annotations.get, KAI_TOPOLOGY_ANNOTATIONS))
    ):
        return "KAI topology placement"
    for key in adapter.exclusive_topology if adapter is not None else ():
        value = str(job_annotations.get(key) or "")
        if value and not value.startswith("topology.kubernetes.io/"):  # a zone or region is far wider than a rack
            return f"{doc.kind} exclusive topology on {value}"
    return _affinity_constraint(template, ctx) or _compute_domain_claim(template, ctx)


def _gb200(template: PodTemplate, ctx: RuleContext) -> bool:
    node = ctx.node
    if node is None and not template.spec.get("nodeSelector"):
        return False  # nothing to read (the common case: one finding per loose job)
    texts = [str(v).lower() for v in as_mapping(getattr(node, "labels", {})).values()] if node is not None else []
    texts += [f"{k}={v}".lower() for k, v in as_mapping(template.spec.get("nodeSelector")).items()]
    return any(hint in text for text in texts for hint in _GB200_HINTS)


def _check_topology_missing(doc: Document, ctx: RuleContext) -> Iterator[RawFinding]:
    shape = job_shape(doc, ctx)
    if shape is None or shape.unit_gpu_pods < 2 or is_work_queue_job(doc):
        return  # a non-Indexed Job's pods may be independent workers that exchange no NCCL traffic
    loose = [t for t in shape.gpu_templates if placement_constraint(shape, t, ctx) is None]
    if not loose:
        return
    unmanaged = [t for t in loose if (notes := t.annotations) and any(map(notes.get, KUEUE_TAS_ANNOTATIONS))]
    level = TOPOLOGY_LEVEL.read(ctx, "topology-missing")
    adapter = kind_of(doc)
    kueue_pods = adapter is None or adapter.kueue_manages_pods
    fix = None
    if level and kueue_pods:  # Kueue does not manage a Dynamo graph's pods
        edits = []
        for template in loose:
            if template.metadata_path is None or template.metadata is template.document.metadata:
                continue
            path = relative_path(doc, template, (*template.metadata_path, "annotations", KUEUE_PREFERRED))
            edits.append(Edit("add", path, str(level)))
        if edits:
            fix = Fix(
                f"add {KUEUE_PREFERRED}: {level} to the GPU pod templates (effective when Kueue manages the job)",
                Safety.UNSAFE,
                tuple(edits),
            )
    first = loose[0]
    has_metadata = (
        first.metadata_path is not None
        and first.metadata is not first.document.metadata
        and is_mapping(get_path(first.document.data, first.metadata_path))
    )
    anchor = first.metadata_path if has_metadata and first.metadata_path is not None else first.path
    if adapter is not None and adapter.placement_advice is not None:
        hints = [adapter.placement_advice]
    else:
        hints = [
            f"add {KUEUE_PREFERRED} (or -required-) on the pod template(s) with a Kueue-managed job, a required "
            "podAffinity on a rack/block label, or a Volcano/KAI topology constraint"
        ]
    if _gb200(first, ctx):
        hints.append("on GB200 NVL72 claim a DRA ComputeDomain channel so the pods share one NVLink domain")
    note = ""
    if unmanaged:
        note = (
            f"; the Kueue topology annotation on {shape.roles(unmanaged)} has no effect because the {doc.kind} "
            "has no kueue.x-k8s.io/queue-name label"
        )
    count = "several" if shape.placeholder else str(shape.unit_gpu_pods)  # a placeholder count is not known
    stack = stack_of(doc, shape.gpu_templates)
    spread = (
        "on hosts of different TPU slices, and the collectives then cross the data-center network instead of "
        "the slice's inter-chip links"
        if stack.tpu
        else f"on nodes under different leaf switches or racks, and every {stack.collective} collective then "
        "crosses the spine"
    )
    yield RawFinding(
        relative_path(doc, first, anchor),
        f"{doc.kind} '{doc.ref.name}' runs {count} {stack.device} pods together ({shape.roles(loose)} without a "
        f"placement constraint){note}: the scheduler may put them {spread}; "
        + "; ".join(hints)
        + ("" if level or not kueue_pods else " (give the rule option `topology-level` for an automatic fix)")
        + shape.hedge,
        fix,
        Severity.INFO if shape.placeholder else None,
    )


TOPOLOGY_LEVEL = RuleOption[str | None](
    name="topology-level",
    help="node label for the fix's kueue.x-k8s.io/podset-preferred-topology annotation (`kubegpu fix "
    "--topology-level` sets it)",
    expected="a node label key",
    example='"cloud.provider.com/topology-rack"',
    parse=label_key,
    default=None,
    default_text="none: the fix needs one",
)
TOPOLOGY_LABELS = RuleOption[tuple[str, ...]](
    name="topology-labels",
    help="further node label keys that name racks, blocks or NVLink domains in your cluster",
    expected="a list of node label keys",
    example='["example.com/pod-fabric"]',
    parse=label_keys,
    default=(),
    default_text="none",
)

TOPOLOGY_MISSING = Rule(
    code="KG601",
    name="topology-missing",
    practice=_PRACTICE,
    severity=Severity.WARNING,
    summary="A multi-node GPU job has no placement constraint on racks, blocks or an NVLink domain.",
    target=Target.DOCUMENT,
    kinds=SHAPED_KINDS,
    check=_check_topology_missing,
    fixable=True,
    options=(TOPOLOGY_LEVEL, TOPOLOGY_LABELS),
    rationale="Multi-node training runs all-reduce across every pod; pods under different leaf switches or racks "
    "share oversubscribed spine links, and on GB200 NVL72 pods outside one NVLink domain fall back to the "
    "network. Accepted constraints: Kueue Topology Aware Scheduling annotations on each GPU pod template (only "
    "when the job has a kueue.x-k8s.io/queue-name label), pod affinity or a node selector on a rack/block/"
    "NVLink-domain label (zone and region are not enough), Volcano networkTopology, KAI topology placement "
    "annotations, LeaderWorkerSet or JobSet exclusive-topology (on a key narrower than a zone; an "
    "LLMInferenceService's own annotation reaches its LeaderWorkerSet), an NVIDIA Dynamo topologyConstraint "
    "packDomain narrower than a zone (with Grove, the default), or a DRA ComputeDomain claim found in the input. "
    "Multi-host serving counts too: each Dynamo multinode replica and each LLMInferenceService LeaderWorkerSet "
    "group. A Job that is not Indexed is not checked (its pods may be "
    "independent workers that exchange no NCCL traffic); a placeholder pod count gives an info-level finding that "
    "names it.",
    bad_example="kind: PyTorchJob\nspec:\n  pytorchReplicaSpecs:\n    Worker:\n      replicas: 4   # 8 GPUs each",
    good_example="template:\n  metadata:\n    annotations:\n"
    "      kueue.x-k8s.io/podset-preferred-topology: cloud.provider.com/topology-rack",
)

RULES: tuple[Rule, ...] = (TOPOLOGY_MISSING,)
