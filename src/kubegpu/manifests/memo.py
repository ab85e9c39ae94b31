"""Remember what was derived from a document, template, container or YAML node, for everyone who asks.

Loaded objects are never changed while they are linted, so a derived fact is computed once per object.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, TypeVar

T = TypeVar("T")


def memoised(owner: Any, key: Hashable, compute: Callable[..., T], *args: Any) -> T:
    """`compute(*args)` the first time `key` is asked of `owner`, the same value afterwards.

    The value lives in the owner's own `__dict__` (frozen dataclasses included) and dies with it;
    callers must treat it as read-only. `key` must say everything the value depends on besides the owner.
    """
    state = owner.__dict__
    cache: dict[Hashable, Any] | None = state.get("_kubegpu_memo")
    if cache is None:
        cache = state["_kubegpu_memo"] = {}
    # A sentinel, not KeyError: a third of the calls are first asks, and raising cost three times the lookup.
    value = cache.get(key, _MISSING)
    if value is _MISSING:
        value = cache[key] = compute(*args)
    return value  # type: ignore[no-any-return]


_MISSING = object()


def forget(owner: Any) -> None:
    """Drop what was remembered of `owner`: derived facts often refer back to their owner, and such
    cycles would outlive the object until the cyclic collector found them."""
    owner.__dict__.pop("_kubegpu_memo", None)


def recalled(owner: Any, key: Hashable) -> Any:
    """What `remember` set for `key` on `owner`, or None: a lookup that stores nothing (most objects have no such
    fact, and every object is asked)."""
    cache: dict[Hashable, Any] | None = owner.__dict__.get("_kubegpu_memo")
    return None if cache is None else cache.get(key)


def remember(owner: Any, key: Hashable, value: T) -> T:
    """Set what `key` answers for `owner` from now on (a fact that needs more than the owner to derive)."""
    cache: dict[Hashable, Any] = owner.__dict__.setdefault("_kubegpu_memo", {})
    cache[key] = value
    return value
