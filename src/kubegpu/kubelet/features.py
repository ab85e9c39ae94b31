"""Kubelet feature gates and policy-option maturity per Kubernetes minor release (1.32 to 1.35).

Follows kubernetes v1.35 pkg/features/kube_features.go and the option maturity sets in
pkg/kubelet/cm/{cpumanager,topologymanager}/policy_options.go of releases 1.32-1.35.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from kubegpu.errors import InputError

SUPPORTED_VERSIONS = ("1.32", "1.33", "1.34", "1.35")
DEFAULT_VERSION = "1.35"

CPU_ALPHA_GATE = "CPUManagerPolicyAlphaOptions"
CPU_BETA_GATE = "CPUManagerPolicyBetaOptions"
TM_ALPHA_GATE = "TopologyManagerPolicyAlphaOptions"
TM_BETA_GATE = "TopologyManagerPolicyBetaOptions"
POD_LEVEL_RESOURCES = "PodLevelResources"

# Gate defaults: the alpha-option groups are off, the beta-option groups on (they never go GA).
_GATE_DEFAULTS = {
    CPU_ALPHA_GATE: False,
    CPU_BETA_GATE: True,
    TM_ALPHA_GATE: False,
    TM_BETA_GATE: True,
}

# option -> maturity per release, in SUPPORTED_VERSIONS order.
CPU_OPTION_MATURITY: Mapping[str, tuple[str, str, str, str]] = {
    "full-pcpus-only": ("beta", "stable", "stable", "stable"),
    "distribute-cpus-across-numa": ("alpha", "beta", "beta", "beta"),
    "align-by-socket": ("alpha", "alpha", "alpha", "alpha"),
    "distribute-cpus-across-cores": ("alpha", "alpha", "alpha", "alpha"),
    "strict-cpu-reservation": ("alpha", "beta", "beta", "stable"),
    "prefer-align-cpus-by-uncorecache": ("alpha", "alpha", "beta", "beta"),
}
TM_OPTION_MATURITY: Mapping[str, tuple[str, str, str, str]] = {
    "prefer-closest-numa-nodes": ("stable", "stable", "stable", "stable"),
    "max-allowable-numa-nodes": ("beta", "beta", "beta", "stable"),
}


@dataclass(frozen=True)
class FeatureGates:
    """The release modelled and explicit gate settings (others take their defaults)."""

    version: str = DEFAULT_VERSION
    gates: Mapping[str, bool] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.version not in SUPPORTED_VERSIONS:
            raise InputError(
                f"kubernetes version {self.version!r} is not modelled (supported: {', '.join(SUPPORTED_VERSIONS)})"
            )

    def enabled(self, gate: str) -> bool:
        if gate in self.gates:
            return bool(self.gates[gate])
        if gate == POD_LEVEL_RESOURCES:  # alpha (off) in 1.32-1.33, beta (on) from 1.34
            return SUPPORTED_VERSIONS.index(self.version) >= 2
        return _GATE_DEFAULTS.get(gate, False)

    def maturity(self, table: Mapping[str, tuple[str, str, str, str]], option: str) -> str | None:
        """'alpha', 'beta' or 'stable' for this release, None for an unknown option."""
        row = table.get(option)
        if row is None:
            return None
        return row[SUPPORTED_VERSIONS.index(self.version)]


def parse_go_bool(value: str) -> bool:
    """strconv.ParseBool: 1 t T TRUE true True / 0 f F FALSE false False; else ValueError."""
    if value in ("1", "t", "T", "TRUE", "true", "True"):
        return True
    if value in ("0", "f", "F", "FALSE", "false", "False"):
        return False
    raise ValueError(f'strconv.ParseBool: parsing "{value}": invalid syntax')
