"""CPU sets as integer bitsets (bit i = CPU i) with the kubelet's cpuset string form ("0-3,8").

Follows k8s.io/utils/cpuset as used by kubernetes v1.35 (String and Parse formats).
"""

from __future__ import annotations

from collections.abc import Iterable

from kubegpu.topology.cpulist import format_cpulist, parse_cpulist


def bits_of(ids: Iterable[int]) -> int:
    value = 0
    for cpu in ids:
        value |= 1 << cpu
    return value


def ids_of(bits: int) -> tuple[int, ...]:
    """The set CPU ids, ascending."""
    out: list[int] = []
    cpu = 0
    while bits:
        low = bits & -bits
        cpu = low.bit_length() - 1
        out.append(cpu)
        bits ^= low
    return tuple(out)


def size(bits: int) -> int:
    return bits.bit_count()


def to_string(bits: int) -> str:
    """The cpuset String() form: "0-3,8" (empty set = "")."""
    return format_cpulist(ids_of(bits))


def parse(text: str) -> int:
    """cpuset.Parse; ValueError with Go's strconv wording on a bad element."""
    try:
        return bits_of(parse_cpulist(text))
    except ValueError as err:
        bad = text.strip()
        raise ValueError(f'strconv.Atoi: parsing "{bad}": invalid syntax') from err
