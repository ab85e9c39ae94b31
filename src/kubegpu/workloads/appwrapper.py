"""AppWrapper (workload.codeflare.dev): whole objects embedded under spec.components[i].template, each read as the
kind it is.

Follows the workload.codeflare.dev/v1beta2 API (project-codeflare/appwrapper api/v1beta2): the wrapped objects'
pods are the AppWrapper's, and the whole wrapper is admitted (by Kueue) as one unit.
"""

from __future__ import annotations

from collections.abc import Iterator

from kubegpu.manifests.document import Document, as_mapping, is_mapping
from kubegpu.manifests.template import PodTemplate, mapping_list
from kubegpu.workloads.gangs import counted_gang
from kubegpu.workloads.kind import WorkloadKind


def _wrapped(doc: Document) -> Iterator[Document]:
    """Each embedded object, as a document at its path in the AppWrapper (its positions are the wrapper's)."""
    for i, component in enumerate(mapping_list(as_mapping(doc.data.get("spec")).get("components"))):
        embedded = component.get("template")
        if not is_mapping(embedded):
            continue
        yield Document(
            source=doc.source,
            index=doc.index,
            data=embedded,
            node=doc.node,
            prefix=(*doc.prefix, "spec", "components", i, "template"),
            start_line=doc.start_line,
            line_offset=doc.line_offset,
            is_json=doc.is_json,
        )


def _templates(doc: Document) -> Iterator[PodTemplate]:
    return iter(())  # its pods are the wrapped objects' (kubegpu.workloads.discovery reads them)


APPWRAPPER = WorkloadKind(kinds=frozenset({"AppWrapper"}), templates=_templates, gang=counted_gang, wraps=_wrapped)
