"""Identical reads in progress share one call, and nobody is answered from a call that began before
they asked.

A read with the same key as one under way does not start its own call, nor join the one running
(that call may have read the cluster before this caller's last write): it joins the *next* call,
which starts when the running one ends and serves everyone who queued for it. However many clients
ask at once, a key has at most one call running and one queued. Calls run as tasks and are awaited
through a shield, so a client that goes away does not cancel the answer of the others.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable
from typing import Any, TypeVar

import attrs

V = TypeVar("V")


@attrs.define
class _Slot:
    running: asyncio.Task[Any] | None = None
    queued: asyncio.Task[Any] | None = None


class Flights:
    def __init__(self) -> None:
        self._slots: dict[Hashable, _Slot] = {}
        self._closed = False

    async def run(
        self, key: Hashable, call: Callable[[], Awaitable[V]], *, join_running: bool = False
    ) -> V:
        """``call()``'s answer, shared with the other callers of ``key``. With ``join_running``
        the caller accepts an answer begun before it asked (a cache fill) and joins the running
        call; otherwise the next one. Once closed, a call runs in its caller's own task: no shared
        task may outlive the shutdown that cancelled the others."""
        if self._closed:
            return await call()
        slot = self._slots.setdefault(key, _Slot())
        if join_running and slot.running is not None:
            task = slot.running
        elif slot.queued is not None:
            task = slot.queued
        elif slot.running is None:
            task = slot.running = self._task(key, None, call)
        else:
            task = slot.queued = self._task(key, slot.running, call)
        result: V = await asyncio.shield(task)
        return result

    def _task(
        self, key: Hashable, ahead: asyncio.Task[Any] | None, call: Callable[[], Awaitable[V]]
    ) -> asyncio.Task[V]:
        task = asyncio.create_task(self._fly(key, ahead, call))
        # retrieved here too, so an answer every waiter gave up on never logs "never retrieved"
        task.add_done_callback(lambda done: done.cancelled() or done.exception())
        return task

    async def _fly(
        self, key: Hashable, ahead: asyncio.Task[Any] | None, call: Callable[[], Awaitable[V]]
    ) -> V:
        me = asyncio.current_task()
        if ahead is not None:
            await asyncio.wait([ahead])  # its outcome belongs to its own callers
        slot = self._slots[key]
        if slot.queued is me:
            slot.queued = None
        slot.running = me
        try:
            return await call()
        finally:
            if slot.running is me:
                slot.running = None
            if slot.running is None and slot.queued is None:
                del self._slots[key]

    @property
    def busy(self) -> int:
        """Calls running or queued."""
        return sum((s.running is not None) + (s.queued is not None) for s in self._slots.values())

    async def close(self) -> None:
        """Cancel every call (at shutdown, before the clients they use close)."""
        self._closed = True
        tasks = [t for s in self._slots.values() for t in (s.running, s.queued) if t is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
