"""A small synthetic model (tens of MB at most) in a temporary folder, shared by the loadbench tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubegpu.loadbench.shards import Shard, find_shards, write_synthetic


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> list[Shard]:
    folder = tmp_path_factory.mktemp("model")
    write_synthetic(folder, 12 << 20, shard_size=5 << 20)
    return find_shards([folder])


@pytest.fixture
def paths(model: list[Shard]) -> list[Path]:
    return [s.path for s in model]
