"""One loadbench run: the storage limit, then every loader over the thread counts, cold then warm, within a budget.

Cold runs drop the files' page cache first and check with mincore that it worked; a run is reported as a rate
(GB/s) and as a fraction of the storage limit measured in the same run.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kubegpu.loadbench import cache
from kubegpu.loadbench.gpu import GpuStage, host_to_device
from kubegpu.loadbench.loaders import Loader, all_loaders, measure
from kubegpu.loadbench.shards import Shard
from kubegpu.loadbench.storage import DIRECT_THREADS, StorageLimit, parallel_read, storage_limit

DEFAULT_THREADS = (1, 4, 16)
EVICTION_TOLERANCE = 0.05  # a cold run may start with at most 5 % of the pages cached
STORAGE_SHARE = 0.2  # of the budget, for the storage-limit read


@dataclass(frozen=True)
class Options:
    threads: tuple[int, ...] = DEFAULT_THREADS
    methods: tuple[str, ...] | None = None  # None: every loader
    repeats: int = 1
    warm: bool = True
    budget_seconds: float | None = None
    direct_threads: int = DIRECT_THREADS
    gpu: bool = True


@dataclass(frozen=True)
class Run:
    """One loader at one thread count on a cold or warm cache (median of the repeats)."""

    method: str
    threads: int
    cache: str  # "cold" or "warm"
    bytes: int
    seconds: float
    faults: int
    cached_before: float | None  # fraction of pages resident when the run started (None: unknown)
    partial: bool = False  # stopped at its share of the budget
    note: str = ""

    @property
    def gbps(self) -> float:
        return self.bytes / self.seconds / 1e9 if self.seconds > 0 else 0.0


@dataclass(frozen=True)
class Skipped:
    method: str
    threads: int | None
    cache: str | None
    reason: str


@dataclass(frozen=True)
class Result:
    files: tuple[str, ...]
    total_bytes: int
    tensors: int
    storage: StorageLimit
    runs: tuple[Run, ...]
    skipped: tuple[Skipped, ...]
    gpu: GpuStage
    notes: tuple[str, ...] = field(default=())

    def fraction(self, run: Run) -> float:
        return run.gbps / self.storage.gbps if self.storage.gbps > 0 else 0.0

    def best(self, cache_kind: str = "cold") -> Run | None:
        runs = [r for r in self.runs if r.cache == cache_kind]
        return max(runs, key=lambda r: r.gbps) if runs else None

    def best_of(self, method: str, cache_kind: str = "cold") -> Run | None:
        runs = [r for r in self.runs if r.cache == cache_kind and r.method == method]
        return max(runs, key=lambda r: r.gbps) if runs else None

    def recommendation(self) -> str:
        return recommend(self)

    def as_dict(self) -> dict[str, Any]:
        best = self.best()
        return {
            "files": list(self.files),
            "bytes": self.total_bytes,
            "tensors": self.tensors,
            "storage_limit": {
                "gbps": round(self.storage.gbps, 4),
                "bytes": self.storage.bytes,
                "seconds": round(self.storage.seconds, 4),
                "threads": self.storage.threads,
                "block": self.storage.block,
                "direct": self.storage.direct,
                "note": self.storage.note,
            },
            "runs": [
                {
                    "method": r.method,
                    "threads": r.threads,
                    "cache": r.cache,
                    "bytes": r.bytes,
                    "seconds": round(r.seconds, 4),
                    "gbps": round(r.gbps, 4),
                    "fraction_of_limit": round(self.fraction(r), 4),
                    "page_faults": r.faults,
                    "cached_before": None if r.cached_before is None else round(r.cached_before, 4),
                    "partial": r.partial,
                    "note": r.note,
                }
                for r in self.runs
            ],
            "skipped": [
                {"method": s.method, "threads": s.threads, "cache": s.cache, "reason": s.reason} for s in self.skipped
            ],
            "best": None
            if best is None
            else {
                "method": best.method,
                "threads": best.threads,
                "gbps": round(best.gbps, 4),
                "fraction_of_limit": round(self.fraction(best), 4),
            },
            "recommendation": self.recommendation(),
            "gpu": self.gpu.as_dict(),
            "notes": list(self.notes),
        }


_SEQUENTIAL = 'plain sequential reads of whole shards (safetensors safe_open(..., backend="pread"))'
_SERVING = {
    "read": "a loader that reads with many threads (vLLM --load-format runai_streamer, concurrency {t})",
    "runai-model-streamer": "the Run:ai Model Streamer (vLLM --load-format runai_streamer, concurrency {t})",
    "fastsafetensors": "fastsafetensors (vLLM/SGLang --load-format fastsafetensors)",
    "mmap": "the default safetensors loader (mmap)",
    "safetensors": "the default safetensors loader",
}


def recommend(result: Result) -> str:
    """One line: the best cold loader, its share of the storage limit, and what to configure."""
    best = result.best()
    if best is None:
        return "no loader ran: nothing to recommend"
    share = result.fraction(best)
    line = (
        f"{best.method} with {best.threads} thread{'s' if best.threads != 1 else ''} loads a cold cache at "
        f"{best.gbps:.2f} GB/s ({share:.0%} of the {result.storage.gbps:.2f} GB/s storage limit): use "
        + (
            _SEQUENTIAL
            if best.method == "read" and best.threads == 1
            else _SERVING.get(best.method, best.method).format(t=best.threads)
        )
    )
    mapped = result.best_of("mmap")
    if best.method != "mmap" and mapped is not None and mapped.gbps < 0.7 * best.gbps:
        line += (
            f"; mmap is {best.gbps / mapped.gbps:.1f}× slower ({result.fraction(mapped):.0%} of the limit), so "
            "avoid mmap loading on this storage"
        )
    if share < 0.5:
        line += "; no loader reaches half the storage limit: more threads or larger reads may help"
    return line


Progress = Callable[[str, int], None]  # (label, bytes done since the last call)


def plan(
    loaders: Sequence[Loader], shards: Sequence[Shard], options: Options
) -> tuple[list[tuple[Loader, int, str]], list[Skipped]]:
    chosen = [loader for loader in loaders if options.methods is None or loader.name in options.methods]
    runs: list[tuple[Loader, int, str]] = []
    skipped: list[Skipped] = []
    for loader in chosen:
        reason = loader.unavailable(shards)
        if reason is not None:
            skipped.append(Skipped(loader.name, None, None, reason))
            continue
        runs.extend((loader, t, "cold") for t in options.threads)
    if options.warm:
        runs.extend((loader, t, "warm") for loader, t, kind in list(runs) if kind == "cold")
    return runs, skipped


def bench(
    shards: Sequence[Shard],
    options: Options = Options(),
    progress: Progress | None = None,
    loaders: Sequence[Loader] | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> Result:
    """Measure the storage limit and every available loader on these shards."""
    paths = [s.path for s in shards]
    total = sum(s.size for s in shards)
    start = clock()
    budget_end = None if options.budget_seconds is None else start + options.budget_seconds

    def tick(label: str) -> Callable[[int], None] | None:
        return None if progress is None else (lambda n: progress(label, n))

    notes: list[str] = []
    limit_deadline = None if options.budget_seconds is None else start + options.budget_seconds * STORAGE_SHARE
    storage = _storage_limit(paths, options, tick, clock, limit_deadline)
    if storage.bytes < total:
        notes.append(f"the storage limit was measured on the first {storage.bytes / 1e9:.2f} GB (budget)")
    work, skipped = plan(loaders if loaders is not None else all_loaders(), shards, options)
    runs = _loader_runs(work, shards, options, storage, tick, clock, budget_end, skipped, notes)
    notes.extend(_cache_notes(runs, storage))
    gpu = host_to_device() if options.gpu else GpuStage(None, None, None, 0, "not asked for (--no-gpu)")
    return Result(
        tuple(str(p) for p in paths),
        total,
        sum(len(s.tensors) for s in shards),
        storage,
        tuple(runs),
        tuple(skipped),
        gpu,
        tuple(dict.fromkeys(notes)),
    )


def _storage_limit(
    paths: list[Path],
    options: Options,
    tick: Callable[[str], Callable[[int], None] | None],
    clock: Callable[[], float],
    deadline: float | None,
) -> StorageLimit:
    """The median of the storage-limit runs (parallel direct reads), as many as the budget allows."""
    limits = []
    for _ in range(max(1, options.repeats)):
        cache.evict(paths)
        limits.append(storage_limit(paths, options.direct_threads, progress=tick("storage limit"), deadline=deadline))
        if deadline is not None and clock() > deadline:
            break
    return sorted(limits, key=lambda s: s.gbps)[len(limits) // 2]  # the median run


def _loader_runs(
    work: Sequence[tuple[Loader, int, str]],
    shards: Sequence[Shard],
    options: Options,
    storage: StorageLimit,
    tick: Callable[[str], Callable[[int], None] | None],
    clock: Callable[[], float],
    budget_end: float | None,
    skipped: list[Skipped],
    notes: list[str],
) -> list[Run]:
    """Each loader over thread counts, cold then warm, within the time budget (what does not fit is skipped)."""
    paths = [s.path for s in shards]
    tensor_bytes = sum(s.tensor_bytes for s in shards)
    runs: list[Run] = []
    warmed = False
    for index, (loader, threads, kind) in enumerate(work):
        now = clock()
        deadline = None
        if budget_end is not None:
            left = budget_end - now
            share = left / (len(work) - index)
            estimate = tensor_bytes / max(storage.gbps * 1e9, 1.0) * (1 if kind == "cold" else 0.25)
            if left <= 0 or (not loader.stoppable and estimate > share):
                skipped.append(Skipped(loader.name, threads, kind, "the time budget is spent"))
                continue
            deadline = now + share
        if kind == "warm" and not warmed:
            warmed = True
            parallel_read(paths, options.direct_threads, direct=False, deadline=budget_end)
            state = cache.residency(paths)
            if state.fraction is not None and state.fraction < 1 - EVICTION_TOLERANCE:
                notes.append(
                    f"only {state.fraction:.0%} of the files stay in the page cache (too little free "
                    "memory): warm figures are partly cold"
                )
        runs.append(
            _one(loader, shards, threads, kind, options.repeats, tick(f"{loader.name} ×{threads} {kind}"), deadline)
        )
    return runs


def _cache_notes(runs: Sequence[Run], storage: StorageLimit) -> list[str]:
    """What says the cold figures may not be cold: a page cache that was not dropped, or reads above the limit."""
    notes: list[str] = []
    for run in runs:
        if run.cache == "cold" and run.cached_before is not None and run.cached_before > EVICTION_TOLERANCE:
            notes.append(
                "dropping the page cache did not work (posix_fadvise DONTNEED left "
                f"{run.cached_before:.0%} of the pages cached): cold figures are too high"
            )
            break
    else:
        if any(r.cache == "cold" and r.cached_before is None for r in runs):
            notes.append("mincore is unavailable: the page cache drop could not be checked")
    too_fast = [r for r in runs if r.cache == "cold" and r.gbps > 1.5 * storage.gbps and not r.partial]
    if too_fast:
        notes.append(
            f"{too_fast[0].method} read a cold cache {too_fast[0].gbps / storage.gbps:.1f}× faster than "
            "the storage limit: the cache was probably not dropped, or the storage caches below us"
        )
    return notes


def _one(
    loader: Loader,
    shards: Sequence[Shard],
    threads: int,
    kind: str,
    repeats: int,
    progress: Callable[[int], None] | None,
    deadline: float | None,
) -> Run:
    paths = [s.path for s in shards]
    samples: list[tuple[float, int, int, float | None, bool]] = []
    for _ in range(max(1, repeats)):
        cached: float | None
        if kind == "cold":
            cache.evict(paths)
            cached = cache.residency(paths).fraction
        else:
            cached = cache.residency(paths).fraction
        begin = time.perf_counter()
        loaded = measure(loader, shards, threads, progress, deadline)
        seconds = time.perf_counter() - begin
        expected = sum(s.tensor_bytes for s in shards)
        samples.append((seconds, loaded.bytes, loaded.faults, cached, loaded.bytes < expected))
        if deadline is not None and time.perf_counter() > deadline:
            break
    samples.sort(key=lambda s: s[1] / s[0] if s[0] > 0 else 0.0)
    seconds, done, faults, cached, partial = samples[len(samples) // 2]
    return Run(loader.name, threads, kind, done, seconds, faults, cached, partial)
