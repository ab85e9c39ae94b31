"""CPU manager creation checks: a CPU topology must exist and the CPU reservation be non-zero.

Follows kubernetes v1.35 pkg/kubelet/cm/cpumanager/cpu_manager.go (NewManager, static branch):
numReservedCPUs = ceil(reservation.cpu).
"""

from __future__ import annotations

from collections.abc import Mapping

from kubegpu.errors import ModelError


def num_reserved_cpus(num_cpus: int, reservation_millis: Mapping[str, int]) -> int:
    """The static policy's reserved CPU count from the node-allocatable reservation (millicores)."""
    if num_cpus <= 0:
        raise ModelError("could not detect number of cpus")
    if "cpu" not in reservation_millis:
        raise ModelError("[cpumanager] unable to determine reserved CPU resources for static policy")
    millis = reservation_millis["cpu"]
    if millis == 0:
        raise ModelError(
            "[cpumanager] the static policy requires systemreserved.cpu + kubereserved.cpu to be greater than zero"
        )
    return -(-millis // 1000)
