"""Topology Manager policy options: prefer-closest-numa-nodes, max-allowable-numa-nodes.

Follows kubernetes v1.35 pkg/kubelet/cm/topologymanager/policy_options.go (availability by
maturity and gate, Go boolean/integer parsing, minimum 8 NUMA nodes).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kubegpu.errors import ModelError
from kubegpu.kubelet.features import (
    TM_ALPHA_GATE,
    TM_BETA_GATE,
    TM_OPTION_MATURITY,
    FeatureGates,
    parse_go_bool,
)

PREFER_CLOSEST_NUMA_NODES = "prefer-closest-numa-nodes"
MAX_ALLOWABLE_NUMA_NODES = "max-allowable-numa-nodes"
DEFAULT_MAX_ALLOWABLE_NUMA_NODES = 8


@dataclass(frozen=True)
class TopologyManagerOptions:
    """Parsed `topologyManagerPolicyOptions`."""

    prefer_closest_numa: bool = False
    max_allowable_numa_nodes: int = DEFAULT_MAX_ALLOWABLE_NUMA_NODES


def check_option_available(
    option: str,
    gates: FeatureGates,
    extra: Mapping[str, str] | None = None,
) -> None:
    """Raise ModelError (kubelet start-up error) when the option is unknown or gated off.

    `extra` maps further option names to a maturity (the Go tests inject such options).
    """
    maturity = (extra or {}).get(option) or gates.maturity(TM_OPTION_MATURITY, option)
    if maturity is None:
        raise ModelError(f'unknown Topology Manager Policy option: "{option}"')
    if maturity == "alpha" and not gates.enabled(TM_ALPHA_GATE):
        raise ModelError(f'topology manager policy alpha-level options not enabled, but option "{option}" provided')
    if maturity == "beta" and not gates.enabled(TM_BETA_GATE):
        raise ModelError(f'topology manager policy beta-level options not enabled, but option "{option}" provided')


def parse_options(
    raw: Mapping[str, str] | None,
    gates: FeatureGates | None = None,
    extra: Mapping[str, str] | None = None,
) -> TopologyManagerOptions:
    """Parse the option map as NewPolicyOptions does; errors stop the kubelet."""
    gates = gates or FeatureGates()
    prefer, max_nodes = False, DEFAULT_MAX_ALLOWABLE_NUMA_NODES
    for name, value in sorted((raw or {}).items()):
        check_option_available(name, gates, extra)
        if name == PREFER_CLOSEST_NUMA_NODES:
            try:
                prefer = parse_go_bool(str(value))
            except ValueError as err:
                raise ModelError(f'bad value for option "{name}": {err}') from err
        elif name == MAX_ALLOWABLE_NUMA_NODES:
            try:
                max_nodes = int(str(value), 10)
            except ValueError as err:
                raise ModelError(
                    f'unable to convert policy option to integer "{name}": '
                    f'strconv.Atoi: parsing "{value}": invalid syntax'
                ) from err
            if max_nodes < DEFAULT_MAX_ALLOWABLE_NUMA_NODES:
                raise ModelError(
                    f'the minimum value of "{name}" should not be less than {DEFAULT_MAX_ALLOWABLE_NUMA_NODES}'
                )
    return TopologyManagerOptions(prefer, max_nodes)


def option_available(option: str, gates: FeatureGates, extra: Mapping[str, str] | None = None) -> bool:
    try:
        check_option_available(option, gates, extra)
    except ModelError:
        return False
    return True
