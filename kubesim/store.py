"""In-memory object storage with one global resourceVersion, an event log and subscriptions.

This is the simulator's etcd plus watch cache. It stores whatever the ``objects`` layer hands it and
never applies API semantics itself (no defaulting, no validation, no GC). Every write gets the next
resourceVersion and is appended to a bounded event history; watchers resume from that history and get
410 Expired when their start point has been compacted away. Controllers (part 2 of the simulator)
use :meth:`Store.subscribe` exactly as the HTTP watch does.

Stored objects are never mutated after :meth:`Store.commit`: readers may share them freely, writers
deep-copy first. All methods must be called on the simulator's event-loop thread.
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Iterator
from typing import Any

import attrs

from kubesim.machinery.status import expired

GroupResource = tuple[str, str]
Obj = dict[str, Any]
Objects = list[Obj]  # aliases: Store.list shadows the builtin inside the class
Owned = list[tuple[GroupResource, Obj]]


@attrs.frozen
class Event:
    """One change: ``type`` is ADDED, MODIFIED or DELETED; ``old`` is the previous state."""

    rv: int
    type: str
    gr: GroupResource
    obj: Obj
    old: Obj | None = None


class Subscription:
    """A live feed of events for one group-resource (or all of them); close it when done."""

    def __init__(self, store: Store, gr: GroupResource | None) -> None:
        self.gr = gr
        self.queue: asyncio.Queue[Event | None] = asyncio.Queue()
        self._store = store

    def close(self) -> None:
        self._store._subscriptions.discard(self)

    def __enter__(self) -> Subscription:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def next(self) -> Event | None:
        """The next event, or None once the store has shut down."""
        return await self.queue.get()


def key_of(obj: Obj) -> tuple[str, str]:
    meta = obj["metadata"]
    return (meta.get("namespace", ""), meta["name"])


class Store:
    def __init__(self, *, history: int = 2000) -> None:
        self._objects: dict[GroupResource, dict[tuple[str, str], Obj]] = {}
        self._history: collections.deque[Event] = collections.deque(maxlen=history)
        self._subscriptions: set[Subscription] = set()
        self._uids: dict[str, tuple[GroupResource, tuple[str, str]]] = {}
        self._owned: dict[str, set[tuple[GroupResource, tuple[str, str]]]] = {}
        self.rv = 1
        # The newest resourceVersion that fell out of the history: starting a watch at or before
        # it cannot be served any more.
        self.compacted_rv = 0

    # -- reads ------------------------------------------------------------------------------
    def get(self, gr: GroupResource, namespace: str, name: str) -> Obj | None:
        return self._objects.get(gr, {}).get((namespace, name))

    def list(self, gr: GroupResource, namespace: str | None = None) -> Objects:
        items = self._objects.get(gr, {})
        keys = sorted(k for k in items if namespace is None or k[0] == namespace)
        return [items[k] for k in keys]

    def group_resources(self) -> tuple[GroupResource, ...]:
        return tuple(gr for gr, items in self._objects.items() if items)

    def all_objects(self) -> Iterator[tuple[GroupResource, Obj]]:
        for gr, items in list(self._objects.items()):
            for obj in list(items.values()):
                yield gr, obj

    def count_in_namespace(self, namespace: str) -> int:
        return sum(1 for items in self._objects.values() for k in items if k[0] == namespace)

    # -- writes -----------------------------------------------------------------------------
    def commit(self, gr: GroupResource, obj: Obj) -> Obj:
        """Store ``obj`` (created or replaced) under the next resourceVersion and emit the event."""
        self.rv += 1
        obj["metadata"]["resourceVersion"] = str(self.rv)
        items = self._objects.setdefault(gr, {})
        key = key_of(obj)
        old = items.get(key)
        items[key] = obj
        self._unindex(gr, old)
        self._index(gr, obj)
        self._emit(Event(self.rv, "MODIFIED" if old is not None else "ADDED", gr, obj, old))
        return obj

    def remove(self, gr: GroupResource, namespace: str, name: str) -> Obj | None:
        """Remove an object; the DELETED event carries it with the deletion's resourceVersion."""
        old = self._objects.get(gr, {}).pop((namespace, name), None)
        if old is None:
            return None
        self._unindex(gr, old)
        self.rv += 1
        gone = {**old, "metadata": {**old["metadata"], "resourceVersion": str(self.rv)}}
        self._emit(Event(self.rv, "DELETED", gr, gone, old))
        return gone

    # -- uid and owner indexes (the garbage collector's graph) ------------------------------
    def _index(self, gr: GroupResource, obj: Obj) -> None:
        meta, where = obj["metadata"], (gr, key_of(obj))
        if meta.get("uid"):
            self._uids[meta["uid"]] = where
        for ref in meta.get("ownerReferences") or []:
            self._owned.setdefault(str(ref.get("uid", "")), set()).add(where)

    def _unindex(self, gr: GroupResource, obj: Obj | None) -> None:
        if obj is None:
            return
        meta, where = obj["metadata"], (gr, key_of(obj))
        if self._uids.get(meta.get("uid", "")) == where:
            del self._uids[meta["uid"]]
        for ref in meta.get("ownerReferences") or []:
            owned = self._owned.get(str(ref.get("uid", "")))
            if owned is not None:
                owned.discard(where)
                if not owned:
                    del self._owned[str(ref.get("uid", ""))]

    def by_uid(self, uid: str) -> tuple[GroupResource, Obj] | None:
        where = self._uids.get(uid)
        if where is None:
            return None
        obj = self.get(where[0], *where[1])
        return (where[0], obj) if obj is not None else None

    def dependents(self, uid: str) -> Owned:
        """Objects with an ownerReference to ``uid``, in a stable order."""
        out: Owned = []
        for gr, key in sorted(self._owned.get(uid, ())):
            obj = self.get(gr, *key)
            if obj is not None:
                out.append((gr, obj))
        return out

    def drop_group_resource(self, gr: GroupResource) -> Objects:
        """Remove every object of a type (a CRD went away); emits DELETED for each."""
        return [o for o in (self.remove(gr, *key_of(x)) for x in self.list(gr)) if o is not None]

    def _emit(self, event: Event) -> None:
        if len(self._history) == self._history.maxlen:
            self.compacted_rv = self._history[0].rv
        self._history.append(event)
        for sub in list(self._subscriptions):
            if sub.gr is None or sub.gr == event.gr:
                sub.queue.put_nowait(event)

    # -- watch support ----------------------------------------------------------------------
    def subscribe(self, gr: GroupResource | None) -> Subscription:
        sub = Subscription(self, gr)
        self._subscriptions.add(sub)
        return sub

    def subscribers(self, gr: GroupResource) -> int:
        """Open subscriptions to exactly ``gr``: one per watch a client holds on it (the
        controllers subscribe to every resource at once and are not counted)."""
        return sum(1 for sub in self._subscriptions if sub.gr == gr)

    def events_since(self, gr: GroupResource | None, rv: int) -> tuple[Event, ...]:
        """Events after ``rv``; raises 410 Expired when the history no longer reaches back to it."""
        if rv < self.compacted_rv:
            raise expired(f"too old resource version: {rv} ({self.compacted_rv + 1})")
        return tuple(e for e in self._history if e.rv > rv and (gr is None or e.gr == gr))

    def close(self) -> None:
        """Wake every subscriber with the end-of-stream marker."""
        for sub in list(self._subscriptions):
            sub.queue.put_nowait(None)
        self._subscriptions.clear()
