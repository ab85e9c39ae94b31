"""Static CPU manager policy options: availability by maturity, parsing and compatibility.

Follows kubernetes v1.35 pkg/kubelet/cm/cpumanager/policy_options.go (NewStaticPolicyOptions,
CheckPolicyOptionAvailable, ValidateStaticPolicyOptions).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kubegpu.errors import ModelError
from kubegpu.kubelet.features import (
    CPU_ALPHA_GATE,
    CPU_BETA_GATE,
    CPU_OPTION_MATURITY,
    FeatureGates,
    parse_go_bool,
)

FULL_PCPUS_ONLY = "full-pcpus-only"
DISTRIBUTE_CPUS_ACROSS_NUMA = "distribute-cpus-across-numa"
ALIGN_BY_SOCKET = "align-by-socket"
DISTRIBUTE_CPUS_ACROSS_CORES = "distribute-cpus-across-cores"
STRICT_CPU_RESERVATION = "strict-cpu-reservation"
PREFER_ALIGN_BY_UNCORE_CACHE = "prefer-align-cpus-by-uncorecache"


@dataclass(frozen=True)
class StaticPolicyOptions:
    """Parsed `cpuManagerPolicyOptions` for the static policy."""

    full_physical_cpus_only: bool = False
    distribute_cpus_across_numa: bool = False
    align_by_socket: bool = False
    distribute_cpus_across_cores: bool = False
    strict_cpu_reservation: bool = False
    prefer_align_by_uncore_cache: bool = False


_FIELDS = {
    FULL_PCPUS_ONLY: "full_physical_cpus_only",
    DISTRIBUTE_CPUS_ACROSS_NUMA: "distribute_cpus_across_numa",
    ALIGN_BY_SOCKET: "align_by_socket",
    DISTRIBUTE_CPUS_ACROSS_CORES: "distribute_cpus_across_cores",
    STRICT_CPU_RESERVATION: "strict_cpu_reservation",
    PREFER_ALIGN_BY_UNCORE_CACHE: "prefer_align_by_uncore_cache",
}

# Pairs of options the static policy refuses together (NewStaticPolicyOptions).
INCOMPATIBLE_OPTIONS = (
    (FULL_PCPUS_ONLY, DISTRIBUTE_CPUS_ACROSS_CORES),
    (DISTRIBUTE_CPUS_ACROSS_NUMA, DISTRIBUTE_CPUS_ACROSS_CORES),
    (PREFER_ALIGN_BY_UNCORE_CACHE, DISTRIBUTE_CPUS_ACROSS_CORES),
    (PREFER_ALIGN_BY_UNCORE_CACHE, DISTRIBUTE_CPUS_ACROSS_NUMA),
)


def check_option_available(option: str, gates: FeatureGates) -> None:
    """Raise the kubelet's start-up error for an unknown or gated-off option."""
    maturity = gates.maturity(CPU_OPTION_MATURITY, option)
    if maturity is None:
        raise ModelError(f'unknown CPU Manager Policy option: "{option}"')
    if maturity == "alpha" and not gates.enabled(CPU_ALPHA_GATE):
        raise ModelError(f'CPU Manager Policy Alpha-level Options not enabled, but option "{option}" provided')
    if maturity == "beta" and not gates.enabled(CPU_BETA_GATE):
        raise ModelError(f'CPU Manager Policy Beta-level Options not enabled, but option "{option}" provided')


def option_available(option: str, gates: FeatureGates) -> bool:
    try:
        check_option_available(option, gates)
    except ModelError:
        return False
    return True


def parse_options(raw: Mapping[str, str] | None, gates: FeatureGates | None = None) -> StaticPolicyOptions:
    """NewStaticPolicyOptions: availability, Go booleans, incompatible pairs."""
    gates = gates or FeatureGates()
    values: dict[str, bool] = {}
    for name, value in sorted((raw or {}).items()):
        check_option_available(name, gates)
        try:
            values[_FIELDS[name]] = parse_go_bool(str(value))
        except ValueError as err:
            raise ModelError(f'bad value for option "{name}": {err}') from err
    opts = StaticPolicyOptions(**values)
    for first, second in INCOMPATIBLE_OPTIONS:
        if getattr(opts, _FIELDS[first]) and getattr(opts, _FIELDS[second]):
            raise ModelError(f"static policy options {first} and {second} can not be used at the same time")
    return opts


def validate_for_machine(opts: StaticPolicyOptions, num_sockets: int, num_numa_nodes: int, tm_policy: str) -> None:
    """ValidateStaticPolicyOptions: align-by-socket vs single-numa-node and the socket layout."""
    if opts.align_by_socket:
        if tm_policy == "single-numa-node":
            raise ModelError(
                "Topolgy manager single-numa-node policy is incompatible with CPUManager align-by-socket policy option"
            )
        if num_sockets > num_numa_nodes:
            raise ModelError(
                "Align by socket is not compatible with hardware where number of sockets are more than number of NUMA"
            )
