"""Where shared data lives, for parametrising tests at collection time (fixtures come too late)."""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED_DIR = REPO_ROOT.parent / "shared"


def vectors_root() -> Path:
    """`$KUBEGPU_VECTORS_DIR` when set, else ../shared/vectors (may not exist: callers skip)."""
    override = os.environ.get("KUBEGPU_VECTORS_DIR")
    return Path(override) if override else SHARED_DIR / "vectors"
