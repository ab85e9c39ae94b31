"""Knative Serving's Service (serving.knative.dev): one revision template, scaled by the autoscaler.

Follows the serving.knative.dev/v1 API (knative/serving pkg/apis/serving/v1): spec.template is a
RevisionTemplateSpec, a pod template whose pod count the autoscaler decides.
"""

from __future__ import annotations

from kubegpu.manifests.document import Document
from kubegpu.manifests.template import PodTemplate, template_at
from kubegpu.workloads.kind import WorkloadKind


def _templates(doc: Document) -> tuple[PodTemplate, ...]:
    return template_at(doc, ("spec", "template"), "", None)


KNATIVE_SERVICE = WorkloadKind(
    kinds=frozenset({"Service"}), groups=frozenset({"serving.knative.dev"}), templates=_templates
)
