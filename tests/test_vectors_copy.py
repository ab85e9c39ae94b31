"""Our copy of the upstream test vectors (tests/vectors) stays identical to ../shared/vectors."""

from __future__ import annotations

import pytest

from tests.paths import SHARED_DIR, VECTORS_COPY


@pytest.mark.skipif(not (SHARED_DIR / "vectors").is_dir(), reason="../shared/vectors is absent")
@pytest.mark.parametrize("area", ["kubelet", "scheduler"])
def test_copy_matches_shared(area: str) -> None:
    shared = {p.name: p.read_bytes() for p in (SHARED_DIR / "vectors" / area).glob("*.json")}
    ours = {p.name: p.read_bytes() for p in (VECTORS_COPY / area).glob("*.json")}
    assert shared, "no vectors in ../shared"
    assert ours == shared, "tests/vectors differs from ../shared/vectors: copy the new files over"
