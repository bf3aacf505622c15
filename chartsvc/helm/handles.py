"""A thread-safe, least-recently-used pool of native handles that are closed exactly once.

helm_python charts and configs are Go-side handles: costly to make, safe to share between threads,
and they must be closed. A handle leaves the pool when the pool is over its count or weight bound,
but is closed only once no thread still uses it. This module knows nothing of Helm.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Iterator
from contextlib import contextmanager
from typing import Generic, Protocol, TypeVar


class Closeable(Protocol):
    def close(self) -> None: ...


K = TypeVar("K", bound=Hashable)
H = TypeVar("H", bound=Closeable)


class _Slot(Generic[H]):
    __slots__ = ("evicted", "handle", "users", "weight")

    def __init__(self, handle: H, weight: int) -> None:
        self.handle = handle
        self.weight = weight
        self.users = 1
        self.evicted = False


class HandlePool(Generic[K, H]):
    """Handles by key; ``max_weight`` bounds the sum of the weights given to :meth:`use`."""

    def __init__(self, *, max_count: int, max_weight: int | None = None) -> None:
        self.max_count = max_count
        self.max_weight = max_weight
        self._slots: OrderedDict[K, _Slot[H]] = OrderedDict()
        self._lock = threading.Lock()
        self._weight = 0

    @contextmanager
    def use(self, key: K, make: Callable[[], H], *, weight: int = 0) -> Iterator[H]:
        slot = self._acquire(key, make, weight)
        try:
            yield slot.handle
        finally:
            self._release(slot)

    def _acquire(self, key: K, make: Callable[[], H], weight: int) -> _Slot[H]:
        with self._lock:
            slot = self._slots.get(key)
            if slot is not None:
                self._slots.move_to_end(key)
                slot.users += 1
                return slot
        fresh = _Slot(make(), weight)  # made outside the lock: loading may take a while
        with self._lock:
            retired = []
            replaced = self._slots.pop(key, None)  # another thread made one meanwhile
            if replaced is not None:
                self._weight -= replaced.weight
                replaced.evicted = True
                if replaced.users == 0:
                    retired.append(replaced.handle)
            self._slots[key] = fresh
            self._weight += fresh.weight
            retired += self._evict()
        for handle in retired:
            handle.close()
        return fresh

    def _over(self) -> bool:
        over_weight = self.max_weight is not None and self._weight > self.max_weight
        return len(self._slots) > self.max_count or over_weight

    def _evict(self) -> list[H]:
        retired = []
        while self._slots and self._over():
            _, slot = self._slots.popitem(last=False)
            self._weight -= slot.weight
            slot.evicted = True
            if slot.users == 0:
                retired.append(slot.handle)
        return retired

    def _release(self, slot: _Slot[H]) -> None:
        with self._lock:
            slot.users -= 1
            done = slot.evicted and slot.users == 0
        if done:
            slot.handle.close()

    def discard(self, keys: Iterable[K]) -> None:
        """Drop these handles: idle ones are closed now, busy ones when their last user is done."""
        retired = []
        with self._lock:
            for key in keys:
                slot = self._slots.pop(key, None)
                if slot is None:
                    continue
                self._weight -= slot.weight
                slot.evicted = True
                if slot.users == 0:
                    retired.append(slot.handle)
        for handle in retired:
            handle.close()

    def close(self) -> None:
        """Close every idle handle now, and the busy ones when their last user is done."""
        with self._lock:
            self.max_count = 0
            retired = self._evict()
        for handle in retired:
            handle.close()
