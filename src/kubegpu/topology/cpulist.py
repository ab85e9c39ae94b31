"""Linux CPU list and mask formats ("0-3,8,10-11", "ff,00000001"): parse and format exactly.

sysfs (cpulist, local_cpulist, core_cpus_list), /proc/self/status and cgroup cpuset files all use
these forms (Linux Documentation/admin-guide/cputopology.rst, cgroup-v2.rst). Ids are bounded by the
largest CONFIG_NR_CPUS any Linux build accepts (arch/x86/Kconfig NR_CPUS_RANGE_END: 8192 with
CPUMASK_OFFSTACK; arm64 and powerpc allow no more), so a hostile "0-4294967295" is refused, never built.
"""

from __future__ import annotations

from collections.abc import Iterable

MAX_CPUS = 8192
"""The kernel's largest CONFIG_NR_CPUS (x86_64 NR_CPUS_RANGE_END): CPU ids run from 0 to MAX_CPUS - 1."""


def _check_id(value: int, item: str) -> None:
    if value < 0:
        raise ValueError(f"negative CPU id {item!r}")
    if value >= MAX_CPUS:
        raise ValueError(f"CPU id in {item!r} is above {MAX_CPUS - 1}, the largest a Linux kernel supports")


def parse_cpulist(text: str) -> tuple[int, ...]:
    """The sorted ids in a list such as "0-3,8,10-11" (empty text = no CPUs); ValueError if bad."""
    ids: set[int] = set()
    body = text.strip()
    if not body:
        return ()
    for part in body.split(","):
        part = part.strip()
        if not part:
            raise ValueError(f"empty item in CPU list {text.strip()!r}")
        if "-" in part:
            lo_text, _, hi_text = part.partition("-")
            lo, hi = int(lo_text), int(hi_text)  # int() rejects the "0-15:2/4" boot-option form
            if lo < 0 or hi < lo:
                raise ValueError(f"bad CPU range {part!r}")
            _check_id(hi, part)  # before building the range: its size is then at most MAX_CPUS
            ids.update(range(lo, hi + 1))
        else:
            value = int(part)
            _check_id(value, part)
            ids.add(value)
    return tuple(sorted(ids))


def format_cpulist(ids: Iterable[int]) -> str:
    """The kernel's compact form of a set of ids: sorted, runs of two or more joined with '-'."""
    values = sorted(set(ids))
    parts: list[str] = []
    i = 0
    while i < len(values):
        j = i
        while j + 1 < len(values) and values[j + 1] == values[j] + 1:
            j += 1
        parts.append(str(values[i]) if i == j else f"{values[i]}-{values[j]}")
        i = j + 1
    return ",".join(parts)


def parse_cpumask(text: str) -> tuple[int, ...]:
    """The ids set in a hex mask such as "ff,00000001" (32-bit words, most significant first)."""
    digits = text.strip().replace(",", "").lstrip("0")
    if not digits:
        return ()
    if len(digits) > MAX_CPUS // 4:
        raise ValueError(f"CPU mask has bits above {MAX_CPUS - 1}, the largest CPU id a Linux kernel supports")
    value = int(digits, 16)
    return tuple(i for i in range(value.bit_length()) if value >> i & 1)


def format_cpumask(ids: Iterable[int]) -> str:
    """The kernel's hex mask form: comma-separated 32-bit words, most significant first."""
    value = 0
    for i in ids:
        value |= 1 << i
    words = max(1, (value.bit_length() + 31) // 32)
    return ",".join(f"{(value >> (32 * w)) & 0xFFFFFFFF:08x}" for w in reversed(range(words)))
