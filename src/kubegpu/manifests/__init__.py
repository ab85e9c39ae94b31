"""Load Kubernetes documents (files, dirs, stdin; YAML and JSON; Lists) with positions; pod templates and the pod model.

Which kinds hold pod templates, and where, is kubegpu.workloads' (`pod_templates`).
"""

from kubegpu.manifests.document import (
    Document,
    FieldPath,
    Location,
    ObjectRef,
    as_mapping,
    format_path,
    get_path,
    is_mapping,
    mapping_items,
)
from kubegpu.manifests.loader import InputProblem, LoadResult, load_text
from kubegpu.manifests.memo import memoised
from kubegpu.manifests.podspec import pod_spec
from kubegpu.manifests.regular_file import NotReadable, read_regular, read_regular_stat
from kubegpu.manifests.resources import (
    ContainerResources,
    ResourceValue,
    container_resources,
    gpu_count,
    uses_accelerators,
)
from kubegpu.manifests.sources import SourceText, discover, read_source
from kubegpu.manifests.template import ContainerRef, PodTemplate, containers_of

__all__ = [
    "ContainerRef",
    "ContainerResources",
    "Document",
    "FieldPath",
    "InputProblem",
    "LoadResult",
    "Location",
    "NotReadable",
    "ObjectRef",
    "PodTemplate",
    "ResourceValue",
    "SourceText",
    "as_mapping",
    "container_resources",
    "containers_of",
    "discover",
    "format_path",
    "get_path",
    "gpu_count",
    "is_mapping",
    "load_text",
    "mapping_items",
    "memoised",
    "pod_spec",
    "read_regular",
    "read_regular_stat",
    "read_source",
    "uses_accelerators",
]
