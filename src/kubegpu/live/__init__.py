"""kubegpu.live: read a cluster (API or `kubectl get -o json` dumps) and audit its GPU state.

Entry points: `read_cluster`, `load_snapshot`, `audit`; the model is in `kubegpu.live.model`.
"""

from __future__ import annotations

from kubegpu.live.audit import AuditOptions, AuditReport, audit
from kubegpu.live.client import ClusterOptions, read_cluster
from kubegpu.live.model import ClusterSnapshot
from kubegpu.live.snapshot import build_snapshot, load_snapshot

__all__ = [
    "AuditOptions",
    "AuditReport",
    "ClusterOptions",
    "ClusterSnapshot",
    "audit",
    "build_snapshot",
    "load_snapshot",
    "read_cluster",
]
