"""Size options read what people write (140GB, 140GiB, 140G, 140Gi) and refuse a number without a unit."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubegpu.errors import InputError
from kubegpu.units.size import size_bytes


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("140GB", 140 * 10**9),
        ("140G", 140 * 10**9),
        ("140gb", 140 * 10**9),
        ("140GiB", 140 * 2**30),
        ("140Gi", 140 * 2**30),
        ("1.5T", 15 * 10**11),
        ("512MiB", 512 * 2**20),
        ("512M", 512 * 10**6),
        ("64k", 64_000),
        ("64KiB", 64 * 1024),
        ("100B", 100),
        (" 9G ", 9 * 10**9),
        ("0", 0),
        ("0.5Ki", 512),
        ("1.0000000001G", 1_000_000_001),  # a part of a byte rounds up
    ],
)
def test_the_forms_people_write(text: str, expected: int) -> None:
    assert size_bytes(text, "--model-size") == expected


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("140", "'140' has no unit, which is ambiguous: write 140G or 140GB"),
        ("1.5", "write 1.5G or 1.5GB"),
        ("500m", "thousandths of a byte: write 500G"),
        ("lots", "is not a size"),
        ("-1G", "is not a size"),
        ("GB", "is not a size"),
        ("1e9", "is not a size"),
        ("", "is not a size"),
    ],
)
def test_mistakes_are_named(text: str, says: str) -> None:
    with pytest.raises(InputError) as err:
        size_bytes(text, "--model-size")
    assert err.value.message.startswith("--model-size: ") and says in err.value.message


@given(st.integers(min_value=0, max_value=10**6), st.sampled_from(["k", "M", "G", "T"]), st.booleans())
def test_units_scale_by_their_base(number: int, prefix: str, with_b: bool) -> None:
    power = "kMGT".index(prefix) + 1
    suffix = "B" if with_b else ""
    assert size_bytes(f"{number}{prefix}{suffix}", "-") == number * 1000**power
    assert size_bytes(f"{number}{prefix.upper()}i{suffix}", "-") == number * 1024**power


@given(st.text(max_size=20))
def test_any_text_is_a_size_or_a_named_error(text: str) -> None:
    try:
        assert size_bytes(text, "--x") >= 0
    except InputError as err:
        assert err.message.startswith("--x: ")
