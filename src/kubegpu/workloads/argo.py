"""Argo Workflows: Workflow, WorkflowTemplate, ClusterWorkflowTemplate and CronWorkflow (spec.workflowSpec).

Follows the argoproj.io/v1alpha1 API (argoproj/argo-workflows pkg/apis/workflow/v1alpha1): each template with a
container, script or containerSet runs as one pod; volumes are declared workflow-wide and the template's own
metadata labels its pods. The objects a resource template creates are read by kubegpu.manifests.embedded.
"""

from __future__ import annotations

from collections.abc import Iterator

from kubegpu.manifests.document import Document, FieldPath, as_mapping, get_path, is_mapping
from kubegpu.manifests.template import ContainerRef, PodTemplate, mapping_list
from kubegpu.workloads.kind import WorkloadKind


def _templates(doc: Document) -> Iterator[PodTemplate]:
    base: FieldPath = ("spec", "workflowSpec") if doc.kind == "CronWorkflow" else ("spec",)
    wf = as_mapping(get_path(doc.data, base))
    for i, template in enumerate(mapping_list(wf.get("templates"))):
        path: FieldPath = (*base, "templates", i)
        refs: list[ContainerRef] = []
        for key in ("container", "script"):
            if is_mapping(template.get(key)):
                refs.append(ContainerRef((*path, key), template[key], "container"))
        cset = as_mapping(template.get("containerSet"))
        for j, item in enumerate(mapping_list(cset.get("containers"))):
            refs.append(ContainerRef((*path, "containerSet", "containers", j), item, "container"))
        for j, item in enumerate(mapping_list(template.get("initContainers"))):
            refs.append(ContainerRef((*path, "initContainers", j), item, "init"))
        if not refs:
            continue
        # Volumes are declared workflow-wide; the template's own metadata labels its pods.
        pseudo = dict(template)
        pseudo.setdefault("volumes", wf.get("volumes") or [])
        yield PodTemplate(
            doc,
            path,
            pseudo,
            (*path, "metadata"),
            as_mapping(template.get("metadata")),
            str(template.get("name") or f"template-{i}"),
            1,
            tuple(refs),
            (*base, "volumes"),
        )


WORKFLOW = WorkloadKind(
    kinds=frozenset({"Workflow", "WorkflowTemplate", "ClusterWorkflowTemplate", "CronWorkflow"}), templates=_templates
)
