"""What keeps a pod off a node before resources are counted: taints it does not tolerate, a nodeSelector or
required node affinity its labels do not match.

Follows kubernetes v1.35 core/v1 Toleration.ToleratesTaint, component-helpers scheduling/corev1
(FindMatchingUntoleratedTaint, nodeaffinity.GetRequiredNodeAffinity) and apimachinery's label requirement
validation; the audit, the repacking bound and the scheduler model's filters all read these.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

NO_SCHEDULE = "NoSchedule"
NO_EXECUTE = "NoExecute"
# Taints kube-scheduler's TaintToleration filter reads (DoNotScheduleTaintsFilterFunc); PreferNoSchedule only scores.
FILTERED_EFFECTS = (NO_SCHEDULE, NO_EXECUTE)
# The taint the node lifecycle controller puts on a NotReady node, and the one NodeUnschedulable honours.
NOT_READY_TAINT_KEY = "node.kubernetes.io/not-ready"
UNSCHEDULABLE_TAINT_KEY = "node.kubernetes.io/unschedulable"
NAME_FIELD = "metadata.name"

_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_INTEGER = re.compile(r"[+-]?[0-9]+")


@dataclass(frozen=True)
class Taint:
    """A node taint (key, value, effect)."""

    key: str
    value: str = ""
    effect: str = ""


@dataclass(frozen=True)
class Toleration:
    """A pod toleration; an empty key with operator Exists tolerates every taint."""

    key: str = ""
    operator: str = "Equal"
    value: str = ""
    effect: str = ""

    def tolerates(self, taint: Taint) -> bool:
        """Toleration.ToleratesTaint: effect and key when set, then Exists, or Equal (the empty operator)
        comparing values; any other operator tolerates nothing."""
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator == "Exists":
            return True
        if self.operator in ("", "Equal"):
            return self.value == taint.value
        return False


def untolerated_taint(taints: Iterable[Taint], tolerations: Iterable[Toleration]) -> Taint | None:
    """The first NoSchedule or NoExecute taint no toleration tolerates (FindMatchingUntoleratedTaint), else None."""
    tols = tuple(tolerations)
    for taint in taints:
        if taint.effect in FILTERED_EFFECTS and not any(t.tolerates(taint) for t in tols):
            return taint
    return None


def _label_key_valid(key: str) -> bool:
    """A qualified name: an optional DNS-subdomain prefix and '/', then a name of at most 63 characters."""
    prefix, _, name = key.rpartition("/")
    if prefix and (len(prefix) > 253 or not _SUBDOMAIN.fullmatch(prefix)):
        return False
    return 0 < len(name) <= 63 and _NAME.fullmatch(name) is not None


def _label_value_valid(value: str) -> bool:
    return len(value) <= 63 and (value == "" or _NAME.fullmatch(value) is not None)


@dataclass(frozen=True)
class SelectorRequirement:
    """One nodeSelectorTerm requirement: a label (or, with `field`, metadata.name) test."""

    key: str
    operator: str
    values: tuple[str, ...] = ()
    field: bool = False

    @property
    def valid(self) -> bool:
        """Whether the API machinery can turn the requirement into a selector; a term holding one it cannot
        matches no node (labels.NewRequirement, and for fields metadata.name with one In/NotIn value)."""
        op = self.operator
        if self.field:
            return self.key == NAME_FIELD and op in ("In", "NotIn") and len(self.values) == 1
        if not _label_key_valid(self.key):
            return False
        if op in ("In", "NotIn"):
            return bool(self.values) and all(_label_value_valid(v) for v in self.values)
        if op in ("Exists", "DoesNotExist"):
            return not self.values
        if op in ("Gt", "Lt"):
            return len(self.values) == 1 and _INTEGER.fullmatch(self.values[0]) is not None
        return False

    def matches(self, labels: Mapping[str, str], node_name: str) -> bool:
        """Kubernetes v1.35 NodeSelectorRequirement semantics (In, NotIn, Exists, DoesNotExist,
        Gt, Lt); matchFields support only metadata.name with In/NotIn."""
        if self.field:
            present, value = self.key == NAME_FIELD, node_name
        else:
            present, value = self.key in labels, labels.get(self.key, "")
        op = self.operator
        if op == "In":
            return present and value in self.values
        if op == "NotIn":
            return not present or value not in self.values
        if op == "Exists":
            return present
        if op == "DoesNotExist":
            return not present
        if op in ("Gt", "Lt") and present and len(self.values) == 1:
            try:
                have, want = int(value), int(self.values[0])
            except ValueError:
                return False
            return have > want if op == "Gt" else have < want
        return False


# requiredDuringSchedulingIgnoredDuringExecution: terms are ORed, a term's requirements ANDed
NodeAffinity = tuple[tuple[SelectorRequirement, ...], ...]


def affinity_matches(affinity: NodeAffinity, labels: Mapping[str, str], node_name: str) -> bool:
    """True when there is no required node affinity or one term matches; an empty term, or one holding a
    requirement the API machinery rejects, matches no node."""
    if not affinity:
        return True
    return any(
        term and all(r.valid for r in term) and all(r.matches(labels, node_name) for r in term) for term in affinity
    )


def selector_matches(node_selector: Iterable[tuple[str, str]], labels: Mapping[str, str]) -> bool:
    """A pod's nodeSelector: every key present on the node with the same value."""
    return all(labels.get(key) == value for key, value in node_selector)


def node_names_of(affinity: NodeAffinity) -> frozenset[str] | None:
    """The nodes a required affinity names by metadata.name in every term (NodeAffinity's PreFilter), or None
    when some term does not restrict names; an empty set when the terms' names conflict."""
    if not affinity:
        return None
    names: set[str] = set()
    for term in affinity:
        term_names: set[str] | None = None
        for r in term:
            if r.field and r.key == NAME_FIELD and r.operator == "In":
                term_names = set(r.values) if term_names is None else term_names & set(r.values)
        if term_names is None:
            return None
        names |= term_names
    return frozenset(names)
