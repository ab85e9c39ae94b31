"""reservedMemory at kubelet start-up: Σ per type must equal the node-allocatable reservation.

Follows kubernetes v1.35 pkg/kubelet/cm/memorymanager/memory_manager.go (validateReservedMemory,
convertReserved, getSystemReservedMemory) with resource.Quantity's canonical String() form.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kubegpu.errors import ModelError

MEMORY = "memory"
HUGEPAGES_PREFIX = "hugepages-"


@dataclass(frozen=True)
class Amount:
    """An exact byte amount and whether it was written in binary (Ki, Mi, Gi) units."""

    value: int
    binary: bool = False

    def __add__(self, other: Amount) -> Amount:
        # resource.Quantity.Add: a zero receiver takes the operand's format.
        binary = other.binary if self.value == 0 else self.binary
        return Amount(self.value + other.value, binary)

    def __str__(self) -> str:
        return go_quantity_string(self.value, self.binary)


def go_quantity_string(value: int, binary: bool) -> str:
    """resource.Quantity.String() for an integer: BinarySI via 1024 steps, else DecimalSI."""
    if binary and abs(value) >= 1024:
        suffixes = ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")
        step = 0
        while value != 0 and value % 1024 == 0 and step < len(suffixes) - 1:
            value //= 1024
            step += 1
        return f"{value}{suffixes[step]}"
    suffixes = ("", "k", "M", "G", "T", "P", "E")
    step = 0
    while value != 0 and value % 1000 == 0 and step < len(suffixes) - 1:
        value //= 1000
        step += 1
    return f"{value}{suffixes[step]}"


def is_memory_type(resource: str) -> bool:
    return resource == MEMORY or resource.startswith(HUGEPAGES_PREFIX)


def _type_order(resource: str) -> tuple[int, str]:
    return (0 if resource == MEMORY else 1, resource)


@dataclass(frozen=True)
class ReservedMemory:
    """One `reservedMemory` entry: a NUMA node and its limits per memory type."""

    numa_node: int
    limits: Mapping[str, Amount]


def convert_reserved(numa_nodes: Sequence[int], reserved: Sequence[ReservedMemory]) -> dict[int, dict[str, Amount]]:
    """Per NUMA node, the reserved amount of each type (nodes without entries get {})."""
    out: dict[int, dict[str, Amount]] = {n: {} for n in sorted(numa_nodes)}
    for entry in reserved:
        table = out.setdefault(entry.numa_node, {})
        for resource, amount in entry.limits.items():
            table[resource] = table.get(resource, Amount(0)) + amount
    return out


def validate_reserved_memory(
    numa_nodes: Sequence[int],
    allocatable_reservation: Mapping[str, Amount],
    reserved: Sequence[ReservedMemory],
) -> None:
    """Raise the memory manager's start-up error when Σ reservedMemory != the reservation."""
    present = set(numa_nodes)
    totals: dict[str, Amount] = {}
    for entry in sorted(reserved, key=lambda e: e.numa_node):
        if entry.numa_node not in present:
            raise ModelError(
                "the reserved memory configuration references a NUMA node "
                f"{entry.numa_node} that does not exist on this machine"
            )
        for resource, amount in entry.limits.items():
            totals[resource] = totals.get(resource, Amount(0)) + amount
    kinds = set(totals) | {r for r in allocatable_reservation if is_memory_type(r)}
    for resource in sorted(kinds, key=_type_order):
        expected = Amount(0) + allocatable_reservation.get(resource, Amount(0))
        total = Amount(0) + totals.get(resource, Amount(0))
        if expected.value != total.value:
            raise ModelError(
                f'the total amount "{total}" of type "{resource}" is not equal to the value '
                f'"{expected}" determined by Node Allocatable feature'
            )
