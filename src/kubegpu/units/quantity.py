"""Exact Kubernetes resource quantities (k8s.io/apimachinery resource.Quantity grammar).

Values are Decimals, never floats, so `3000m` is exactly 3 CPUs and `1.5Gi` is exact bytes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import ROUND_CEILING, Decimal, InvalidOperation
from functools import lru_cache

from kubegpu.errors import QuantityError

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": Decimal("1e-9"),
    "u": Decimal("1e-6"),
    "m": Decimal("1e-3"),
    "": Decimal(1),
    "k": Decimal(10**3),
    "M": Decimal(10**6),
    "G": Decimal(10**9),
    "T": Decimal(10**12),
    "P": Decimal(10**15),
    "E": Decimal(10**18),
}
# <sign><digits>[.<digits>]<suffix>, suffix = binarySI | decimalSI | e<signed int>
_QUANTITY_RE = re.compile(
    r"^(?P<number>[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))"
    r"(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?[0-9]+)?$"
)
_MAX_EXPONENT = 1000  # refuse absurd exponents rather than build huge Decimals


@dataclass(frozen=True, order=True)
class Quantity:
    """A parsed quantity: its exact value and the suffix it was written with."""

    value: Decimal
    suffix: str = ""

    @property
    def millis(self) -> int:
        """The value in thousandths, rounded up as `resource.Quantity.MilliValue` does."""
        return int((self.value * 1000).to_integral_value(rounding=ROUND_CEILING))

    @property
    def ceil(self) -> int:
        """The value rounded up to an integer, as `resource.Quantity.Value` does."""
        return int(self.value.to_integral_value(rounding=ROUND_CEILING))

    def is_integer(self) -> bool:
        """True when the value is a whole number (`4`, `4000m`, `4.0`; not `3500m`)."""
        return self.value == self.value.to_integral_value()

    def format(self) -> str:
        """Write the value back with its own suffix family; `parse_quantity` reads it back exactly."""
        return format_quantity(self.value, self.suffix)

    def __str__(self) -> str:
        return self.format()


def parse_quantity(text: object) -> Quantity:
    """Parse a quantity as the API server does; raise QuantityError for anything else.

    YAML integers and floats are accepted (`nvidia.com/gpu: 2`); booleans and null are not.
    """
    if type(text) is str:
        return _parse_text(text)
    if isinstance(text, bool) or text is None:
        raise QuantityError(f"{text!r} is not a quantity")
    if isinstance(text, int):
        return _whole(text)
    if isinstance(text, float):
        if text != text or text in (float("inf"), float("-inf")):
            raise QuantityError(f"{text!r} is not a quantity")
        return Quantity(Decimal(repr(text)), "")
    if not isinstance(text, str):
        raise QuantityError(f"{text!r} is not a quantity")
    return _parse_text(text)


@lru_cache(maxsize=1024)  # `nvidia.com/gpu: 8`: a handful of YAML integers, written thousands of times
def _whole(number: int) -> Quantity:
    return Quantity(Decimal(number), "")


@lru_cache(maxsize=4096)  # manifests repeat a few dozen values ("8", "64Gi") thousands of times
def _parse_text(text: str) -> Quantity:
    match = _QUANTITY_RE.match(text.strip())
    if match is None or text != text.strip():
        raise QuantityError(f"{text!r} is not a quantity (expected a number and a unit such as 500m, 16, 64Gi)")
    try:
        number = Decimal(match.group("number"))
    except InvalidOperation as err:  # pragma: no cover - the regex already guarantees digits
        raise QuantityError(f"{text!r} is not a quantity") from err
    suffix = match.group("suffix") or ""
    if suffix in _BINARY:
        return Quantity(number * _BINARY[suffix], suffix)
    if suffix in _DECIMAL:
        return Quantity(number * _DECIMAL[suffix], suffix)
    exponent = int(suffix[1:])
    if abs(exponent) > _MAX_EXPONENT:
        raise QuantityError(f"{text!r}: exponent out of range")
    return Quantity(number.scaleb(exponent), "e")


def format_quantity(value: Decimal, suffix: str = "") -> str:
    """Format an exact value with a suffix when it divides evenly, else as a plain decimal."""
    if suffix in _BINARY and value % _BINARY[suffix] == 0:
        return f"{_plain(value / _BINARY[suffix])}{suffix}"
    if suffix in _DECIMAL and suffix and (value / _DECIMAL[suffix]) == (value / _DECIMAL[suffix]).to_integral_value():
        return f"{_plain(value / _DECIMAL[suffix])}{suffix}"
    if value != value.to_integral_value() and (value * 1000) == (value * 1000).to_integral_value():
        return f"{_plain(value * 1000)}m"
    return _plain(value)


def _plain(value: Decimal) -> str:
    """A Decimal without exponent notation or trailing zeros."""
    text = format(value.normalize(), "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def cpu_millis(text: object) -> int:
    """CPU quantity in millicores (rounded up, as the kubelet does)."""
    return parse_quantity(text).millis


def memory_bytes(text: object) -> int:
    """Memory or storage quantity in bytes (rounded up)."""
    return parse_quantity(text).ceil


_LARGEST_FIRST = (("Ei", 2**60), ("Pi", 2**50), ("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10))


def format_bytes(value: int) -> str:
    """Bytes in the largest binary suffix that divides them exactly (4196Mi), else plain bytes."""
    for suffix, size in _LARGEST_FIRST:
        if value and value % size == 0:
            return f"{value // size}{suffix}"
    return str(value)
