"""PCI facts a GPU probe needs: bus id normalisation and which vendor/class pairs are GPUs.

Follows the sysfs PCI ABI (Linux Documentation/ABI/testing/sysfs-bus-pci) and the PCI class codes
of the PCI-SIG code and ID assignment specification.
"""

from __future__ import annotations

import re

VENDOR_NVIDIA = 0x10DE
VENDOR_AMD = 0x1002

#: (vendor, top 16 bits of the 24-bit class) pairs that are GPUs. 0x0300 VGA, 0x0302 3D controller
#: (datacenter NVIDIA GPUs), 0x0380 other display (AMD Instinct MI100/MI200), 0x1200 processing
#: accelerator (AMD Instinct MI300 series). NVSwitches and audio functions have other classes.
GPU_CLASSES: dict[int, frozenset[int]] = {
    VENDOR_NVIDIA: frozenset({0x0300, 0x0302}),
    VENDOR_AMD: frozenset({0x0300, 0x0302, 0x0380, 0x1200}),
}

VENDOR_NAMES = {VENDOR_NVIDIA: "nvidia", VENDOR_AMD: "amd"}
RESOURCE_NAMES = {VENDOR_NVIDIA: "nvidia.com/gpu", VENDOR_AMD: "amd.com/gpu"}

_BUS_ID = re.compile(
    r"^(?:(?P<domain>[0-9a-fA-F]{1,8}):)?(?P<bus>[0-9a-fA-F]{1,2}):"
    r"(?P<dev>[0-9a-fA-F]{1,2})\.(?P<fn>[0-7])$"
)


def normalize_bus_id(text: str) -> str:
    """sysfs form of a PCI address: "00000000:1B:00.0" (NVML) and "1b:00.0" become "0000:1b:00.0".

    The domain keeps at least 4 hex digits (wider domains such as Intel VMD's 10000 stay wide).
    """
    match = _BUS_ID.match(text.strip())
    if match is None:
        raise ValueError(f"not a PCI bus id: {text.strip()!r}")
    domain = int(match["domain"] or "0", 16)
    return f"{domain:04x}:{int(match['bus'], 16):02x}:{int(match['dev'], 16):02x}.{match['fn']}"


def is_gpu(vendor: int, pci_class: int) -> bool:
    """Whether a PCI function with this vendor id and 24-bit class code is a GPU."""
    return (pci_class >> 8) in GPU_CLASSES.get(vendor, frozenset())
