"""A least-recently-used map bounded by a weight budget (bytes of each item's on-disk form).

Prepared indexes and downloaded chart archives are kept here so requests do not touch the disk, while
memory stays bounded however many repositories are configured: jhelm's unbounded parsed-index cache
grew the heap without limit (#579). Single-threaded use on the event loop only; no locking.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class WeightedLRU(Generic[K, V]):
    def __init__(self, budget: int) -> None:
        self._budget = budget
        self._items: OrderedDict[K, tuple[V, int]] = OrderedDict()
        self._weight = 0

    def __len__(self) -> int:
        return len(self._items)

    @property
    def weight(self) -> int:
        return self._weight

    def get(self, key: K) -> V | None:
        found = self._items.get(key)
        if found is None:
            return None
        self._items.move_to_end(key)
        return found[0]

    def put(self, key: K, value: V, weight: int) -> None:
        self.discard(key)
        if weight > self._budget:
            return  # larger than the whole budget: serve it once, never keep it
        self._items[key] = (value, weight)
        self._weight += weight
        while self._weight > self._budget:
            _, (_, dropped) = self._items.popitem(last=False)
            self._weight -= dropped

    def discard(self, key: K) -> None:
        found = self._items.pop(key, None)
        if found is not None:
            self._weight -= found[1]
