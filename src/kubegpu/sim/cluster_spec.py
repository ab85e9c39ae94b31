"""A YAML cluster spec: node presets (or explicit shapes) × counts, spread over blocks and racks.

Labels follow Kueue's TAS docs (cloud.provider.com/topology-block, -rack, kubernetes.io/hostname);
presets come from kubegpu.topology.presets so kubelet admission can run on each node's profile.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from kubegpu.errors import InputError, KubegpuError
from kubegpu.manifests.loader import refuse_alias_bomb
from kubegpu.manifests.sources import read_text
from kubegpu.scheduler.gpu.state import NodeSpec
from kubegpu.scheduler.resources import canonical_amount
from kubegpu.scheduler.tas import DEFAULT_LEVELS, HOSTNAME
from kubegpu.topology.model import NodeTopology
from kubegpu.topology.presets import load_preset

BLOCK, RACK = DEFAULT_LEVELS[0], DEFAULT_LEVELS[1]


@dataclass(frozen=True)
class ClusterSpec:
    """Nodes, their hardware profiles (None for explicit shapes) and the topology levels."""

    nodes: tuple[NodeSpec, ...]
    profiles: tuple[NodeTopology | None, ...]
    levels: tuple[str, ...] = DEFAULT_LEVELS


def _positive(group: Mapping[str, Any], key: str, default: int, where: str) -> int:
    value = group.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InputError(f"{key} must be a positive integer, got {value!r}", file=where)
    return value


def _shape(group: Mapping[str, Any], where: str) -> tuple[int, int, int, str, NodeTopology | None]:
    if "preset" in group:
        try:
            topo = load_preset(str(group["preset"]))
        except KubegpuError as err:
            raise InputError(err.message, file=where) from None
        memory = sum(n.memory_bytes for n in topo.numa_nodes)
        model = topo.gpus[0].model if topo.gpus else ""
        return topo.num_cpus * 1000, memory, len(topo.gpus), model, topo
    try:
        cpu = canonical_amount("cpu", group.get("cpu", 0))
        memory = canonical_amount("memory", group.get("memory", 0))
    except KubegpuError as err:
        raise InputError(err.message, file=where) from None
    gpus = group.get("gpus", 0)
    if isinstance(gpus, bool) or not isinstance(gpus, int) or gpus < 0:
        raise InputError(f"gpus must be a non-negative integer, got {gpus!r}", file=where)
    if cpu <= 0 or memory <= 0:
        raise InputError("a node group needs a preset, or cpu and memory", file=where)
    return cpu, memory, gpus, str(group.get("model", "gpu" if gpus else "")), None


def load_cluster_spec(path: Path) -> ClusterSpec:
    """Read `nodes: [{preset|cpu/memory/gpus/model, count, blocks, racks_per_block, labels}]`."""
    where = str(path)
    text = read_text(where, path, "cluster", "cannot read: ")  # a FIFO or a device is refused, not waited on
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        raise InputError(
            f"invalid YAML: {getattr(err, 'problem', err)}",
            file=where,
            line=(mark.line + 1) if mark is not None else None,
        ) from None
    refuse_alias_bomb(data, text, where)
    if not isinstance(data, Mapping) or not isinstance(data.get("nodes"), list) or not data["nodes"]:
        raise InputError("a cluster spec needs a non-empty `nodes:` list", file=where)
    levels = (
        tuple(data.get("topology", {}).get("levels", DEFAULT_LEVELS))
        if isinstance(data.get("topology", {}), Mapping)
        else DEFAULT_LEVELS
    )
    nodes: list[NodeSpec] = []
    profiles: list[NodeTopology | None] = []
    for gi, group in enumerate(data["nodes"]):
        if not isinstance(group, Mapping):
            raise InputError(f"nodes[{gi}] must be a mapping", file=where)
        cpu, memory, gpus, model, topo = _shape(group, where)
        count = _positive(group, "count", 1, where)
        blocks = _positive(group, "blocks", 1, where)
        racks = _positive(group, "racks_per_block", 1, where)
        prefix = str(group.get("name", group.get("preset", f"group{gi}")))
        extra = group.get("labels") or {}
        if not isinstance(extra, Mapping):
            raise InputError(f"nodes[{gi}].labels must be a mapping", file=where)
        per_rack = -(-count // (blocks * racks))
        for i in range(count):
            rack_global = i // per_rack
            labels = {
                BLOCK: f"{prefix}-b{rack_global // racks}",
                RACK: f"{prefix}-r{rack_global}",
                HOSTNAME: f"{prefix}-{i:04d}",
            }
            labels.update({str(k): str(v) for k, v in extra.items()})
            nodes.append(NodeSpec(labels[HOSTNAME], cpu, memory, gpus, model, 110, labels))
            profiles.append(topo)
    return ClusterSpec(tuple(nodes), tuple(profiles), levels)
