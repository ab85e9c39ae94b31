"""A short seeded fuzz run (lint, fix and the webhook review on mutated and hostile inputs): no crash.

The long run is `make fuzz`; a crash prints the seed and input number to replay it with tests.reliability.fuzz.
"""

from __future__ import annotations

import resource

from tests.reliability.fuzz import run


def test_short_fuzz_run_has_no_crash() -> None:
    report = run(lint_n=300, fix_n=60, review_n=200, seed=2026)
    assert report.crashes == [], "\n".join(report.crashes[:20])
    assert report.counts == {"lint": 300, "fix": 60, "review": 200}
    # bounded memory: the whole test process, hostile inputs included, stays far from exhausting a machine
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss < 2 * 1024 * 1024  # KiB: 2 GiB
