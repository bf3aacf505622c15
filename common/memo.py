"""``Remade``: what was made of some immutable objects, made again only when they are other objects.

For a response body built from values that change seldom and are replaced, never mutated, when
they do (frozen attrs instances): comparing the objects by identity costs a fraction of encoding
them again. Holding the objects keeps their identities from being reused. This module knows no
service.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

T = TypeVar("T")
V = TypeVar("V")


class Remade(Generic[V, T]):
    """``make(objects)``, kept while the objects are the very ones it was made of, in order."""

    def __init__(self, make: Callable[[Sequence[V]], T]) -> None:
        self._make = make
        self._source: tuple[V, ...] | None = None
        self._made: T | None = None

    def __call__(self, objects: Sequence[V]) -> T:
        source = self._source
        if (
            source is None
            or len(source) != len(objects)
            or any(kept is not given for kept, given in zip(source, objects, strict=True))
            or self._made is None
        ):
            self._made = self._make(objects)
            self._source = tuple(objects)
        return self._made
