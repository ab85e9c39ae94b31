"""The cluster a command reads: `kubectl get -o json` dumps (`--snapshot`) or the API server (`--cluster`,
read-only), for `audit` and `defrag`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from kubegpu.live.model import ClusterSnapshot


@dataclass(frozen=True)
class ClusterInput:
    """The options both commands take: the dumps, or how to reach the API server."""

    snapshot: list[Path] | None
    kubeconfig: Path | None
    context: str | None
    timeout: float
    deadline: float
    namespace: str | None = None
    configz: bool = True
    disruption: bool = False  # also PodDisruptionBudgets, PriorityClasses, PVCs and PVs


def read_input(given: ClusterInput) -> ClusterSnapshot:
    """The snapshot of the dumps, or of the cluster (its warnings on stderr as they come)."""
    if given.snapshot:
        from kubegpu.live.snapshot import load_snapshot

        return load_snapshot(given.snapshot)
    from kubegpu.live.client import ClusterOptions, read_cluster

    return read_cluster(
        ClusterOptions(
            kubeconfig=given.kubeconfig,
            context=given.context,
            namespace=given.namespace,
            timeout_s=given.timeout,
            read_configz=given.configz,
            deadline_s=given.deadline,
            disruption=given.disruption,
        ),
        warn=lambda message: typer.echo(f"kubegpu: warning: {message}", err=True),
    )
