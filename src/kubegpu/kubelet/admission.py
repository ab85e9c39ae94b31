"""The result of admitting one pod: verdict, kubelet reason/message, assignments and trace.

Follows kubernetes v1.35 lifecycle.PodAdmitResult (Admit, Reason, Message); the per-container
assignments and the hint trace are what the CPU, memory and device managers and the Topology
Manager recorded while admitting.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kubegpu.kubelet.bitmask import NUMAMask
from kubegpu.kubelet.hints import TopologyHint, hint_to_json
from kubegpu.topology.cpulist import format_cpulist


@dataclass(frozen=True)
class ContainerAssignment:
    """What one container got: exclusive CPUs, the NUMA hint stored, devices and pinned memory."""

    name: str
    kind: str
    exclusive_cpus: tuple[int, ...] = ()
    numa_affinity: tuple[int, ...] | None = None
    devices: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    memory: Mapping[str, Mapping[int, int]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "exclusive_cpus": list(self.exclusive_cpus),
            "cpuset": format_cpulist(self.exclusive_cpus) if self.exclusive_cpus else "shared",
            "numa_affinity": None if self.numa_affinity is None else list(self.numa_affinity),
            "devices": {r: list(ids) for r, ids in self.devices.items()},
            "memory": {r: {str(n): b for n, b in per.items()} for r, per in self.memory.items()},
        }


@dataclass(frozen=True)
class ProviderAnswer:
    """One hint provider's answer for one resource (hints None = no preference)."""

    provider: str
    resource: str
    hints: tuple[TopologyHint, ...] | None

    def describe(self) -> str:
        if self.hints is None:
            return "no preference"
        if not self.hints:
            return "no possible placement (empty hint list)"
        if len(self.hints) <= 8:
            return ", ".join(h.describe() for h in self.hints)
        preferred = [h for h in self.hints if h.preferred]
        others = [h for h in self.hints if not h.preferred]
        shown = preferred + others[:3]
        rest = len(self.hints) - len(shown)
        return ", ".join(h.describe() for h in shown) + f" (+{rest} more not-preferred masks)"


@dataclass(frozen=True)
class TraceStep:
    """One Topology Manager decision: the target, every provider's hints and the merged hint."""

    target: str
    providers: tuple[ProviderAnswer, ...]
    merged: TopologyHint
    admit: bool
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "providers": [
                {
                    "provider": p.provider,
                    "resource": p.resource,
                    "hints": None if p.hints is None else [hint_to_json(h) for h in p.hints],
                }
                for p in self.providers
            ],
            "merged": hint_to_json(self.merged),
            "admit": self.admit,
            "note": self.note,
        }


@dataclass(frozen=True)
class Admission:
    """The kubelet's verdict on one pod, with what it allocated and why."""

    pod: str
    admitted: bool
    reason: str = ""
    message: str = ""
    qos: str = ""
    policy: str = ""
    scope: str = ""
    containers: tuple[ContainerAssignment, ...] = ()
    trace: tuple[TraceStep, ...] = ()
    notes: tuple[str, ...] = ()
    pod_key: str = ""  # the key the node holds an admitted pod under (NodeState.release takes it)

    def to_dict(self) -> dict[str, Any]:
        return {
            "pod": self.pod,
            "admitted": self.admitted,
            "reason": self.reason or None,
            "message": self.message or None,
            "qos": self.qos,
            "topology_manager": {"policy": self.policy, "scope": self.scope},
            "containers": [c.to_dict() for c in self.containers],
            "trace": [t.to_dict() for t in self.trace],
            "notes": list(self.notes),
        }

    def explain(self) -> list[str]:
        """The trace as readable lines (kubegpu admit --explain)."""
        lines = [f"topology manager: policy {self.policy}, scope {self.scope}; pod QoS {self.qos}"]
        for step in self.trace:
            lines.append(f"hints for {step.target}:")
            for p in step.providers:
                lines.append(f"  {p.provider:<15} {p.resource}: {p.describe()}")
            verdict = "admit" if step.admit else "reject"
            lines.append(f"  merged: {step.merged.describe()} -> {verdict}")
            if step.note:
                lines.append(f"  why: {step.note}")
        lines.extend(f"note: {n}" for n in self.notes)
        return lines


def mask_ids(mask: NUMAMask | None) -> tuple[int, ...] | None:
    return None if mask is None else mask.ids()
