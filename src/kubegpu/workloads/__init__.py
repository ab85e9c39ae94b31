"""Workload kinds: one adapter per kind family answers what every command asks of an object (its pod templates,
gang shape, placement constraints, expansion to pods); kubegpu.workloads.registry lists them.
"""

from kubegpu.workloads.discovery import (
    Coverage,
    coverage,
    gang_shape,
    generic_note,
    holds_no_pods,
    looked_up_kinds,
    pod_templates,
    shaped_kinds,
    simulated_kinds,
)
from kubegpu.workloads.kind import GangMinimum, GangShape, GangVerdict, WorkloadKind
from kubegpu.workloads.registry import ADAPTERS, kind_of

__all__ = [
    "ADAPTERS",
    "Coverage",
    "GangMinimum",
    "GangShape",
    "GangVerdict",
    "WorkloadKind",
    "coverage",
    "gang_shape",
    "generic_note",
    "holds_no_pods",
    "kind_of",
    "looked_up_kinds",
    "pod_templates",
    "shaped_kinds",
    "simulated_kinds",
]
