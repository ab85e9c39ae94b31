"""Go's math/rand (v1) in Python, draw for draw, so that one seed is one stream in Go and here.

Follows Go 1.19 src/math/rand/rng.go (rngSource: additive lagged Fibonacci, length 607, tap 273, seeded by
seedrand's Park-Miller steps XORed with rngCooked) and rand.go (Int63 — also Int on 64-bit —, Uint64, Uint32,
Int31, Int63n, Int31n, the Lemire int31n behind Shuffle, Intn, Float64, Perm, Shuffle). The top-level functions
after rand.Seed(s) are this generator seeded with s. tests/sim/data holds outputs recorded from Go 1.19.8.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from kubegpu.sim.gorand_cooked import RNG_COOKED

RNG_LEN = 607
RNG_TAP = 273
INT32_MAX = (1 << 31) - 1
_MASK64 = (1 << 64) - 1
_MASK63 = (1 << 63) - 1
_MASK32 = (1 << 32) - 1
_COOKED = tuple(v & _MASK64 for v in RNG_COOKED)  # two's complement, as Go's int64 bits
T = TypeVar("T")


def _seedrand(x: int) -> int:
    """seedrand: x[n+1] = 48271 × x[n] mod (2³¹ − 1), Schrage's method in int32 (no overflow)."""
    hi, lo = divmod(x, 44488)
    x = 48271 * lo - 3399 * hi
    return x + INT32_MAX if x < 0 else x


class GoRand:
    """A Go `*rand.Rand` over an rngSource (what rand.New(rand.NewSource(seed)) and the seeded top-level
    functions use). Not thread-safe; every method consumes exactly the draws its Go twin does."""

    __slots__ = ("_feed", "_tap", "_vec", "draws")

    def __init__(self, seed: int) -> None:
        self._vec = [0] * RNG_LEN
        self._tap = 0
        self._feed = 0
        self.draws = 0  # Int63/Uint64 calls so far: how far into the stream this generator is
        self.seed(seed)

    def seed(self, seed: int) -> None:
        """rngSource.Seed: reduce modulo 2³¹ − 1 (0 becomes 89482311), warm up 20 steps, fill the register."""
        self._tap = 0
        self._feed = RNG_LEN - RNG_TAP
        self.draws = 0
        seed %= INT32_MAX  # Go's % and the `if seed < 0 { seed += int32max }` give Python's floor modulo
        if seed == 0:
            seed = 89482311
        x = seed
        for i in range(-20, RNG_LEN):
            x = _seedrand(x)
            if i >= 0:
                u = (x << 40) & _MASK64
                x = _seedrand(x)
                u ^= (x << 20) & _MASK64
                x = _seedrand(x)
                u ^= x
                self._vec[i] = u ^ _COOKED[i]

    def uint64(self) -> int:
        """rngSource.Uint64: vec[feed] += vec[tap] (wrapping), both indices stepping down."""
        tap = self._tap - 1
        if tap < 0:
            tap += RNG_LEN
        feed = self._feed - 1
        if feed < 0:
            feed += RNG_LEN
        self._tap = tap
        self._feed = feed
        vec = self._vec
        x = (vec[feed] + vec[tap]) & _MASK64
        vec[feed] = x
        self.draws += 1
        return x

    def int63(self) -> int:
        """Int63: the low 63 bits of the next Uint64."""
        return self.uint64() & _MASK63

    def uint32(self) -> int:
        """Uint32: Int63 >> 31."""
        return self.int63() >> 31

    def int31(self) -> int:
        """Int31: Int63 >> 32."""
        return self.int63() >> 32

    def int63n(self, n: int) -> int:
        """Int63n: a mask for powers of two, else rejection above the largest multiple of n."""
        if n <= 0:
            raise ValueError("invalid argument to Int63n")
        return self._below(n, self.int63, 63)

    def int31n(self, n: int) -> int:
        """Int31n: a mask for powers of two, else rejection above the largest multiple of n."""
        if n <= 0 or n > INT32_MAX:
            raise ValueError("invalid argument to Int31n")
        return self._below(n, self.int31, 31)

    @staticmethod
    def _below(n: int, draw: Callable[[], int], bits: int) -> int:
        """Int31n's and Int63n's shared body over a draw of `bits` bits."""
        if n & (n - 1) == 0:
            return draw() & (n - 1)
        top = (1 << bits) - 1 - (1 << bits) % n
        v = draw()
        while v > top:
            v = draw()
        return v % n

    def _int31n_lemire(self, n: int) -> int:
        """The unexported int31n (Lemire's multiply-shift with rejection) that Shuffle uses."""
        prod = self.uint32() * n
        low = prod & _MASK32
        if low < n:
            thresh = ((1 << 32) - n) % n  # uint32(-n) % uint32(n)
            while low < thresh:
                prod = self.uint32() * n
                low = prod & _MASK32
        return prod >> 32

    def intn(self, n: int) -> int:
        """Intn: Int31n when n fits in 31 bits, else Int63n."""
        if n <= 0:
            raise ValueError("invalid argument to Intn")
        return self.int31n(n) if n <= INT32_MAX else self.int63n(n)

    def float64(self) -> float:
        """Float64: Int63 / 2⁶³, drawn again in the (never seen) case that it rounds to 1.0."""
        while True:
            f = float(self.int63()) / 9223372036854775808.0
            if f != 1.0:
                return f

    def perm(self, n: int) -> list[int]:
        """Perm: m[i] = m[j]; m[j] = i with j = Intn(i + 1), from i = 0 (which draws too)."""
        m = [0] * n
        for i in range(n):
            j = self.intn(i + 1)
            m[i] = m[j]
            m[j] = i
        return m

    def shuffle(self, n: int, swap: Callable[[int, int], None]) -> None:
        """Shuffle: Fisher-Yates from the top, Int63n above 2³¹ − 2 and the Lemire int31n below."""
        if n < 0:
            raise ValueError("invalid argument to Shuffle")
        i = n - 1
        while i > INT32_MAX - 1:
            swap(i, self.int63n(i + 1))
            i -= 1
        while i > 0:
            swap(i, self._int31n_lemire(i + 1))
            i -= 1

    def shuffled(self, items: list[T]) -> None:
        """Shuffle a list in place (rand.Shuffle with the usual element swap)."""

        def swap(i: int, j: int) -> None:
            items[i], items[j] = items[j], items[i]

        self.shuffle(len(items), swap)
