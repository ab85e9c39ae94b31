"""Build a ClusterSnapshot from API objects, or from `kubectl get ... -o json` dump files.

A dump is a List (as `kubectl get nodes,pods -A -o json` prints), one object, or several files.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from kubegpu.errors import InputError
from kubegpu.live.model import (
    ClusterSnapshot,
    DisruptionBudget,
    KueueClusterQueue,
    KueueLocalQueue,
    KueueTopology,
    KueueWorkload,
    NodeInfo,
    NodeResourceTopology,
    PersistentVolumeInfo,
    PodInfo,
    PriorityClassInfo,
    VolumeClaim,
)
from kubegpu.live.parse import (
    parse_configz,
    parse_disruption_budget,
    parse_kueue_cluster_queue,
    parse_kueue_local_queue,
    parse_kueue_topology,
    parse_kueue_workload,
    parse_node,
    parse_nrt,
    parse_persistent_volume,
    parse_pod,
    parse_priority_class,
    parse_volume_claim,
)

KUEUE_GROUP = "kueue.x-k8s.io"
NRT_GROUP = "topology.node.k8s.io"
POLICY_GROUP = "policy"
SCHEDULING_GROUP = "scheduling.k8s.io"
CONFIGZ_PREFIX = "configz-"
CONFIGZ_SUFFIX = ".configz"


def _group(api_version: object) -> str:
    text = str(api_version or "")
    return text.split("/", 1)[0] if "/" in text else ""


@dataclass(frozen=True)
class _Objects:
    """The objects of the kinds a snapshot holds, parsed, each kind in the order read (filled while reading,
    then sorted into the snapshot)."""

    nodes: list[NodeInfo] = field(default_factory=list)
    pods: list[PodInfo] = field(default_factory=list)
    nrts: list[NodeResourceTopology] = field(default_factory=list)
    topologies: list[KueueTopology] = field(default_factory=list)
    workloads: list[KueueWorkload] = field(default_factory=list)
    queues: list[KueueClusterQueue] = field(default_factory=list)
    local_queues: list[KueueLocalQueue] = field(default_factory=list)
    budgets: list[DisruptionBudget] = field(default_factory=list)
    classes: list[PriorityClassInfo] = field(default_factory=list)
    claims: list[VolumeClaim] = field(default_factory=list)
    volumes: list[PersistentVolumeInfo] = field(default_factory=list)


_Reader = Callable[[Mapping[str, Any], str], None]


def _readers(found: _Objects) -> dict[tuple[str, str], _Reader]:
    """For each kind a snapshot holds (with its API group, '' for the core group): what parses an object of it
    and adds it to `found`."""
    return {
        ("PodDisruptionBudget", POLICY_GROUP): lambda obj, at: found.budgets.append(parse_disruption_budget(obj, at)),
        ("PriorityClass", SCHEDULING_GROUP): lambda obj, at: found.classes.append(parse_priority_class(obj, at)),
        ("PersistentVolumeClaim", ""): lambda obj, at: found.claims.append(parse_volume_claim(obj, at)),
        ("PersistentVolume", ""): lambda obj, at: found.volumes.append(parse_persistent_volume(obj, at)),
        ("Node", ""): lambda obj, at: found.nodes.append(parse_node(obj, at)),
        ("Pod", ""): lambda obj, at: found.pods.append(parse_pod(obj, at)),
        ("NodeResourceTopology", NRT_GROUP): lambda obj, at: found.nrts.append(parse_nrt(obj, at)),
        ("Topology", KUEUE_GROUP): lambda obj, at: found.topologies.append(parse_kueue_topology(obj, at)),
        ("Workload", KUEUE_GROUP): lambda obj, at: found.workloads.append(parse_kueue_workload(obj, at)),
        ("ClusterQueue", KUEUE_GROUP): lambda obj, at: found.queues.append(parse_kueue_cluster_queue(obj, at)),
        ("LocalQueue", KUEUE_GROUP): lambda obj, at: found.local_queues.append(parse_kueue_local_queue(obj, at)),
    }


def _ignored_note(ignored: Mapping[str, int]) -> list[str]:
    """The note that counts the objects of kinds the audit does not use, by kind; none when there are none."""
    if not ignored:
        return []
    listed = ", ".join(f"{n} {k}" for k, n in sorted(ignored.items()))
    return [f"ignored objects the audit does not use: {listed}"]


def _check_unique(nodes: Sequence[NodeInfo], source: str) -> None:
    """Refuse a snapshot that names a node twice (every model keys nodes by name)."""
    seen: set[str] = set()
    for node in nodes:
        if node.name in seen:
            raise InputError(f"node {node.name} appears twice in the snapshot", file=source or None)
        seen.add(node.name)


def build_snapshot(
    objects: Iterable[tuple[Mapping[str, Any], str]],
    kubelet_configs: Mapping[str, Mapping[str, Any]] | None = None,
    notes: Sequence[str] = (),
    source: str = "",
    listed: Iterable[str] = (),
) -> ClusterSnapshot:
    """Sort objects by kind into a snapshot; kinds the audit does not use are counted in a note. `listed` names
    the kinds read as lists that may have been empty (a cluster without PodDisruptionBudgets)."""
    found = _Objects()
    readers = _readers(found)
    ignored: dict[str, int] = {}
    kinds = set(listed)
    for obj, origin in objects:
        kind = str(obj.get("kind", ""))
        read = readers.get((kind, _group(obj.get("apiVersion"))))
        kinds.add(kind)
        if read is not None:
            read(obj, origin)
        else:
            ignored[kind or "<no kind>"] = ignored.get(kind or "<no kind>", 0) + 1
    _check_unique(found.nodes, source)
    return ClusterSnapshot(
        nodes=tuple(sorted(found.nodes, key=lambda n: n.name)),
        pods=tuple(sorted(found.pods, key=lambda p: (p.namespace, p.name))),
        node_topologies=tuple(sorted(found.nrts, key=lambda n: n.name)),
        kueue_topologies=tuple(found.topologies),
        kueue_workloads=tuple(found.workloads),
        kueue_cluster_queues=tuple(sorted(found.queues, key=lambda q: q.name)),
        kueue_local_queues=tuple(sorted(found.local_queues, key=lambda q: (q.namespace, q.name))),
        kubelet_configs=dict(kubelet_configs or {}),
        notes=(*notes, *_ignored_note(ignored)),
        source=source,
        disruption_budgets=tuple(sorted(found.budgets, key=lambda b: (b.namespace, b.name))),
        priority_classes=tuple(sorted(found.classes, key=lambda c: c.name)),
        volume_claims=tuple(found.claims),
        persistent_volumes=tuple(found.volumes),
        kinds=frozenset(kinds),
    )


def listed_kind(doc: object) -> str | None:
    """The kind a typed list holds (`PodDisruptionBudgetList` -> PodDisruptionBudget), read even when it is empty."""
    if isinstance(doc, Mapping):
        kind = str(doc.get("kind", ""))
        if kind.endswith("List") and kind != "List" and isinstance(doc.get("items", []), list | None):
            return kind[: -len("List")]
    return None


def flatten(doc: object, origin: str) -> list[tuple[Mapping[str, Any], str]]:
    """Objects of one document: the items of a List (nested Lists too), or the object itself."""
    if not isinstance(doc, Mapping):
        raise InputError("expected a Kubernetes object or List (a JSON object)", file=origin)
    items = doc.get("items")
    if str(doc.get("kind", "")).endswith("List") and isinstance(items, list):
        out: list[tuple[Mapping[str, Any], str]] = []
        for i, item in enumerate(items):
            if not isinstance(item, Mapping):
                raise InputError(f"items[{i}] is not an object", file=origin)
            # kubectl fills kind/apiVersion in every item of a mixed List; typed Lists omit them
            if "kind" not in item and str(doc.get("kind")) not in ("List", ""):
                item = {**item, "kind": str(doc["kind"])[: -len("List")], "apiVersion": doc.get("apiVersion", "v1")}
            out.extend(flatten(item, origin))
        return out
    return [(doc, origin)]


def _read_documents(path: Path) -> list[object]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise InputError(f"cannot read snapshot: {err}", file=str(path)) from err
    if path.suffix in (".yaml", ".yml"):
        try:
            return [d for d in yaml.load_all(text, Loader=yaml.CSafeLoader) if d is not None]
        except yaml.YAMLError as err:
            mark = getattr(err, "problem_mark", None)
            line = None if mark is None else mark.line + 1
            raise InputError(f"not valid YAML: {getattr(err, 'problem', err)}", file=str(path), line=line) from err
    try:
        return [json.loads(text)]
    except json.JSONDecodeError as err:
        raise InputError(f"not valid JSON: {err.msg} (column {err.colno})", file=str(path), line=err.lineno) from err


def configz_node(path: Path) -> str | None:
    """Node name of a configz dump file: `configz-NODE.json` or `NODE.configz.json`."""
    stem = path.name.rsplit(".", 1)[0]
    if stem.startswith(CONFIGZ_PREFIX):
        return stem[len(CONFIGZ_PREFIX) :]
    if stem.endswith(CONFIGZ_SUFFIX):
        return stem[: -len(CONFIGZ_SUFFIX)]
    return None


def _expand(paths: Sequence[Path]) -> list[Path]:
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files.extend(sorted(p for p in path.iterdir() if p.suffix in (".json", ".yaml", ".yml") and p.is_file()))
        elif path.exists():
            files.append(path)
        else:
            raise InputError("snapshot file does not exist", file=str(path))
    if not files:
        raise InputError("no snapshot files (.json/.yaml) found", file=", ".join(map(str, paths)))
    return files


def load_snapshot(paths: Sequence[Path]) -> ClusterSnapshot:
    """Read dump files or folders; `configz-NODE.json` holds `kubectl get --raw .../configz`."""
    objects: list[tuple[Mapping[str, Any], str]] = []
    configs: dict[str, Mapping[str, Any]] = {}
    listed: set[str] = set()
    for path in _expand(paths):
        for doc in _read_documents(path):
            kind = listed_kind(doc)
            if kind is not None:
                listed.add(kind)
            if isinstance(doc, Mapping) and "kubeletconfig" in doc:
                node = configz_node(path)
                if node is None:
                    raise InputError(
                        "a configz dump must be named configz-NODE.json (or NODE.configz.json) so the node is known",
                        file=str(path),
                    )
                configs[node] = parse_configz(doc, node, str(path))
                continue
            objects.extend(flatten(doc, str(path)))
    snapshot = build_snapshot(objects, configs, source=", ".join(str(p) for p in paths), listed=listed)
    unknown = sorted(set(configs) - {n.name for n in snapshot.nodes})
    if unknown:
        note = f"configz for nodes not in the snapshot: {', '.join(unknown)}"
        return replace(snapshot, notes=(*snapshot.notes, note))
    return snapshot
