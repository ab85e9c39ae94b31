"""A packing problem: node classes (identical nodes × count), task types (requests × count) and which
classes each type may use; `fits` decides exactly whether one node can hold a multiset of tasks.

GPUs follow the FGD simulator's accounting (Open-Gpu-Share): every GPU holds 1000 milli; a task asking for
less than 1000 milli shares one GPU with others, a task of whole GPUs takes that many GPUs of its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kubegpu.errors import ModelError

MILLI = 1000
MAX_GPUS = 32  # per node; GpuCluster refuses more too
PENALTY = 1e6  # objective cost of leaving out a task that must be placed: keeps every LP feasible, bounds sound


@dataclass(frozen=True)
class NodeClass:
    """`count` identical nodes: allocatable CPU (milli), memory (MiB), pod slots and whole GPUs."""

    name: str
    count: int
    cpu_milli: int
    memory_mib: int
    pods: int
    gpus: int


@dataclass(frozen=True)
class TaskType:
    """`available` identical tasks, of which at least `required` must be placed.

    `gpu_milli` is per GPU: 1000 for whole GPUs (`gpu_count` of them), less for a task sharing one GPU.
    `value` is what placing one copy is worth (by default its GPU milli: the allocation a policy is measured by).
    """

    name: str
    cpu_milli: int
    memory_mib: int
    gpu_count: int
    gpu_milli: int
    available: int
    required: int = 0
    value: int | None = None

    @property
    def worth(self) -> int:
        """The objective per copy: `value`, else the task's GPU milli."""
        return self.gpu_count * self.gpu_milli if self.value is None else self.value

    @property
    def shares_gpu(self) -> bool:
        """True when the task takes part of one GPU (which other sharing tasks may also use)."""
        return self.gpu_count == 1 and 0 < self.gpu_milli < MILLI

    @property
    def whole_gpus(self) -> int:
        """GPUs the task takes for itself (0 for a sharing or CPU-only task)."""
        return self.gpu_count if self.gpu_milli == MILLI else 0


@dataclass(frozen=True)
class PackingProblem:
    """Node classes, task types, and `eligible[c][t]`: may type t run on class c (GPU model, selectors…)."""

    classes: tuple[NodeClass, ...]
    types: tuple[TaskType, ...]
    eligible: tuple[tuple[bool, ...], ...]

    def __post_init__(self) -> None:
        if len(self.eligible) != len(self.classes) or any(len(row) != len(self.types) for row in self.eligible):
            raise ModelError("eligibility must have one row per node class and one column per task type")
        for c in self.classes:
            if min(c.count, c.cpu_milli, c.memory_mib, c.pods, c.gpus) < 0 or c.gpus > MAX_GPUS:
                raise ModelError(f"node class {c.name}: counts and capacities must be in range")
        for t in self.types:
            if min(t.cpu_milli, t.memory_mib, t.gpu_count, t.gpu_milli, t.required) < 0 or t.required > t.available:
                raise ModelError(f"task type {t.name}: requests and counts must be in range")
            if t.gpu_count > 0 and not 0 < t.gpu_milli <= MILLI:
                raise ModelError(f"task type {t.name}: a GPU task asks for 1..1000 milli per GPU")
            if t.gpu_count > 1 and t.gpu_milli != MILLI:
                raise ModelError(f"task type {t.name}: a multi-GPU task takes whole GPUs")

    @property
    def gpu_milli(self) -> int:
        """GPU capacity of all nodes, milli."""
        return sum(c.count * c.gpus * MILLI for c in self.classes)


def per_node_limit(problem: PackingProblem, c: int, t: int) -> int:
    """Most copies of type t one node of class c holds by each resource alone (0 when not eligible)."""
    node, task = problem.classes[c], problem.types[t]
    if not problem.eligible[c][t]:
        return 0
    limit = node.pods
    if task.cpu_milli:
        limit = min(limit, node.cpu_milli // task.cpu_milli)
    if task.memory_mib:
        limit = min(limit, node.memory_mib // task.memory_mib)
    if task.whole_gpus:
        limit = min(limit, node.gpus // task.whole_gpus)
    elif task.shares_gpu:
        limit = min(limit, node.gpus * (MILLI // task.gpu_milli))
    return max(0, limit)


def pack_shares(shares: Sequence[int], bins: int) -> bool:
    """Can these per-GPU milli requests (each on one GPU) be packed onto `bins` GPUs of 1000 milli?

    Exact: largest first, each into every distinct free capacity, with the usual symmetry cuts.
    """
    items = sorted((s for s in shares if s > 0), reverse=True)
    if not items:
        return True
    if bins <= 0 or sum(items) > bins * MILLI:
        return False
    free = [MILLI] * bins

    def place(i: int) -> bool:
        if i == len(items):
            return True
        tried: set[int] = set()
        for b in range(bins):
            room = free[b]
            if room < items[i] or room in tried:
                continue
            tried.add(room)
            free[b] -= items[i]
            if place(i + 1):
                return True
            free[b] += items[i]
        return False

    return place(0)


def fits(node: NodeClass, types: Sequence[TaskType], counts: Sequence[int]) -> bool:
    """Exactly: can one node of this class hold `counts[t]` tasks of each type at once?"""
    if any(n < 0 for n in counts):
        return False
    cpu = sum(n * t.cpu_milli for t, n in zip(types, counts, strict=True))
    mem = sum(n * t.memory_mib for t, n in zip(types, counts, strict=True))
    pods = sum(counts)
    if cpu > node.cpu_milli or mem > node.memory_mib or pods > node.pods:
        return False
    whole = sum(n * t.whole_gpus for t, n in zip(types, counts, strict=True))
    if whole > node.gpus:
        return False
    shares = [t.gpu_milli for t, n in zip(types, counts, strict=True) if t.shares_gpu for _ in range(n)]
    return pack_shares(shares, node.gpus - whole)
