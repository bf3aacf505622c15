"""``Remade``: what was made of some immutable objects, made again only when they are other objects.

For a response body built from values that change seldom and are replaced, never mutated, when
they do (frozen attrs instances): comparing the objects by identity costs a fraction of encoding
them again. Holding the objects keeps their identities from being reused. This module knows no
service.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

T = TypeVar("T")
V = TypeVar("V")


class Remade(Generic[V, T]):
    """``make(objects)``, kept while the objects are the very ones it was made of, in order."""

    def __init__(self, make: Callable[[Sequence[V]], T]) -> None:
        self._make = make
        #: The objects last made from and what was made of them.
        self._last: tuple[tuple[V, ...], T] | None = None

    def __call__(self, objects: Sequence[V]) -> T:
        last = self._last
        if (
            last is None
            or len(last[0]) != len(objects)
            or not all(map(operator.is_, last[0], objects))  # no frame per object
        ):
            last = self._last = (tuple(objects), self._make(objects))
        return last[1]
