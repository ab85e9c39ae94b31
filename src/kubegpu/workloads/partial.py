"""Whether an object is a partial object: a patch fragment the API server would reject as a whole object.

Follows kubernetes v1.35 pkg/apis/core/validation (validateContainerCommon: a container's `image` is Required,
for pods and the pod templates of built-in workloads). A kustomize strategic-merge patch lists containers by name
and sets only what it changes, so a built-in workload with a container that names no image is a fragment: what it
leaves out is decided by the object it patches. Every command reads this one decision: lint counts a fragment and
does not lint it, admit names it and skips it, simulate skips and counts it, gen refuses it.
"""

from __future__ import annotations

from dataclasses import dataclass

from kubegpu.manifests.document import Document
from kubegpu.workloads.discovery import pod_templates
from kubegpu.workloads.registry import kind_of


@dataclass(frozen=True)
class PartialObject:
    """A fragment: the object (kind and name), and the container that names no image and where it is written."""

    file: str
    line: int
    kind: str
    name: str
    container: str

    @property
    def what(self) -> str:
        """`Deployment/trainer: container 'trainer' has no image`."""
        container = f"container '{self.container}'" if self.container else "a container"
        return f"{self.kind}{'/' + self.name if self.name else ''}: {container} has no image"


def partial_object(doc: Document) -> PartialObject | None:
    """The fragment `doc` is, or None when the API server could create it as written (or it is not a built-in
    workload: a custom resource's controller may fill images in)."""
    group = doc.api_version.rpartition("/")[0] if "/" in doc.api_version else ""
    adapter = kind_of(doc)
    if adapter is None or group not in adapter.validated_in:  # built-in kinds validate their pod templates
        return None
    for template in pod_templates(doc):
        for container in template.containers:
            image = container.data.get("image")
            if image is None or (isinstance(image, str) and not image.strip()):
                where = doc.location(container.path)  # the container that names no image
                return PartialObject(where.file, where.line, doc.kind, doc.ref.name or "", container.name)
    return None
