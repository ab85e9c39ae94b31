"""Where shared data lives, for parametrising tests at collection time (fixtures come too late)."""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED_DIR = REPO_ROOT.parent / "shared"


VECTORS_COPY = REPO_ROOT / "tests" / "vectors"


def vectors_root() -> Path:
    """`$KUBEGPU_VECTORS_DIR` when set, else ../shared/vectors, else our own copy in tests/vectors.

    The copy keeps the models tested where ../shared is absent; a test checks it matches ../shared.
    """
    override = os.environ.get("KUBEGPU_VECTORS_DIR")
    if override:
        return Path(override)
    shared = SHARED_DIR / "vectors"
    return shared if shared.is_dir() else VECTORS_COPY
