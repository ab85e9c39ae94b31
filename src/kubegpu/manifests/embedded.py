"""Objects written as text inside another object: the manifest an Argo `resource` template creates.

Argo Workflows' resource template (argoproj/argo-workflows pkg/apis/workflow/v1alpha1/workflow_types.go
@ f016ad89eb269d282aec06dc491c29f396a38df4, ResourceTemplate) holds `action` (get, create, apply, delete,
replace, patch), the object as a YAML string in `manifest`, or `manifestFrom.artifact` (an Artifact, whose
inline form is `raw.data`). The workflow controller substitutes `{{...}}` expressions and runs kubectl with it:
create, apply and replace make the object (and its pods); get, delete and patch do not make a whole one.

The string is parsed like a file of its own; each object found is a Document whose positions are lines of the
workflow file (exact inside a literal block scalar `|`, the manifest key's line otherwise).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import yaml

from kubegpu.manifests.document import Document, FieldPath, as_mapping, format_path, get_path, mapping_items
from kubegpu.manifests.loader import load_text
from kubegpu.manifests.memo import memoised

ARGO_KINDS = frozenset({"Workflow", "WorkflowTemplate", "ClusterWorkflowTemplate", "CronWorkflow"})
CREATING_ACTIONS = frozenset({"create", "apply", "replace"})
# A plain (unquoted) YAML value that starts with an Argo expression, `replicas: {{inputs.parameters.n}}`: YAML
# reads `{{` as a flow mapping, so it is quoted before parsing (the text is kept; it reads as a placeholder).
_BARE_EXPRESSION = re.compile(r"^(\s*(?:-\s+|(?:-\s+)?[^\s#'\"{-][^:#]*:\s+))(\{\{.*?)(\s+#.*)?$", re.MULTILINE)


@dataclass(frozen=True)
class Unread:
    """A resource manifest that could not be read, and why (counted as a skipped object)."""

    file: str
    line: int
    reason: str


@dataclass(frozen=True)
class Embedded:
    """What an object holds as text: the objects read from it and the manifests that could not be read."""

    documents: tuple[Document, ...]
    unread: tuple[Unread, ...]


_NOTHING = Embedded((), ())


def embedded(doc: Document) -> Embedded:
    """The objects an Argo workflow's resource templates create (read once per document)."""
    if doc.kind not in ARGO_KINDS:
        return _NOTHING
    return memoised(doc, "embedded", _read, doc)


def embedded_objects(doc: Document) -> tuple[Document, ...]:
    return embedded(doc).documents


def _read(doc: Document) -> Embedded:
    documents: list[Document] = []
    unread: list[Unread] = []
    for path, text, name in _manifests(doc):
        where = doc.location(path)
        note = f"read from the manifest of the Argo {doc.kind} '{doc.ref.name}' step '{name}' ({format_path(path)})"
        if text is None:
            unread.append(
                Unread(doc.source, where.line, f"{note}: its manifest is an artifact not in the input; not checked")
            )
            continue
        if not text.strip():
            continue
        loaded = load_text(doc.source, _quote_expressions(text))
        if loaded.problems and not loaded.documents:
            problem = loaded.problems[0]
            unread.append(Unread(doc.source, where.line, f"{note}: {problem.message}; not checked"))
            continue
        offset, node_kept = _line_offset(doc, path)
        for inner in loaded.documents:
            documents.append(
                Document(
                    source=doc.source,
                    index=doc.index,
                    data=inner.data,
                    node=inner.node if node_kept else None,
                    prefix=inner.prefix,
                    start_line=inner.start_line + offset if node_kept else where.line,
                    line_offset=inner.line_offset + offset,
                    is_json=doc.is_json,
                    embedded_in=note,
                )
            )
    return Embedded(tuple(documents), tuple(unread))


def _manifests(doc: Document) -> Iterator[tuple[FieldPath, str | None, str]]:
    """(path of the manifest string, its text, the template's name) of every creating resource template; the text
    is None for a manifest taken from an artifact that is not inline."""
    base: FieldPath = ("spec", "workflowSpec") if doc.kind == "CronWorkflow" else ("spec",)
    spec = as_mapping(get_path(doc.data, base))
    for i, template in enumerate(mapping_items(spec.get("templates"))):
        resource = template.get("resource")
        if not isinstance(resource, Mapping) or str(resource.get("action") or "") not in CREATING_ACTIONS:
            continue
        path: FieldPath = (*base, "templates", i, "resource")
        name = str(template.get("name") or f"template-{i}")
        manifest = resource.get("manifest")
        raw = get_path(resource, ("manifestFrom", "artifact", "raw", "data"))
        if isinstance(manifest, str):
            yield (*path, "manifest"), manifest, name
        elif isinstance(raw, str):
            yield (*path, "manifestFrom", "artifact", "raw", "data"), raw, name
        elif isinstance(resource.get("manifestFrom"), Mapping):  # an artifact of another step or a repository
            yield (*path, "manifestFrom"), None, name


def _line_offset(doc: Document, path: FieldPath) -> tuple[int, bool]:
    """Lines to add to a line of the manifest text to get the file's line, and whether that is exact.

    Exact for a literal block scalar (`manifest: |`): its text starts on the line after the indicator, line for
    line. A folded, quoted or plain scalar joins or escapes lines, so its objects point at the manifest key.
    """
    node = doc.value_node(path)
    if isinstance(node, yaml.ScalarNode) and node.style == "|":
        return node.start_mark.line + 1 + doc.line_offset, True
    return doc.location(path).line - 1, False


def _quote_expressions(text: str) -> str:
    """Quote plain values that start with `{{`, so that YAML reads them as the strings Argo substitutes."""
    if "{{" not in text:
        return text
    return _BARE_EXPRESSION.sub(_quoted, text)


def _quoted(match: re.Match[str]) -> str:
    value = match.group(2).rstrip()
    return f"{match.group(1)}'{value.replace(chr(39), chr(39) * 2)}'{match.group(3) or ''}"
