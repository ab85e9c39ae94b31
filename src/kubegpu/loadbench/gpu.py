"""The optional host-to-device stage: copy rate from pinned and from pageable host memory to the first CUDA GPU.

Needs torch with CUDA; otherwise the stage is skipped with the reason. Pinned memory is page-locked
(`torch.empty(..., pin_memory=True)`), which lets the copy engine DMA directly; pageable copies are staged by the
driver through its own pinned buffers.
"""

from __future__ import annotations

import importlib.util
import time
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class GpuStage:
    """Host-to-device GB/s from pinned and pageable memory, or why the stage did not run."""

    device: str | None
    pinned_gbps: float | None
    pageable_gbps: float | None
    bytes: int
    skipped: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "device": self.device,
            "pinned_gbps": self.pinned_gbps,
            "pageable_gbps": self.pageable_gbps,
            "bytes": self.bytes,
            "skipped": self.skipped,
        }


def host_to_device(nbytes: int = 1 << 30, repeats: int = 3) -> GpuStage:
    """Median H2D rate for `nbytes` copies, pinned and pageable; a skipped stage without torch or CUDA."""
    if importlib.util.find_spec("torch") is None:
        return GpuStage(None, None, None, 0, "torch is not installed")
    import torch

    if not torch.cuda.is_available():
        return GpuStage(None, None, None, 0, "torch finds no CUDA device")
    device = torch.device("cuda:0")
    target = torch.empty(nbytes, dtype=torch.uint8, device=device)
    rates: dict[bool, float] = {}
    for pinned in (True, False):
        source = torch.ones(nbytes, dtype=torch.uint8, pin_memory=pinned)
        target.copy_(source, non_blocking=pinned)  # warm-up: context, allocator, driver staging buffers
        torch.cuda.synchronize(device)
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            target.copy_(source, non_blocking=pinned)
            torch.cuda.synchronize(device)
            times.append(time.perf_counter() - start)
        rates[pinned] = nbytes / sorted(times)[len(times) // 2] / 1e9
        del source
    return GpuStage(torch.cuda.get_device_name(device), rates[True], rates[False], nbytes)
