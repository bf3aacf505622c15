"""Shared watches: one upstream watch per (cluster, resource, namespace), fanned out to every
subscriber.

The original console opened one API-server watch per SSE client and leaked them; here a
:class:`SharedWatch` lists once, keeps the current objects (projected) in a cache, watches from the
list's resourceVersion with bookmarks, and hands each change to every subscriber's bounded queue.
A new subscriber gets the cache as ADDED, then live changes, with nothing missed or doubled (the
snapshot and the joining happen in one step of the event loop). A 410 Gone re-lists and tells every
subscriber to resync; a subscriber whose queue overflows is told the same, alone, instead of
holding the others up. A resync is a marker followed by the full current state as ADDED: the
client drops what it had. The upstream watch ends ``linger_s`` after its last subscriber leaves.

A subscriber who comes with a person's ``KubeApi`` (the cluster impersonates) is admitted only
when the cluster's SubjectAccessReview says that person may ``list`` and ``watch`` the resource in
the namespace (``console.resources.access``), and is asked again every ``recheck_s``: once the
answer is no, the subscriber's stream ends with the cluster's 403. The upstream watch itself is
always the console's own, so people with the same view share one.

This module must not know HTTP or how events are encoded for a client.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import attrs

from common.errors import WharfError
from console.resources.access import AccessReviews
from console.resources.catalog import Kind
from console.resources.kubeapi import KubeApi, is_status, lines, refused
from console.resources.listing import collection, project

logger = logging.getLogger(__name__)

#: Changes a subscriber may fall behind by before it is resynced instead.
QUEUE_SIZE = 256
#: Seconds an upstream watch stays open after its last subscriber left (a reload re-subscribes).
LINGER_S = 5.0
#: Upstream watch requests end after this many seconds (the API server's own cap is 30 min);
#: the watch then resumes from its last resourceVersion.
WATCH_TIMEOUT_S = 300
#: Consecutive failed reconnects before the subscribers are told the watch broke.
MAX_FAILURES = 5
#: First reconnect delay in seconds; doubles per failure.
BACKOFF_S = 0.2

Key = tuple[str, str, str]  # (cluster id, resource id, namespace or "")


@attrs.define(eq=False)
class Change:
    """One change as subscribers see it: ``type`` ADDED, MODIFIED or DELETED, the projected object.
    ``encoded`` is for the encoder: a change fanned out to N subscribers is encoded once per form."""

    type: str
    obj: dict[str, Any]
    encoded: dict[str, str] = attrs.field(factory=dict)


@attrs.frozen
class Resync:
    """The subscriber must drop its state: the full current state follows as ADDED changes.
    ``reason``: ``expired`` (the upstream history was compacted, 410) or ``overflow`` (it fell
    ``QUEUE_SIZE`` changes behind)."""

    reason: str


class WatchBroken(WharfError, status=502, code="watch-failed"):
    """The upstream watch failed for good (the cluster went away, or refused to re-list)."""


def _obj_key(obj: dict[str, Any]) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return (meta.get("namespace") or "", meta.get("name") or "")


class Subscriber:
    """One client's view: a bounded queue of changes, or a pending resync."""

    __slots__ = ("_queue", "_wake", "broken", "closed", "resync", "watch")

    def __init__(self, watch: SharedWatch) -> None:
        self.watch = watch
        self._queue: collections.deque[Change] = collections.deque()
        self._wake = asyncio.Event()
        self.resync: str | None = None
        self.broken: WharfError | None = None
        self.closed = False

    def push(self, change: Change) -> None:
        if self.resync is not None:
            return  # the resync sends the state anyway
        if len(self._queue) >= self.watch.queue_size:
            self.tell_resync("overflow")
            return
        self._queue.append(change)
        self._wake.set()

    def tell_resync(self, reason: str) -> None:
        self._queue.clear()
        self.resync = reason
        self._wake.set()

    def fail(self, error: WharfError) -> None:
        self.broken = error
        self._wake.set()

    async def changes(self, snapshot: list[dict[str, Any]]) -> AsyncIterator[Change | Resync]:
        """The snapshot as ADDED, then live changes and resyncs; raises once the watch broke."""
        for obj in snapshot:
            yield Change("ADDED", obj)
        while True:
            if self.broken is not None:
                raise self.broken
            if self.resync is not None:
                reason, self.resync = self.resync, None
                yield Resync(reason)
                for obj in self.watch.snapshot():
                    yield Change("ADDED", obj)
            elif self._queue:
                yield self._queue.popleft()
            else:
                self._wake.clear()
                await self._wake.wait()


@attrs.define(eq=False)
class SharedWatch:
    """The upstream watch of one key and its cache; owned by the :class:`WatchHub`."""

    key: Key
    kind: Kind
    api: KubeApi
    queue_size: int = QUEUE_SIZE
    cache: dict[tuple[str, str], dict[str, Any]] = attrs.field(factory=dict)
    subscribers: set[Subscriber] = attrs.field(factory=set)
    holders: int = 0  # subscribers, counting those still waiting for the first list
    synced: asyncio.Future[None] = attrs.field(
        factory=lambda: asyncio.get_running_loop().create_future()
    )
    task: asyncio.Task[None] | None = None
    resource_version: str = ""
    connects: int = 0  # upstream watch requests made (reconnects included)

    @property
    def alive(self) -> bool:
        return self.task is not None and not self.task.done()

    def snapshot(self) -> list[dict[str, Any]]:
        return list(self.cache.values())

    async def run(self) -> None:
        try:
            await self._list()
            if not self.synced.done():
                self.synced.set_result(None)
            await self._follow()
        except asyncio.CancelledError:
            raise
        except WharfError as exc:
            self.fail(exc)
        except Exception as exc:
            logger.exception("watch of %s failed", self.key)
            self.fail(WatchBroken(f"the watch failed ({type(exc).__name__})"))

    def fail(self, exc: WharfError) -> None:
        if not self.synced.done():
            self.synced.set_exception(exc)
            self.synced.exception()  # retrieved: waiting subscribers get it from their own await
        for sub in self.subscribers:
            sub.fail(exc)

    async def _list(self) -> None:
        path = collection(self.kind, self.key[2] or None)
        fresh: dict[tuple[str, str], dict[str, Any]] = {}
        rv = ""
        async for page in self.api.chunks(path):
            rv = str((page.get("metadata") or {}).get("resourceVersion") or rv)
            for item in page.get("items") or []:
                if isinstance(item, dict):
                    obj = dict(project(item, self.kind))
                    fresh[_obj_key(obj)] = obj
        self.cache, self.resource_version = fresh, rv

    async def _follow(self) -> None:
        failures = 0
        while True:
            started = asyncio.get_running_loop().time()
            try:
                await self._watch_once()
                # A watch the server ends at once, again and again, must not spin.
                short = asyncio.get_running_loop().time() - started < 1.0
                failures = failures + 1 if short else 0
                if failures:
                    await asyncio.sleep(BACKOFF_S * 2 ** min(failures - 1, 5))
            except WharfError as exc:
                if is_status(exc, 410):
                    await self._relist()
                    continue
                failures += 1
                if failures >= MAX_FAILURES or is_status(exc, 401, 403, 404):
                    raise
                await asyncio.sleep(BACKOFF_S * 2 ** (failures - 1))

    async def _relist(self) -> None:
        await self._list()
        for sub in self.subscribers:
            sub.tell_resync("expired")

    async def _watch_once(self) -> None:
        query = [
            ("watch", "true"),
            ("allowWatchBookmarks", "true"),
            ("resourceVersion", self.resource_version),
            ("timeoutSeconds", str(WATCH_TIMEOUT_S)),
        ]
        path = collection(self.kind, self.key[2] or None)
        self.connects += 1
        async with self.api.open_stream(path, query=query) as body:
            async for line in lines(body):
                if line:
                    self._apply(json.loads(line))

    def _apply(self, event: dict[str, Any]) -> None:
        kind, obj = event.get("type"), event.get("object")
        if not isinstance(obj, dict):
            return
        if kind == "ERROR":
            raise refused(int(obj.get("code") or 500), json.dumps(obj).encode())
        rv = (obj.get("metadata") or {}).get("resourceVersion")
        if rv:
            self.resource_version = str(rv)
        if kind not in ("ADDED", "MODIFIED", "DELETED"):
            return  # BOOKMARK: only the resourceVersion moves
        projected = dict(project(obj, self.kind))
        key = _obj_key(projected)
        if kind == "DELETED":
            self.cache.pop(key, None)
        else:
            self.cache[key] = projected
        change = Change(kind, projected)
        for sub in self.subscribers:
            sub.push(change)


@attrs.define
class WatchHub:
    """Every shared watch of the app, by key; closes a watch ``linger_s`` after its last subscriber
    left, and at once when its cluster is removed or re-pointed."""

    linger_s: float = LINGER_S
    queue_size: int = QUEUE_SIZE
    watches: dict[Key, SharedWatch] = attrs.field(factory=dict)
    #: Answers whether a person may watch (None: nobody is checked; tests of the fan-out).
    reviews: AccessReviews | None = None
    _closers: dict[Key, asyncio.TimerHandle] = attrs.field(factory=dict)
    _tasks: set[asyncio.Task[None]] = attrs.field(factory=set)

    @contextlib.asynccontextmanager
    async def subscribe(
        self, cluster_id: str, kind: Kind, namespace: str | None, api: KubeApi
    ) -> AsyncIterator[AsyncIterator[Change | Resync]]:
        """The changes of ``kind`` in ``namespace`` (all when None) on ``api``, the cluster's
        current client; the first list's refusal, or the cluster's refusal of the person ``api``
        acts as, raises here, before the caller answers."""
        key: Key = (cluster_id, kind.id, (namespace or "") if kind.namespaced else "")
        admit = self._admission(kind, namespace, api)
        if admit is not None:
            await admit()
        watch = self._acquire(key, kind, api.own())
        try:
            await asyncio.shield(watch.synced)
            sub = Subscriber(watch)
            snapshot = watch.snapshot()  # no await between the snapshot and joining the fan-out
            watch.subscribers.add(sub)
            recheck = None if admit is None else asyncio.create_task(_recheck(sub, admit, self))
            try:
                yield sub.changes(snapshot)
            finally:
                watch.subscribers.discard(sub)
                if recheck is not None:
                    recheck.cancel()
        finally:
            self._release(watch)

    def _admission(
        self, kind: Kind, namespace: str | None, api: KubeApi
    ) -> Callable[[], Awaitable[None]] | None:
        reviews, person = self.reviews, api.acting_as
        if reviews is None or person is None:
            return None
        scope = namespace if kind.namespaced else None

        async def admit() -> None:
            await reviews.require(
                api,
                person,
                ("list", "watch"),
                group=kind.group,
                resource=kind.resource,
                namespace=scope,
            )

        return admit

    def _acquire(self, key: Key, kind: Kind, api: KubeApi) -> SharedWatch:
        watch = self.watches.get(key)
        if watch is None or not watch.alive:
            watch = SharedWatch(key, kind, api, queue_size=self.queue_size)
            watch.task = asyncio.create_task(watch.run(), name=f"watch {key}")
            self._tasks.add(watch.task)
            watch.task.add_done_callback(self._tasks.discard)
            self.watches[key] = watch
        closer = self._closers.pop(key, None)
        if closer is not None:
            closer.cancel()
        watch.holders += 1
        return watch

    def _release(self, watch: SharedWatch) -> None:
        watch.holders -= 1
        if watch.holders > 0 or self.watches.get(watch.key) is not watch:
            return
        if not watch.alive or self.linger_s <= 0:
            self._stop(watch)
        else:
            loop = asyncio.get_running_loop()
            self._closers[watch.key] = loop.call_later(self.linger_s, self._stop_idle, watch)

    def _stop_idle(self, watch: SharedWatch) -> None:
        self._closers.pop(watch.key, None)
        if watch.holders == 0:
            self._stop(watch)

    def _stop(self, watch: SharedWatch) -> None:
        if self.watches.get(watch.key) is watch:
            del self.watches[watch.key]
        closer = self._closers.pop(watch.key, None)
        if closer is not None:
            closer.cancel()
        if watch.task is not None:
            watch.task.cancel()

    async def cluster_changed(self, cluster_id: str, event: str) -> None:
        """The registry's listener: a removed or re-pointed cluster ends its watches."""
        for watch in [w for k, w in self.watches.items() if k[0] == cluster_id]:
            self._stop(watch)
            watch.fail(WatchBroken(f"cluster {cluster_id!r} was {event}"))

    async def close(self) -> None:
        """Stop every watch and wait until their connections are closed (shutdown)."""
        for watch in list(self.watches.values()):
            self._stop(watch)
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    def upstream_count(self) -> int:
        return len(self.watches)


async def _recheck(sub: Subscriber, admit: Callable[[], Awaitable[None]], hub: WatchHub) -> None:
    """Ask again every ``recheck_s`` (the reviews' TTL): a no ends the subscriber's stream."""
    assert hub.reviews is not None
    while True:
        await asyncio.sleep(hub.reviews.ttl_s)
        try:
            await admit()
        except WharfError as exc:
            sub.fail(exc)
            return
