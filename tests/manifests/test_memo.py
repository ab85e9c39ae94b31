"""Facts remembered per object: computed once, set from outside, read back without storing."""

from __future__ import annotations

from dataclasses import dataclass

from kubegpu.manifests.memo import forget, memoised, recalled, remember


@dataclass(frozen=True)
class _Owner:
    name: str


def test_memoised_computes_once_per_key() -> None:
    owner = _Owner("a")
    calls: list[str] = []

    def compute(word: str) -> str:
        calls.append(word)
        return word.upper()

    assert memoised(owner, "k", compute, "x") == "X"
    assert memoised(owner, "k", compute, "y") == "X"  # the key says what the value depends on
    assert memoised(owner, ("k", 2), compute, "y") == "Y"
    assert calls == ["x", "y"]


def test_recalled_reads_what_was_remembered_and_stores_nothing() -> None:
    owner = _Owner("b")
    assert recalled(owner, "runtime") is None
    assert "_kubegpu_memo" not in owner.__dict__  # asking left nothing behind
    remember(owner, "runtime", "found")
    assert recalled(owner, "runtime") == "found"
    assert recalled(owner, "other") is None
    forget(owner)
    assert recalled(owner, "runtime") is None
