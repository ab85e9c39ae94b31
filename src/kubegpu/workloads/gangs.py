"""The gang shape most distributed kinds share: every pod of the job runs together, counted from its templates.

A pod count written as a template placeholder (`replicas: $NUM_NODES`) is checked as if it rendered to two pods,
and the shape names the placeholder, so that findings on it are hedged.
"""

from __future__ import annotations

from kubegpu.manifests.document import Document, is_mapping
from kubegpu.manifests.placeholders import templated_counts
from kubegpu.manifests.template import PodTemplate
from kubegpu.workloads.kind import GangShape


def counted_gang(doc: Document, templates: tuple[PodTemplate, ...], gpu: tuple[PodTemplate, ...]) -> GangShape | None:
    """All the job's pods form one gang (None when a count depends on the cluster)."""
    counts = [t.replicas for t in templates]
    slots = (
        templated_counts(doc.data.get("spec"), ("spec",)) if is_mapping(doc.data) and not doc.placeholder_free else ()
    )
    if slots:
        # A templated pod count (replicas: $NUM_NODES): check the job as if it rendered to 2 pods, and say so.
        where, value = slots[0]
        total = max(2, sum(c or 1 for c in counts))
        gpu_total = max(2, sum(t.replicas or 1 for t in gpu))
        return GangShape(doc, templates, gpu, total, gpu_total, "its pods", f"{where}: {value}")
    if None in counts:
        return None
    total = sum([c for c in counts if c is not None])
    gpu_total = sum([t.replicas or 0 for t in gpu])
    return GangShape(doc, templates, gpu, total, gpu_total, f"its {total} pods")
