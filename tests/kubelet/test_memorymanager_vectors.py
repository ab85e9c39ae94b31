"""Memory manager vectors: reservedMemory validation against node allocatable, conversion."""

from __future__ import annotations

from typing import Any

import pytest

from kubegpu.errors import ModelError
from kubegpu.kubelet.memorymanager.reserved import (
    Amount,
    ReservedMemory,
    convert_reserved,
    validate_reserved_memory,
)
from tests.kubelet import vectors as V

FILE = "memorymanager_reserved_memory.json"


def _binary(case: dict[str, Any]) -> bool:
    # TestGetSystemReservedMemory builds BinarySI quantities; TestValidateReservedMemory DecimalSI.
    return bool(case["test"] == "TestGetSystemReservedMemory")


def _reserved(case: dict[str, Any]) -> list[ReservedMemory]:
    binary = _binary(case)
    return [
        ReservedMemory(e["numaNode"], {k: Amount(v, binary) for k, v in e["limits"].items()})
        for e in case["reserved_memory"]
    ]


@pytest.mark.parametrize("case", V.cases(FILE, "validate"))
def test_validate(case: dict[str, Any]) -> None:
    binary = _binary(case)
    reservation = {k: Amount(v, binary) for k, v in case["node_allocatable_reservation"].items()}
    if case["expected_error"]:
        with pytest.raises(ModelError) as err:
            validate_reserved_memory(case["machine_numa_nodes"], reservation, _reserved(case))
        assert str(err.value) == case["expected_error"]
        return
    validate_reserved_memory(case["machine_numa_nodes"], reservation, _reserved(case))
    if "expected_reserved_per_numa" in case:
        got = convert_reserved(case["machine_numa_nodes"], _reserved(case))
        want = case["expected_reserved_per_numa"]
        assert {str(n): {k: a.value for k, a in t.items()} for n, t in got.items()} == want


@pytest.mark.parametrize("case", V.cases(FILE, "convert"))
def test_convert(case: dict[str, Any]) -> None:
    got = convert_reserved(case["machine_numa_nodes"], _reserved(case))
    want = case["expected_reserved_per_numa"]
    assert {str(n): {k: a.value for k, a in t.items()} for n, t in got.items()} == want


def test_missing_numa_node_is_a_startup_error() -> None:
    with pytest.raises(ModelError, match="references a NUMA node 3 that does not exist"):
        validate_reserved_memory([0, 1], {}, [ReservedMemory(3, {"memory": Amount(1)})])


def test_seed_example_message() -> None:
    # kubeReserved 2Gi + systemReserved 2Gi + evictionHard 100Mi = 4196Mi; reserved only 2Gi.
    reservation = {"memory": Amount(0) + Amount(2 << 30, True) + Amount(2 << 30, True) + Amount(100 << 20, True)}
    with pytest.raises(ModelError) as err:
        validate_reserved_memory([0, 1], reservation, [ReservedMemory(0, {"memory": Amount(2 << 30, True)})])
    assert str(err.value) == (
        'the total amount "2Gi" of type "memory" is not equal to the value "4196Mi" '
        "determined by Node Allocatable feature"
    )
