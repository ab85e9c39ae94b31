"""A CPU list or mask naming ids past the kernel's largest CONFIG_NR_CPUS is refused before anything is built."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest

from kubegpu.errors import InputError
from kubegpu.lint import LintConfig, lint_text
from kubegpu.probe.container import _list
from kubegpu.topology.cpulist import MAX_CPUS, parse_cpulist, parse_cpumask

HOSTILE = ["0-99999999", "0-4294967295", "8192", "0-8192", "1,3,0-18446744073709551615", "9" * 4000]


@pytest.mark.parametrize("text", HOSTILE)
def test_ranges_past_the_kernel_limit_are_refused_without_building_them(text: str) -> None:
    tracemalloc.start()
    try:
        with pytest.raises(ValueError):
            parse_cpulist(text)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1_000_000


def test_the_largest_id_is_accepted() -> None:
    assert parse_cpulist(f"0-{MAX_CPUS - 1}") == tuple(range(MAX_CPUS))
    assert parse_cpumask("8" + "0" * (MAX_CPUS // 4 - 1)) == (MAX_CPUS - 1,)
    assert parse_cpumask("0" * 10_000 + "1") == (0,)


def test_masks_past_the_limit_are_refused() -> None:
    with pytest.raises(ValueError, match="8191"):
        parse_cpumask("1" + "0" * (MAX_CPUS // 4))
    with pytest.raises(ValueError):
        parse_cpumask("f" * 1_000_000)


@pytest.mark.parametrize("listed", ['"0-4294967295"', '"0-99999999"', "99999999999999999999"])
def test_lint_reports_a_hostile_reserved_cpu_list_as_invalid(listed: str) -> None:
    text = (
        "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
        f"cpuManagerPolicy: static\nreservedSystemCPUs: {listed}\n"
    )
    findings = lint_text("kubelet.yaml", text, LintConfig()).findings
    bad = [f for f in findings if f.location.dotted_path == "reservedSystemCPUs"]
    assert bad and "is not a CPU list" in bad[0].message and "8191" in bad[0].message


def test_probe_reports_a_hostile_cpuset_file_as_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="8191"):
        _list("0-4294967295", tmp_path / "cpuset.cpus.effective")
