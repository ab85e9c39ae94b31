"""Admission failures with the kubelet's own reason strings and messages.

Follows kubernetes v1.35 pkg/kubelet/cm/admission (GetPodAdmitResult, unexpectedAdmissionError),
topologymanager.TopologyAffinityError, cpumanager.SMTAlignmentError and the predicate admit
handler's InsufficientResourceError.
"""

from __future__ import annotations

from dataclasses import dataclass

from kubegpu.errors import ModelError

TOPOLOGY_AFFINITY_ERROR = "TopologyAffinityError"
SMT_ALIGNMENT_ERROR = "SMTAlignmentError"
UNEXPECTED_ADMISSION_ERROR = "UnexpectedAdmissionError"


class AdmissionFailure(ModelError):
    """A typed admission error: `reason` is the pod status reason, str() the message."""

    reason = UNEXPECTED_ADMISSION_ERROR


class TopologyAffinityError(AdmissionFailure):
    reason = TOPOLOGY_AFFINITY_ERROR

    def __init__(self) -> None:
        super().__init__("Resources cannot be allocated with Topology locality")


class SMTAlignmentError(AdmissionFailure):
    """full-pcpus-only: the request is not whole cores, or not enough free whole cores."""

    reason = SMT_ALIGNMENT_ERROR

    def __init__(
        self,
        requested: int,
        cpus_per_core: int,
        available_physical: int = 0,
        by_physical: bool = False,
    ) -> None:
        self.requested = requested
        self.cpus_per_core = cpus_per_core
        self.available_physical = available_physical
        self.by_physical = by_physical
        if by_physical:
            text = (
                "SMT Alignment Error: not enough free physical CPUs: available physical CPUs = "
                f"{available_physical}, requested CPUs = {requested}, "
                f"CPUs per core = {cpus_per_core}"
            )
        else:
            text = f"SMT Alignment Error: requested {requested} cpus not multiple cpus per core = {cpus_per_core}"
        super().__init__(text)


@dataclass(frozen=True)
class Rejection:
    """A rejected admission: the reason and message the pod status would carry."""

    reason: str
    message: str


def rejection_for(err: ModelError) -> Rejection:
    """GetPodAdmitResult: typed errors keep their reason; anything else is unexpected."""
    if isinstance(err, AdmissionFailure) and err.reason != UNEXPECTED_ADMISSION_ERROR:
        return Rejection(err.reason, err.message)
    return Rejection(UNEXPECTED_ADMISSION_ERROR, f"Allocate failed due to {err.message}, which is unexpected")


def insufficient_resource(resource: str, requested: int, used: int, capacity: int) -> Rejection:
    """The predicate admit handler's OutOf<resource> rejection."""
    return Rejection(
        f"OutOf{resource}",
        f"Node didn't have enough resource: {resource}, requested: {requested}, used: {used}, capacity: {capacity}",
    )
