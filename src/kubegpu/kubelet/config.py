"""The KubeletConfiguration fields that drive admission, with the kubelet's static validation.

Follows kubernetes v1.35 pkg/kubelet/apis/config/validation/{validation.go,
validation_reserved_memory.go} and the v1beta1 defaults (policies none/None/none, scope
container, evictionHard memory.available 100Mi when evictionHard is omitted, maxPods 110).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kubegpu.errors import InputError, ModelError, QuantityError
from kubegpu.kubelet import validation
from kubegpu.kubelet.cpumanager import cpuset
from kubegpu.kubelet.eviction import hard_thresholds, memory_threshold
from kubegpu.kubelet.features import DEFAULT_VERSION, SUPPORTED_VERSIONS, FeatureGates
from kubegpu.kubelet.memorymanager.reserved import Amount, ReservedMemory
from kubegpu.kubelet.validation import API_VERSIONS, KIND, is_kubelet_configuration
from kubegpu.manifests import load_text, read_regular
from kubegpu.manifests.sources import DEFAULT_MAX_BYTES
from kubegpu.topology.model import NodeTopology
from kubegpu.units.quantity import parse_quantity

_BINARY = ("Ki", "Mi", "Gi", "Ti", "Pi", "Ei")
__all__ = ["API_VERSIONS", "KIND", "KubeletConfig", "KubeletStartupError", "is_kubelet_configuration"]


class KubeletStartupError(ModelError):
    """The kubelet would refuse to start with this configuration on this node."""

    def __init__(self, component: str, message: str, file: str | None = None) -> None:
        super().__init__(message, file=file)
        self.component = component


def amount(text: object, where: str, source: str) -> Amount:
    """A quantity as exact bytes/units, remembering binary vs decimal format."""
    try:
        q = parse_quantity(text)
    except QuantityError as err:
        raise InputError(f"{where}: {err.message}", file=source) from err
    return Amount(q.ceil, q.suffix in _BINARY)


DEFAULTS_SOURCE = "<kubelet defaults>"  # the source of a configuration nobody gave


@dataclass(frozen=True)
class KubeletConfig:
    """Admission-relevant KubeletConfiguration fields (see docs/dev/kubelet-api.md)."""

    cpu_manager_policy: str = "none"
    cpu_manager_policy_options: Mapping[str, str] = field(default_factory=dict)
    memory_manager_policy: str = "None"
    reserved_memory: tuple[ReservedMemory, ...] = ()
    topology_manager_policy: str = "none"
    topology_manager_scope: str = "container"
    topology_manager_policy_options: Mapping[str, str] = field(default_factory=dict)
    reserved_system_cpus: str = ""
    kube_reserved: Mapping[str, str] = field(default_factory=dict)
    system_reserved: Mapping[str, str] = field(default_factory=dict)
    eviction_hard: Mapping[str, str] | None = None
    kube_reserved_cgroup: str = ""
    system_reserved_cgroup: str = ""
    feature_gates: Mapping[str, bool] = field(default_factory=dict)
    max_pods: int = 110
    merge_default_eviction_settings: bool = False
    version: str = DEFAULT_VERSION
    source: str = "<kubelet-config>"

    @classmethod
    def default_for(cls, node: NodeTopology | None = None, version: str = DEFAULT_VERSION) -> KubeletConfig:
        """The kubelet's defaults: no CPU, memory or topology manager policies."""
        del node
        return cls(version=version, source=DEFAULTS_SOURCE)

    @property
    def is_defaults(self) -> bool:
        """No configuration was given: the kubelet's defaults are modelled."""
        return self.source == DEFAULTS_SOURCE

    @property
    def gates(self) -> FeatureGates:
        return FeatureGates(self.version, dict(self.feature_gates))

    @classmethod
    def from_dict(
        cls, data: Mapping[str, Any], source: str = "<kubelet-config>", version: str = DEFAULT_VERSION
    ) -> KubeletConfig:
        """Read a KubeletConfiguration mapping and run the kubelet's static validation."""
        if not isinstance(data, Mapping):
            raise InputError("a KubeletConfiguration must be a mapping", file=source)
        kind = data.get("kind")
        if kind is not None and kind != KIND:
            raise InputError(f"expected kind {KIND}, found {kind!r}", file=source)
        if version not in SUPPORTED_VERSIONS:
            raise InputError(f"kubernetes version {version!r} is not modelled", file=source)
        reserved = tuple(_reserved_memory(data.get("reservedMemory"), source))
        config = cls(
            cpu_manager_policy=_str(data, "cpuManagerPolicy", "none", source),
            cpu_manager_policy_options=_str_map(data, "cpuManagerPolicyOptions", source),
            memory_manager_policy=_str(data, "memoryManagerPolicy", "None", source),
            reserved_memory=reserved,
            topology_manager_policy=_str(data, "topologyManagerPolicy", "none", source),
            topology_manager_scope=_str(data, "topologyManagerScope", "container", source),
            topology_manager_policy_options=_str_map(data, "topologyManagerPolicyOptions", source),
            reserved_system_cpus=_str(data, "reservedSystemCPUs", "", source),
            kube_reserved=_str_map(data, "kubeReserved", source),
            system_reserved=_str_map(data, "systemReserved", source),
            eviction_hard=(None if data.get("evictionHard") is None else _str_map(data, "evictionHard", source)),
            kube_reserved_cgroup=_str(data, "kubeReservedCgroup", "", source),
            system_reserved_cgroup=_str(data, "systemReservedCgroup", "", source),
            feature_gates=_gates(data.get("featureGates"), source),
            max_pods=_int(data, "maxPods", 110, source),
            merge_default_eviction_settings=data.get("mergeDefaultEvictionSettings") is True,
            version=version,
            source=source,
        )
        errors = config.validation_errors()
        if errors:
            message = errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"
            raise KubeletStartupError("kubelet config validation", message, file=source)
        return config

    def validation_errors(self) -> list[str]:
        """ValidateKubeletConfiguration's messages for the fields modelled here (kubegpu.kubelet.validation)."""
        return validation.validation_errors(self.validated_fields())

    def validated_fields(self) -> dict[str, Any]:
        """The fields ValidateKubeletConfiguration reads, as a KubeletConfiguration mapping of the values read."""
        return {
            "topologyManagerPolicy": self.topology_manager_policy,
            "topologyManagerScope": self.topology_manager_scope,
            "reservedSystemCPUs": self.reserved_system_cpus,
            "kubeReservedCgroup": self.kube_reserved_cgroup,
            "systemReservedCgroup": self.system_reserved_cgroup,
            "reservedMemory": [{"numaNode": e.numa_node, "limits": dict(e.limits)} for e in self.reserved_memory],
        }

    # -- derived values used at start-up ---------------------------------------------------
    def reserved_cpus(self, node: NodeTopology) -> int:
        """The reservedSystemCPUs bitset; KubeletStartupError unless they are node CPUs."""
        if not self.reserved_system_cpus:
            return 0
        bits = cpuset.parse(self.reserved_system_cpus)
        online = cpuset.bits_of(c.id for c in node.cpus)
        if bits & ~online:
            raise KubeletStartupError(
                "kubelet",
                f"reserved-cpus: {self.reserved_system_cpus} is not a subset of online-cpus: "
                f"{cpuset.to_string(online)}",
                file=self.source,
            )
        return bits

    def effective_reserved(self) -> tuple[dict[str, str], dict[str, str]]:
        """(kubeReserved, systemReserved) after reservedSystemCPUs overwrote their CPU parts."""
        kube, system = dict(self.kube_reserved), dict(self.system_reserved)
        if self.reserved_system_cpus:
            try:
                n = cpuset.size(cpuset.parse(self.reserved_system_cpus))
            except ValueError:
                n = 0
            if n > 0:
                kube.pop("cpu", None)
                system["cpu"] = str(n)
        return kube, system

    def eviction_thresholds(self) -> Mapping[str, str]:
        """evictionHard as the kubelet uses it (see kubegpu.kubelet.eviction)."""
        return hard_thresholds(self.eviction_hard, self.merge_default_eviction_settings, self.version)

    def allocatable_reservation(self, capacity: Mapping[str, Amount]) -> dict[str, Amount]:
        """GetNodeAllocatableReservation: system + kube reserved + hard eviction, non-zero."""
        kube, system = self.effective_reserved()
        eviction: dict[str, Amount] = {}
        if "memory" in capacity:
            threshold = memory_threshold(
                self.eviction_hard, self.merge_default_eviction_settings, self.version, capacity["memory"].value
            )
            if threshold.bytes is None:
                raise InputError(f"evictionHard memory.available: {threshold.error}", file=self.source)
            if threshold.bytes:
                eviction["memory"] = Amount(threshold.bytes, True)
        out: dict[str, Amount] = {}
        for resource in capacity:
            value = Amount(0)
            for table in (system, kube):
                if resource in table:
                    value = value + amount(table[resource], f"reserved {resource}", self.source)
            if resource in eviction:
                value = value + eviction[resource]
            if value.value != 0:
                out[resource] = value
        return out


def _reserved_memory(raw: Any, source: str) -> list[ReservedMemory]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise InputError("reservedMemory must be a list", file=source)
    out: list[ReservedMemory] = []
    for i, entry in enumerate(raw):
        if not isinstance(entry, Mapping) or "numaNode" not in entry:
            raise InputError(f"reservedMemory[{i}] needs numaNode and limits", file=source)
        try:
            numa = int(entry["numaNode"])
        except (TypeError, ValueError, OverflowError) as err:  # OverflowError: .inf
            raise InputError(f"reservedMemory[{i}].numaNode must be an integer", file=source) from err
        limits = entry.get("limits") or {}
        if not isinstance(limits, Mapping):
            raise InputError(f"reservedMemory[{i}].limits must be a mapping", file=source)
        out.append(
            ReservedMemory(
                numa,
                {str(k): amount(v, f"reservedMemory[{i}].limits.{k}", source) for k, v in limits.items()},
            )
        )
    return out


def _str(data: Mapping[str, Any], key: str, default: str, source: str) -> str:
    value = data.get(key)
    if value is None:
        return default
    if not isinstance(value, str | int | float) or isinstance(value, bool):
        raise InputError(f"{key} must be a string", file=source)
    return str(value)


def _int(data: Mapping[str, Any], key: str, default: int, source: str) -> int:
    value = data.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"{key} must be an integer", file=source)
    return value


def _str_map(data: Mapping[str, Any], key: str, source: str) -> dict[str, str]:
    value = data.get(key)
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InputError(f"{key} must be a mapping", file=source)
    out: dict[str, str] = {}
    for k, v in value.items():
        if isinstance(v, bool):
            out[str(k)] = "true" if v else "false"
        elif isinstance(v, str | int | float):
            out[str(k)] = str(v)
        else:
            raise InputError(f"{key}.{k} must be a string", file=source)
    return out


def _gates(raw: Any, source: str) -> dict[str, bool]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping) or not all(isinstance(v, bool) for v in raw.values()):
        raise InputError("featureGates must map gate names to true/false", file=source)
    return {str(k): bool(v) for k, v in raw.items()}


def read_kubelet_config_data(path: str) -> Mapping[str, Any]:
    """The one KubeletConfiguration document of a YAML or JSON file, as loaded (the reader every command
    uses); InputError naming the file (and line) when it cannot be read, has none, or has several."""
    try:
        text = read_regular(Path(path), DEFAULT_MAX_BYTES).decode("utf-8")  # never a FIFO or a device
    except (OSError, UnicodeDecodeError) as err:
        raise InputError(f"cannot read the kubelet configuration: {err}", file=path) from err
    loaded = load_text(path, text)
    fatal = [p for p in loaded.problems if p.fatal]
    if fatal:
        raise InputError(fatal[0].message, file=path, line=fatal[0].line)
    found = [doc for doc in loaded.documents if is_kubelet_configuration(doc.kind, doc.api_version)]
    if not found:
        raise InputError(f"no {KIND} ({API_VERSIONS[0]}) in this file", file=path)
    if len(found) > 1:
        raise InputError(
            f"{len(found)} {KIND} documents in this file; give exactly one", file=path, line=found[1].location().line
        )
    data = found[0].data
    assert isinstance(data, Mapping)  # is_kubelet_configuration read a kind from it
    return data


def read_kubelet_config(path: str, version: str = DEFAULT_VERSION) -> KubeletConfig:
    """Read and validate the KubeletConfiguration in `path` (see read_kubelet_config_data)."""
    return KubeletConfig.from_dict(read_kubelet_config_data(path), source=path, version=version)
