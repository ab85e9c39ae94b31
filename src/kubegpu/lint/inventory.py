"""What a lint run skips, and why: files that hold no Kubernetes object, objects of kinds kubegpu does not check,
and partial objects (patch fragments) that the API server could not create as written.

Skipping is not a finding: a platform repository holds chart values, CI workflows and package manifests
next to its manifests. The summary counts what was skipped; `--verbose` lists it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from kubegpu.manifests import Document, memoised
from kubegpu.manifests.recognise import NotAManifest
from kubegpu.ruleapi import LOOKED_UP_KINDS, WHOLE_INPUT_KINDS, Rule, Target
from kubegpu.workloads import Coverage, coverage, holds_no_pods, partial

# Files that carry apiVersion and kind but are read by tools, not served by the API server.
_TOOL_CONFIG = frozenset(
    {("kustomize.config.k8s.io", "Kustomization"), ("kustomize.config.k8s.io", "Component"), ("", "Config")}
)


@dataclass(frozen=True)
class Skipped:
    """One thing not linted: the file (and object) and the reason, in words."""

    file: str
    reason: str
    # "file": no Kubernetes object; "template": a template another tool renders; "object": its kind is not checked;
    # "partial": a fragment
    kind: str = "file"


def skipped_file(
    name: str, documents: int, problems: int, other_documents: int, not_manifest: NotAManifest | None = None
) -> Skipped | None:
    """A read file with no Kubernetes object and nothing that looks like a broken one; `not_manifest`: why a file
    that does not parse is not meant as a manifest (a template, another tool's YAML: `manifests.recognise`)."""
    if not_manifest is not None:
        return Skipped(name, not_manifest.reason, "template" if not_manifest.template else "file")
    if documents or problems:
        return None
    if other_documents:
        return Skipped(name, "no apiVersion and kind: not a Kubernetes object")
    return Skipped(name, "empty: no document")


def unchecked_kind(doc: Document) -> Skipped | None:
    """An object of a kind kubegpu knows nothing of, with no pod template: it is counted, not linted.

    Decided once per document (lint asks when it lints the object and when it lists what it checked)."""
    return memoised(doc, "unchecked_kind", _unchecked_kind, doc)


def _unchecked_kind(doc: Document) -> Skipped | None:
    group = doc.api_version.rpartition("/")[0] if "/" in doc.api_version else ""
    if (group, doc.kind) in _TOOL_CONFIG:
        return Skipped(doc.source, f"{doc.kind} ({doc.api_version}) is a tool's configuration", "object")
    if doc.kind in LOOKED_UP_KINDS or doc.kind in WHOLE_INPUT_KINDS:
        return None
    if coverage(doc) is not Coverage.NOT_CHECKED:  # one classification for lint's rules and its summary
        return None
    name = doc.ref.name
    return Skipped(
        doc.source,
        f"{doc.kind}{'/' + name if name else ''} ({doc.api_version}): a kind kubegpu does "
        "not check, without a pod template",
        "object",
    )


def unread_kind(api_version: str, kind: str, rules: Iterable[Rule]) -> bool:
    """No rule of `rules` reads objects of this API version and kind, and no check looks them up: they hold no pods
    (the workload adapters' model), and no document rule names their kind. Rendered output leaves their bodies
    out before they are built (`manifests.unread`)."""
    if kind in LOOKED_UP_KINDS or kind in WHOLE_INPUT_KINDS or not holds_no_pods(api_version, kind):
        return False
    return not any(rule.target is Target.DOCUMENT and (rule.kinds is None or kind in rule.kinds) for rule in rules)


def partial_object(doc: Document) -> Skipped | None:
    """A partial object (a patch fragment, `workloads.partial`): counted, not linted as a whole object, since what
    it leaves out (volumes, images, labels) is decided by the object it patches; linting the kustomization that
    applies it checks the merged result. Decided once per document."""
    return memoised(doc, "partial_object", _partial_object, doc)


def _partial_object(doc: Document) -> Skipped | None:
    fragment = partial.partial_object(doc)
    if fragment is None:
        return None
    return Skipped(
        doc.source,
        f"{fragment.what}, which the API server requires, so this is a partial object (a patch fragment): not "
        "checked as a whole object; lint the kustomization that applies it",
        "partial",
    )
