"""Quantities: every suffix, exponents, millis; the parse/format round trip is exact."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubegpu.errors import QuantityError
from kubegpu.units import parse_quantity
from kubegpu.units.quantity import cpu_millis, format_quantity, memory_bytes


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1", Decimal(1)),
        ("3000m", Decimal(3)),
        ("1.5", Decimal("1.5")),
        ("100m", Decimal("0.1")),
        ("1Ki", Decimal(1024)),
        ("1Mi", Decimal(2**20)),
        ("64Gi", Decimal(64 * 2**30)),
        ("1Ti", Decimal(2**40)),
        ("1Pi", Decimal(2**50)),
        ("1Ei", Decimal(2**60)),
        ("1k", Decimal(1000)),
        ("1M", Decimal(10**6)),
        ("2G", Decimal(2 * 10**9)),
        ("1T", Decimal(10**12)),
        ("1P", Decimal(10**15)),
        ("1E", Decimal(10**18)),
        ("5n", Decimal("5e-9")),
        ("5u", Decimal("5e-6")),
        ("2e3", Decimal(2000)),
        ("1E-3", Decimal("0.001")),
        ("1.5Gi", Decimal(3 * 2**29)),
        (".5", Decimal("0.5")),
        ("+2", Decimal(2)),
        ("-1", Decimal(-1)),
        (8, Decimal(8)),
        (0.5, Decimal("0.5")),
    ],
)
def test_parse(text: object, value: Decimal) -> None:
    assert parse_quantity(text).value == value


@pytest.mark.parametrize(
    "text",
    [
        "$GPU_PER_NODE",
        "PLACEHOLDER",
        "",
        "1.2.3",
        "1Gb",
        "Gi",
        " 1",
        "1 Gi",
        True,
        None,
        "1e",
        "e3",
        "1ee3",
        "0x10",
        [1],
    ],
)
def test_reject(text: object) -> None:
    with pytest.raises(QuantityError):
        parse_quantity(text)


def test_integer_cpu() -> None:
    assert parse_quantity("3000m").is_integer()
    assert parse_quantity("4.0").is_integer()
    assert not parse_quantity("3500m").is_integer()
    assert cpu_millis("1.0001") == 1001  # rounded up like MilliValue
    assert memory_bytes("1.5Gi") == 3 * 2**29


suffixes = st.sampled_from(["", "m", "k", "M", "G", "T", "Ki", "Mi", "Gi", "Ti", "e3", "e-2"])


@given(st.integers(min_value=0, max_value=10**12), st.integers(min_value=0, max_value=999), suffixes)
def test_round_trip(whole: int, frac: int, suffix: str) -> None:
    text = f"{whole}.{frac:03d}{suffix}" if frac else f"{whole}{suffix}"
    quantity = parse_quantity(text)
    assert parse_quantity(quantity.format()).value == quantity.value


@given(st.decimals(min_value=-(10**15), max_value=10**15, places=3, allow_nan=False, allow_infinity=False))
def test_format_parses_back(value: Decimal) -> None:
    assert parse_quantity(format_quantity(value)).value == value
