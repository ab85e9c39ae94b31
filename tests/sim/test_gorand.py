"""kubegpu.sim.gorand against outputs recorded from Go 1.19.8's math/rand, plus properties of each method."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubegpu.sim.gorand import INT32_MAX, GoRand

VECTORS = json.loads((Path(__file__).parent / "data" / "go_math_rand_vectors.json").read_text())


class Scripted(GoRand):
    """A GoRand whose Int63 values are given, as the Go program's scripted Source gives them."""

    __slots__ = ("values",)

    def __init__(self, values: list[int]) -> None:
        super().__init__(1)
        self.values = list(values)
        self.draws = 0

    def uint64(self) -> int:
        self.draws += 1
        return self.values.pop(0)


def _call(rand: GoRand, op: str, arg: int) -> Any:
    if op == "Shuffle":
        items = list(range(arg))
        rand.shuffled(items)
        return items
    method = {
        "Uint64": rand.uint64,
        "Int63": rand.int63,
        "Uint32": rand.uint32,
        "Int31": rand.int31,
        "Int": rand.int63,  # Go's Int is Int63 on 64-bit platforms
        "Float64": rand.float64,
    }.get(op)
    if method is not None:
        return method()
    return {"Int63n": rand.int63n, "Int31n": rand.int31n, "Intn": rand.intn, "Perm": rand.perm}[op](arg)


def _replay(rand: GoRand, calls: list[dict[str, Any]]) -> None:
    for call in calls:
        got = _call(rand, call["op"], call.get("arg", 0))
        assert got == call["result"], call


def test_vectors_name_their_go_version() -> None:
    assert VECTORS["go"].startswith("go1.19")
    assert VECTORS["generator"].endswith("go_math_rand_vectors.go")


@pytest.mark.parametrize("case", VECTORS["seeded"], ids=lambda c: f"seed{c['seed']}")
def test_seeded_streams_match_go(case: dict[str, Any]) -> None:
    _replay(GoRand(case["seed"]), case["calls"])


def test_top_level_functions_after_seed_match_go() -> None:
    # rand.Seed(s) then rand.Int, rand.Shuffle, rand.Intn, rand.Perm: the FGD simulator's calls
    _replay(GoRand(VECTORS["global"]["seed"]), VECTORS["global"]["calls"])


@pytest.mark.parametrize("case", VECTORS["scripted"], ids=lambda c: c["calls"][0]["op"])
def test_rejection_branches_match_go(case: dict[str, Any]) -> None:
    rand = Scripted(case["int63"])
    _replay(rand, case["calls"])
    assert rand.draws == case["used"]


def test_seed_is_reduced_modulo_int32_max() -> None:
    # Go: seed % (2³¹ − 1), negatives wrapped, zero replaced by 89482311
    assert GoRand(INT32_MAX + 5).int63() == GoRand(5).int63()
    assert GoRand(-3).int63() == GoRand(INT32_MAX - 3).int63()
    assert GoRand(0).int63() == GoRand(89482311).int63() == GoRand(INT32_MAX).int63()


@given(st.integers(-(2**63), 2**63 - 1), st.integers(1, 2**40))
def test_intn_is_in_range_and_counts_its_draws(seed: int, n: int) -> None:
    rand = GoRand(seed)
    value = rand.intn(n)
    assert 0 <= value < n
    assert rand.draws >= 1


@given(st.integers(0, 2**31), st.integers(0, 60))
def test_perm_and_shuffle_are_permutations(seed: int, n: int) -> None:
    rand = GoRand(seed)
    assert sorted(rand.perm(n)) == list(range(n))
    items = list(range(n))
    rand.shuffled(items)
    assert sorted(items) == list(range(n))


@given(st.integers(0, 2**31), st.integers(2, 5000))
def test_shuffle_draws_one_value_per_position_but_the_first(seed: int, n: int) -> None:
    # the Lemire int31n rejects with probability (2³² mod k) / 2³², below 2e-6 here: one draw per step
    rand = GoRand(seed)
    rand.shuffle(n, lambda i, j: None)
    assert rand.draws >= n - 1
    assert rand.draws - (n - 1) <= 1


@given(st.integers(0, 2**31))
def test_float64_is_in_unit_interval(seed: int) -> None:
    value = GoRand(seed).float64()
    assert 0.0 <= value < 1.0


@pytest.mark.parametrize("bad", [0, -1])
def test_non_positive_bounds_are_refused_as_go_panics(bad: int) -> None:
    rand = GoRand(1)
    for method in (rand.intn, rand.int31n, rand.int63n):
        with pytest.raises(ValueError, match="invalid argument"):
            method(bad)
