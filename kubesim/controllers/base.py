"""The controller machinery: work queues fed by the store's watch events, and their workers.

Every simulated controller (and the kubelet) follows client-go's pattern: events are mapped to keys,
keys are de-duplicated in a queue, and one worker reconciles a key at a time by reading the current
state and writing the difference. A reconcile may ask to be called again after a delay (a pod that
becomes ready in 2 s, a CronJob's next schedule); nothing polls. Reconciles are synchronous and run
on the simulator's loop, so they never interleave with API writes.

This module must not know any Kubernetes kind; it only moves keys around, and hands each controller
the client it reads and writes through.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterable

from kubesim.controllers.client import Client
from kubesim.machinery.status import KubeError
from kubesim.store import Event, GroupResource, Store, Subscription

logger = logging.getLogger(__name__)
Key = tuple[str, str]
# A write that lost an optimistic-concurrency race is retried this soon.
CONFLICT_RETRY = 0.02
ERROR_RETRY = 1.0


class WorkQueue:
    """An ordered set of keys plus delayed additions; a key waits at most once."""

    def __init__(self) -> None:
        self._pending: dict[Key, None] = {}
        self._wakeup = asyncio.Event()
        self._timers: dict[Key, asyncio.TimerHandle] = {}

    def add(self, key: Key) -> None:
        if key not in self._pending:
            self._pending[key] = None
            self._wakeup.set()

    def add_after(self, key: Key, delay: float) -> None:
        """Add ``key`` after ``delay`` seconds, unless an earlier addition is already planned."""
        if delay <= 0:
            self.add(key)
            return
        loop = asyncio.get_running_loop()
        when = loop.time() + delay
        timer = self._timers.get(key)
        if timer is not None and not timer.cancelled() and timer.when() <= when:
            return
        if timer is not None:
            timer.cancel()
        self._timers[key] = loop.call_at(when, self._fire, key)

    def _fire(self, key: Key) -> None:
        self._timers.pop(key, None)
        self.add(key)

    async def get(self) -> Key:
        while not self._pending:
            self._wakeup.clear()
            await self._wakeup.wait()
        key = next(iter(self._pending))
        del self._pending[key]
        return key

    def __len__(self) -> int:
        return len(self._pending)

    def close(self) -> None:
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()


class Controller:
    """Subclasses set ``name`` and ``watches`` and implement :meth:`keys` and :meth:`reconcile`,
    reading and writing through ``client``."""

    name = "controller"
    watches: tuple[GroupResource, ...] = ()

    def __init__(self, client: Client) -> None:
        self.queue = WorkQueue()
        self.client = client

    def keys(self, event: Event) -> Iterable[Key]:
        """The keys an event makes worth reconciling (default: the object itself)."""
        meta = event.obj["metadata"]
        return [(meta.get("namespace", ""), meta["name"])]

    def reconcile(self, key: Key) -> float | None:
        """Bring ``key`` to its desired state; return seconds until it needs another look."""
        raise NotImplementedError

    def stop(self) -> None:
        """Release what the controller holds besides its queue (tasks, sessions)."""


class Manager:
    """Runs controllers: one dispatcher task for the store's events, one worker per controller."""

    def __init__(self, store: Store, controllers: list[Controller]) -> None:
        self.store = store
        self.controllers = controllers
        self._tasks: list[asyncio.Task[None]] = []

    def start(self) -> None:
        sub = self.store.subscribe(None)
        for c in self.controllers:
            for gr in c.watches:
                for obj in self.store.list(gr):
                    for key in c.keys(Event(self.store.rv, "ADDED", gr, obj)):
                        c.queue.add(key)
        self._tasks.append(asyncio.create_task(self._dispatch(sub), name="kubesim-dispatch"))
        for c in self.controllers:
            self._tasks.append(asyncio.create_task(self._work(c), name=f"kubesim-{c.name}"))

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks.clear()
        for c in self.controllers:
            c.queue.close()
            c.stop()

    async def _dispatch(self, sub: Subscription) -> None:
        with sub:
            while True:
                event = await sub.next()
                if event is None:
                    return
                for c in self.controllers:
                    if event.gr in c.watches:
                        try:
                            keys = list(c.keys(event))
                        except Exception:
                            logger.exception("%s: mapping an event failed", c.name)
                            continue
                        for key in keys:
                            c.queue.add(key)

    async def _work(self, c: Controller) -> None:
        while True:
            key = await c.queue.get()
            delay = run_once(c, key)
            if delay is not None:
                c.queue.add_after(key, delay)
            await asyncio.sleep(0)  # let API requests in between reconciles


def run_once(c: Controller, key: Key) -> float | None:
    """One reconcile with the retry policy: conflicts soon, other failures after a pause."""
    try:
        return c.reconcile(key)
    except KubeError as exc:
        if exc.code == 409:
            return CONFLICT_RETRY
        if exc.code in (403, 404):
            return None  # the namespace or the object went away under us
        logger.warning("%s: reconciling %s failed: %s", c.name, key, exc.message)
        return ERROR_RETRY
    except Exception:
        logger.exception("%s: reconciling %s failed", c.name, key)
        return ERROR_RETRY
