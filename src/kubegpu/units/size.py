"""Sizes people type on the command line (140GB, 140GiB, 140G, 140Gi, 1.5T) as whole bytes.

A Kubernetes quantity reads `140` as bytes and `500m` as half a byte; on a size option both are mistakes, so a
bare number and a fraction of a byte are refused with the forms that are meant.
"""

from __future__ import annotations

import re
from decimal import ROUND_CEILING, Decimal

from kubegpu.errors import InputError

_POWERS = {"k": 1, "m": 2, "g": 3, "t": 4, "p": 5, "e": 6}
# <number><prefix>[i][B]: G and GB are powers of 1000, Gi and GiB powers of 1024 (as Kubernetes and IEC write them)
_SIZE_RE = re.compile(r"^(?P<number>[0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*(?P<prefix>[kKmMgGtTpPeE])(?P<binary>i?)[bB]?$")
_BYTES_RE = re.compile(r"^(?P<number>[0-9]+)\s*[bB]$")
_NUMBER_RE = re.compile(r"^[0-9]+(?:\.[0-9]*)?$")


def _forms(number: str) -> str:
    decimal = f"{number}G or {number}GB (10^9 bytes a unit)"
    return f"{decimal}, {number}Gi or {number}GiB (2^30); also k, M, T, with or without i"


def size_bytes(text: str, option: str) -> int:
    """`text` in bytes, rounded up; InputError naming `option` and the accepted forms otherwise."""
    value = text.strip()
    plain = _BYTES_RE.match(value)
    if plain is not None:
        return int(plain.group("number"))
    match = _SIZE_RE.match(value)
    if match is None:
        if value == "0":
            return 0
        if _NUMBER_RE.match(value):
            raise InputError(f"{option}: {text!r} has no unit, which is ambiguous: write {_forms(value)}")
        raise InputError(f"{option}: {text!r} is not a size: write, for instance, {_forms('140')}")
    number = match.group("number")
    if match.group("prefix") == "m" and not match.group("binary") and not value.endswith(("B", "b")):
        # Kubernetes reads 500m as thousandths; nobody means a fraction of a byte
        raise InputError(f"{option}: {text!r} would be thousandths of a byte: write {_forms(number)}")
    base = 1024 if match.group("binary") else 1000
    power = _POWERS[match.group("prefix").lower()]
    return int((Decimal(number) * base**power).to_integral_value(rounding=ROUND_CEILING))
