"""Shared fixtures: where ../shared and the test vectors are, skipping with a reason when absent."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import settings

from tests.paths import SHARED_DIR, vectors_root

# No timed assertions (docs/dev/conventions.md): hypothesis's per-example deadline fails a test whose first
# example is slow on a loaded machine, so it is off; speed is measured in bench/.
settings.register_profile("kubegpu", deadline=None)
settings.load_profile("kubegpu")


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    if not SHARED_DIR.is_dir():
        pytest.skip(f"{SHARED_DIR} is absent: the shared data folder sits beside the checkout")
    return SHARED_DIR


@pytest.fixture(scope="session")
def vectors_dir() -> Path:
    path = vectors_root()
    if not path.is_dir():
        pytest.skip(f"test vectors not found at {path} (set KUBEGPU_VECTORS_DIR)")
    return path
