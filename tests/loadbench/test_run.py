"""A whole loadbench run: plan, budget, the cache check, the best method and the recommendation."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from kubegpu.loadbench import run as run_module
from kubegpu.loadbench.gpu import GpuStage
from kubegpu.loadbench.loaders import MmapLoader, Progress, ReadLoader
from kubegpu.loadbench.run import Options, Result, Run, Skipped, bench, recommend
from kubegpu.loadbench.shards import Shard
from kubegpu.loadbench.storage import StorageLimit


class SlowUnstoppable:
    """A loader that cannot be stopped and would take far longer than any budget here."""

    name = "slow"
    stoppable = False

    def unavailable(self, shards: Sequence[Shard]) -> str | None:
        return None

    def load(self, shards: Sequence[Shard], threads: int, progress: Progress | None, deadline: float | None) -> int:
        raise AssertionError("must be skipped by the budget, not run")


class Missing(SlowUnstoppable):
    name = "missing"

    def unavailable(self, shards: Sequence[Shard]) -> str | None:
        return "not installed"


def test_bench_measures_each_method_threads_and_cache(model: list[Shard]) -> None:
    events: list[str] = []
    result = bench(
        model,
        Options(threads=(1, 2), gpu=False),
        lambda label, n: events.append(label),
        loaders=[ReadLoader(), MmapLoader(), Missing()],
    )
    keys = {(r.method, r.threads, r.cache) for r in result.runs}
    assert keys == {(m, t, c) for m in ("read", "mmap") for t in (1, 2) for c in ("cold", "warm")}
    assert all(r.bytes == sum(s.tensor_bytes for s in model) and not r.partial for r in result.runs)
    assert [s.reason for s in result.skipped] == ["not installed"]
    assert result.storage.bytes == sum(s.size for s in model)
    assert events[0] == "storage limit" and "mmap ×2 warm" in events
    data = result.as_dict()
    assert data["best"]["method"] in ("read", "mmap") and data["recommendation"] == result.recommendation()
    assert data["gpu"]["skipped"] == "not asked for (--no-gpu)"
    # The JSON carries each run's fraction of the storage limit from the unrounded figures (comparing the rounded
    # JSON figures with each other fails when the machine is busy and the limit measures small).
    assert [r["fraction_of_limit"] for r in data["runs"]] == [
        round(r.gbps / result.storage.gbps, 4) for r in result.runs
    ]


def test_budget_skips_what_cannot_stop_and_cuts_what_can(model: list[Shard]) -> None:
    result = bench(
        model,
        Options(threads=(1,), warm=False, budget_seconds=1e-6, gpu=False),
        loaders=[ReadLoader(), SlowUnstoppable()],
    )
    assert {(s.method, s.reason) for s in result.skipped} == {
        ("read", "the time budget is spent"),
        ("slow", "the time budget is spent"),
    }
    assert result.runs == ()
    assert result.storage.bytes == 0  # its share of the budget was spent before the first block
    assert any("measured on the first 0.00 GB" in note for note in result.notes)


def test_a_cache_that_is_not_dropped_is_reported(model: list[Shard], monkeypatch: pytest.MonkeyPatch) -> None:
    for shard in model:
        shard.path.read_bytes()
    monkeypatch.setattr(run_module.cache, "evict", lambda paths: None)
    result = bench(model, Options(threads=(1,), warm=False, gpu=False), loaders=[ReadLoader()])
    assert result.runs[0].cached_before is not None and result.runs[0].cached_before > 0.9
    assert any("did not work" in note for note in result.notes)


def _result(runs: list[tuple[str, int, str, float]], limit: float = 2.0) -> Result:
    storage = StorageLimit(int(limit * 1e9), 1.0, 16, 4 << 20, True)
    made = tuple(Run(m, t, c, int(gbps * 1e9), 1.0, 0, 0.0) for m, t, c, gbps in runs)
    return Result(("a",), 1, 1, storage, made, (Skipped("x", None, None, "r"),), GpuStage(None, None, None, 0, "no"))


@pytest.mark.parametrize(
    ("runs", "expect", "absent"),
    [
        (
            [("runai-model-streamer", 16, "cold", 1.9), ("mmap", 1, "cold", 0.6)],
            [
                "runai-model-streamer with 16 threads",
                "95% of the 2.00 GB/s",
                "concurrency 16",
                "mmap is 3.2× slower (30% of the limit)",
            ],
            ["half"],
        ),
        ([("mmap", 4, "cold", 1.9), ("read", 4, "cold", 1.8)], ["default safetensors loader (mmap)"], ["avoid"]),
        (
            [("read", 1, "cold", 0.5), ("mmap", 1, "cold", 0.4), ("read", 1, "warm", 9.0)],
            ["read with 1 thread", "sequential reads", "25%", "no loader reaches half"],
            ["avoid mmap"],
        ),
        ([], ["no loader ran"], []),
    ],
)
def test_recommendation(runs: list[tuple[str, int, str, float]], expect: list[str], absent: list[str]) -> None:
    line = recommend(_result(runs))
    assert all(text in line for text in expect), line
    assert not any(text in line for text in absent), line


def test_render_text_and_plot(model: list[Shard], tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    from kubegpu.loadbench.render import plot, render_text

    result = _result([("read", 4, "cold", 1.5), ("read", 4, "warm", 6.0)])
    text = render_text(result)
    assert "storage limit: 2.00 GB/s" in text and "75%" in text and "skipped x: r" in text
    assert text.rstrip().splitlines()[-1].startswith("recommendation: read with 4 threads")
    plot(result, tmp_path / "rates.png")
    assert (tmp_path / "rates.png").read_bytes()[:4] == b"\x89PNG"
