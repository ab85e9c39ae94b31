"""What a scheduling cycle says of a pod it cannot place: each plugin's Status per node, the Diagnosis that
collects them, and the FitError message kube-scheduler writes into the pod's PodScheduled condition.

Follows kubernetes v1.35 staging/src/k8s.io/kube-scheduler/framework (Code, Status: Reasons, Message, plugin)
and pkg/scheduler/framework (NodeToStatus with the status of absent nodes, Diagnosis, FitError.Error:
"0/N nodes are available: <PreFilterMsg>. <counted reasons, sorted as strings>. <PostFilterMsg>").
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import IntEnum


class Code(IntEnum):
    """fwk.Code, in upstream's order (the values are the Go constants')."""

    SUCCESS = 0
    ERROR = 1
    UNSCHEDULABLE = 2
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3
    WAIT = 4
    SKIP = 5
    PENDING = 6

    @property
    def label(self) -> str:
        """The name Code.String() prints ("UnschedulableAndUnresolvable")."""
        return _CODE_LABELS[self]


_CODE_LABELS = {
    Code.SUCCESS: "Success",
    Code.ERROR: "Error",
    Code.UNSCHEDULABLE: "Unschedulable",
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE: "UnschedulableAndUnresolvable",
    Code.WAIT: "Wait",
    Code.SKIP: "Skip",
    Code.PENDING: "Pending",
}
CODES_BY_LABEL = {label: code for code, label in _CODE_LABELS.items()}

# FitError's head (NoNodeAvailableMsg) and the statuses preemption (DefaultPreemption's PostFilter) and
# dynamic resources (DynamicResources' PostFilter, enabled by default since DRA went GA in v1.34) give.
NO_NODE_AVAILABLE = "0/{} nodes are available"
PREEMPTION_NOT_HELPFUL = "Preemption is not helpful for scheduling"
NO_PREEMPTION_VICTIMS = "No preemption victims found for incoming pod"
PREEMPTION_NEVER = "not eligible due to preemptionPolicy=Never."
PREEMPTION_PREFIX = "preemption: "
NO_CLAIMS_TO_DEALLOCATE = "no new claims to deallocate"


@dataclass(frozen=True)
class Status:
    """One plugin's answer for one node (fwk.Status): a code, its reasons, and the plugin that gave it."""

    code: Code = Code.SUCCESS
    reasons: tuple[str, ...] = ()
    plugin: str = ""

    @property
    def success(self) -> bool:
        """IsSuccess: the Success code (a nil status in Go)."""
        return self.code is Code.SUCCESS

    @property
    def rejected(self) -> bool:
        """IsRejected: Unschedulable, UnschedulableAndUnresolvable or Pending."""
        return self.code in (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.PENDING)

    @property
    def message(self) -> str:
        """Message(): the reasons joined by ', '."""
        return ", ".join(self.reasons)

    def with_plugin(self, plugin: str) -> Status:
        return Status(self.code, self.reasons, plugin)

    def to_dict(self) -> dict[str, object]:
        return {"code": self.code.label, "reasons": list(self.reasons), "plugin": self.plugin}


SUCCESS = Status()


def unschedulable(*reasons: str, unresolvable: bool = False) -> Status:
    """A rejection: Unschedulable, or UnschedulableAndUnresolvable when preemption cannot help."""
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE if unresolvable else Code.UNSCHEDULABLE, tuple(reasons))


@dataclass(frozen=True)
class NodeToStatus:
    """The status of each rejected node, and the one every node absent from the map has (nodes a PreFilter
    result left out; UnschedulableAndUnresolvable with no reason unless said otherwise)."""

    explicit: Mapping[str, Status] = field(default_factory=dict)
    absent: Status = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)

    def get(self, node: str) -> Status:
        return self.explicit.get(node, self.absent)

    def __len__(self) -> int:
        return len(self.explicit)

    def nodes_for_code(self, names: Iterable[str], code: Code) -> list[str]:
        """NodesForStatusCode: the nodes (of `names`, in order) whose status has `code`."""
        return [n for n in names if self.get(n).code is code]


@dataclass(frozen=True)
class Diagnosis:
    """Why a cycle found no node (framework.Diagnosis): per-node statuses, the plugins that rejected, and
    the messages of the PreFilter and PostFilter extension points."""

    node_to_status: NodeToStatus
    unschedulable_plugins: frozenset[str] = frozenset()
    pending_plugins: frozenset[str] = frozenset()
    pre_filter_msg: str = ""
    post_filter_msg: str = ""


@dataclass(frozen=True)
class FitError:
    """A pod that fits no node (framework.FitError); `message` is its Error()."""

    num_all_nodes: int
    diagnosis: Diagnosis

    def reason_counts(self) -> dict[str, int]:
        """Each reason and the number of nodes that gave it, absent nodes included (empty when PreFilter
        failed: its message stands for every node)."""
        if self.diagnosis.pre_filter_msg:
            return {}
        counts: dict[str, int] = {}
        nts = self.diagnosis.node_to_status
        for status in nts.explicit.values():
            for reason in status.reasons:
                counts[reason] = counts.get(reason, 0) + 1
        missing = self.num_all_nodes - len(nts)
        if missing > 0:
            for reason in nts.absent.reasons:
                counts[reason] = counts.get(reason, 0) + missing
        return counts

    @property
    def message(self) -> str:
        """ "0/N nodes are available: ..." exactly as kube-scheduler formats it: the PreFilter message, or the
        reason histogram as "count reason" strings sorted as strings (so "10 x" sorts before "2 y"), then the
        PostFilter message."""
        text = NO_NODE_AVAILABLE.format(self.num_all_nodes) + ":"
        if self.diagnosis.pre_filter_msg:
            text += f" {self.diagnosis.pre_filter_msg}."
        else:
            histogram = sorted(f"{count} {reason}" for reason, count in self.reason_counts().items())
            if histogram:
                text += f" {', '.join(histogram)}."
        if self.diagnosis.post_filter_msg:
            text += f" {self.diagnosis.post_filter_msg}"
        return text


def post_filter_message(statuses: Sequence[Status]) -> str:
    """RunPostFilterPlugins' message when every PostFilter plugin rejected: their reasons joined by ', '."""
    return ", ".join(reason for status in statuses for reason in status.reasons)
