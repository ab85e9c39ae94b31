"""CPU list and mask parsing round-trips; malformed lists are rejected."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubegpu.topology.cpulist import format_cpulist, format_cpumask, parse_cpulist, parse_cpumask

ID_SETS = st.sets(st.integers(min_value=0, max_value=600), max_size=80)


@given(ID_SETS)
def test_cpulist_round_trip(ids: set[int]) -> None:
    text = format_cpulist(ids)
    assert parse_cpulist(text) == tuple(sorted(ids))
    assert parse_cpulist(text + "\n") == tuple(sorted(ids))


@given(ID_SETS)
def test_cpumask_round_trip(ids: set[int]) -> None:
    assert parse_cpumask(format_cpumask(ids)) == tuple(sorted(ids))


def test_known_forms() -> None:
    assert parse_cpulist("0-55,112-167") == tuple(range(56)) + tuple(range(112, 168))
    assert format_cpulist([0, 1, 2, 4, 6, 7]) == "0-2,4,6-7"
    assert parse_cpumask("ffffffff,ffff0000,00000000") == tuple(range(48, 96))
    assert format_cpumask([0, 33]) == "00000002,00000001"
    assert parse_cpulist("") == ()


@pytest.mark.parametrize("bad", ["1-", "a", "3-1", "1,,2", "-1", "0-15:2/4"])
def test_bad_lists(bad: str) -> None:
    with pytest.raises(ValueError):
        parse_cpulist(bad)
