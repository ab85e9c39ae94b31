"""The one accelerator registry: which extended resources are accelerators (GPUs, MIG slices, TPUs, ...).

Names are those the vendors' device plugins advertise; lint's `accelerator-resources` setting replaces the
list and `extend-accelerator-resources` adds to it, for every command that reads the setting.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache

# An entry is an exact resource name, or a prefix when it ends in '-' or '/'.
DEFAULT_ACCELERATOR_RESOURCES: tuple[str, ...] = (
    "nvidia.com/gpu",  # NVIDIA device plugin
    "nvidia.com/mig-",  # MIG slices with the mixed strategy (nvidia.com/mig-1g.10gb, ...)
    "nvidia.com/gpu.shared",  # time-slicing / MPS with renameByDefault
    "nvidia.com/pgpu",  # NVIDIA sandbox (Kata, confidential containers) device plugin: passthrough GPUs, its default
    "amd.com/gpu",  # AMD device plugin
    "gpu.intel.com/",  # Intel device plugin (gpu.intel.com/i915, gpu.intel.com/xe)
    "habana.ai/gaudi",  # Intel Gaudi (Habana) device plugin
    "aws.amazon.com/neuron",  # AWS Neuron device plugin (devices, cores)
    "aws.amazon.com/neuroncore",
    "aws.amazon.com/neurondevice",
    "google.com/tpu",  # GKE TPUs
)
# HAMi virtual GPUs: device memory and core share of a nvidia.com/gpu; accelerators, never device counts.
HAMI_RESOURCES: tuple[str, ...] = ("nvidia.com/gpumem", "nvidia.com/gpucores", "nvidia.com/gpumem-percentage")


@dataclass(frozen=True)
class AcceleratorRegistry:
    """A configured list of accelerator resources (HAMi's share resources always count)."""

    resources: tuple[str, ...] = DEFAULT_ACCELERATOR_RESOURCES
    # The list split once into names and prefixes: lint asks about every resource entry of every container.
    _names: frozenset[str] = field(init=False, repr=False, compare=False)
    _prefixes: tuple[str, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_names", frozenset((*self.resources, *HAMI_RESOURCES)))
        object.__setattr__(self, "_prefixes", tuple(entry for entry in self.resources if entry.endswith(("-", "/"))))

    @classmethod
    def of(cls, resources: Iterable[str] | None) -> AcceleratorRegistry:
        """The registry of a configured list; None (nothing configured) or the default list gives the default one."""
        if resources is None:
            return DEFAULT_REGISTRY
        listed = tuple(resources)
        return DEFAULT_REGISTRY if listed == DEFAULT_ACCELERATOR_RESOURCES else cls(listed)

    def is_accelerator(self, name: str) -> bool:
        """True when `name` is an accelerator resource: an exact entry or under a prefix entry (as `is_accelerator`)."""
        return name in self._names or name.startswith(self._prefixes)

    def counts_devices(self, name: str) -> bool:
        """True for an accelerator whose quantity is a number of devices (not HAMi memory or cores)."""
        return name not in HAMI_RESOURCES and self.is_accelerator(name)


def is_accelerator(name: str, resources: Iterable[str] = DEFAULT_ACCELERATOR_RESOURCES) -> bool:
    """True when a resource name is an accelerator: an exact entry, or a prefix entry ending in '-' or '/'
    (the registry of the list answers)."""
    return _registry(tuple(resources)).is_accelerator(name)


@lru_cache(maxsize=64)  # a run configures one list, or a few
def _registry(resources: tuple[str, ...]) -> AcceleratorRegistry:
    return AcceleratorRegistry.of(resources)


DEFAULT_REGISTRY = AcceleratorRegistry()
