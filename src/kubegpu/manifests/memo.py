"""Remember what a rule derived from a document, template or container, for the other rules that ask.

Loaded objects are never changed while they are linted, so a derived fact is computed once per object.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


def memoised(owner: Any, key: str, compute: Callable[[], T]) -> T:
    """`compute()` the first time `key` is asked of `owner`, the same value afterwards.

    The value lives in the owner's own `__dict__` (frozen dataclasses included) and dies with it;
    callers must treat it as read-only.
    """
    cache: dict[str, Any] = owner.__dict__.setdefault("_kubegpu_memo", {})
    try:
        value: T = cache[key]
    except KeyError:
        value = cache[key] = compute()
    return value
