"""Multi-source logs: the containers of one pod, or of every pod a workload selects, followed at
once and interleaved by timestamp.

Pods are found through the shared pod watch of the namespace (``watches``), filtered by the
workload's selector: a pod a rollout creates joins the moment its container starts, with no
polling, and a container that restarts is followed again. At most ``max_sources`` containers are
followed; the ``sources`` event says when the cap left some out. Lines of different sources come
out in time order (``Interleaver``): a line waits in a heap ordered by timestamp until every
source still followed has sent one as late (a source's lines come in order, so nothing earlier can
follow), at most ``window_s`` (a quiet source holds the others up no longer than that).
A source that is followed again (a restart, a broken connection) or a stream resumed from a
timestamp starts from that time and drops what it had already sent.

This module must not know HTTP.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
import logging
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping
from typing import Any

import attrs

from common.errors import WharfError
from console.resources.catalog import Kind
from console.resources.kubeapi import KubeApi, path_of
from console.resources.listing import get_object
from console.streams.logs import (
    LogLine,
    Source,
    container_status,
    containers,
    follow,
    has_run,
    pod_path,
)
from console.streams.selectors import Selector, pod_selector
from console.streams.watches import Change, Resync

logger = logging.getLogger(__name__)

MAX_SOURCES = 24
WINDOW_S = 0.25
#: Lines buffered between the followers and the sender; a full buffer slows the followers (and
#: through TCP, the kubelet), it never drops a line.
BUFFER = 4096


@attrs.frozen
class Sources:
    """The sources followed (or waiting to start), and whether the cap cut some off."""

    followed: tuple[Source, ...]
    total: int
    truncated: bool


PodFilter = Callable[[Mapping[str, Any]], bool]


@attrs.frozen
class Selection:
    """The pods a log stream reads: one by name, or those a workload's selector matches."""

    pod: str | None = None
    selector: Selector | None = None

    def selects(self, pod: Mapping[str, Any]) -> bool:
        if self.selector is not None:
            return self.selector.matches(pod)
        return (pod.get("metadata") or {}).get("name") == self.pod

    async def pods(self, api: KubeApi, namespace: str) -> list[dict[str, Any]]:
        """The selected pods now, by name."""
        if self.pod is not None:
            return [await api.get(pod_path(namespace, self.pod))]
        assert self.selector is not None
        query = [("labelSelector", self.selector.query())]
        pods = await api.list_all(path_of("", "v1", "pods", namespace=namespace), query=query)
        return sorted(pods, key=lambda p: (p.get("metadata") or {}).get("name", ""))


async def select(api: KubeApi, kind: Kind, namespace: str, name: str) -> Selection:
    """``kind``/``name`` as a log selection: a pod itself, or the pods its selector matches."""
    if (kind.group, kind.resource) == ("", "pods"):
        return Selection(pod=name)
    obj = await get_object(api, kind, namespace, name)
    return Selection(selector=pod_selector(obj, f"{kind.id} {name}"))


def plan(pods: list[dict[str, Any]], *, init: bool, cap: int = MAX_SOURCES) -> Sources:
    """What a multi-source stream of ``pods`` would follow."""
    every = [s for pod in pods for s in containers(pod, init=init)]
    return Sources(tuple(every[:cap]), len(every), len(every) > cap)


TimeKey = tuple[int, int]


@attrs.define(eq=False)
class Interleaver:
    """Lines of several sources put in timestamp order; see the module docstring."""

    window_s: float
    _heap: list[tuple[TimeKey, int, float, LogLine]] = attrs.field(factory=list)
    _latest: dict[Source, TimeKey] = attrs.field(factory=dict)  # each source's newest line
    _order: Iterator[int] = attrs.field(factory=itertools.count)

    def push(self, line: LogLine, now: float) -> None:
        self._latest[line.source] = line.key
        heapq.heappush(self._heap, (line.key, next(self._order), now + self.window_s, line))

    def due(self) -> float | None:
        """When the earliest line held goes out at the latest."""
        return self._heap[0][2] if self._heap else None

    def ready(self, now: float, followed: Iterable[Source]) -> list[LogLine]:
        """The lines that may go out now, in order."""
        marks = [self._latest.get(source) for source in followed]
        known = [m for m in marks if m is not None]
        mark = min(known) if known and len(known) == len(marks) else None
        out = []
        heap = self._heap
        while heap and (heap[0][2] <= now or (mark is not None and heap[0][0] <= mark)):
            out.append(heapq.heappop(heap)[3])
        return out


@attrs.define(eq=False)
class LogMux:
    api: KubeApi
    namespace: str
    tail_lines: int
    init: bool = False
    after: str | None = None  # resume: only lines stamped later than this
    container: str | None = None  # follow only this container of each pod
    max_sources: int = MAX_SOURCES
    window_s: float = WINDOW_S
    _out: asyncio.Queue[LogLine | Sources] = attrs.field(
        factory=lambda: asyncio.Queue(maxsize=BUFFER)
    )
    _tasks: dict[Source, asyncio.Task[None]] = attrs.field(factory=dict)
    _last: dict[Source, str] = attrs.field(factory=dict)
    _done: dict[Source, int] = attrs.field(factory=dict)  # restart count whose run was read out
    _known: dict[Source, None] = attrs.field(factory=dict)  # every source seen, in order
    _sent_sources: Sources | None = None

    # -- sources ------------------------------------------------------------------------------
    def offer(self, pod: Mapping[str, Any]) -> None:
        """A pod (from a list or a watch event): follow its containers that have a run."""
        if (pod.get("metadata") or {}).get("deletionTimestamp"):
            return
        for source in containers(pod, init=self.init or self.container is not None):
            if self.container is not None and source.container != self.container:
                continue
            self._known.setdefault(source, None)
            status = container_status(pod, source.container)
            restarts = int((status or {}).get("restartCount") or 0)
            if source in self._tasks or not has_run(status) or not self._admits(source):
                continue
            if self._done.get(source) == restarts and "running" not in (status or {}).get(
                "state", {}
            ):
                continue  # this run was read to its end already
            self._start(source, restarts)
        self._announce()

    def _admits(self, source: Source) -> bool:
        return list(self._known).index(source) < self.max_sources

    def sources(self) -> Sources:
        known = list(self._known)
        return Sources(tuple(known[: self.max_sources]), len(known), len(known) > self.max_sources)

    def _announce(self) -> None:
        current = self.sources()
        if current != self._sent_sources:
            self._sent_sources = current
            with contextlib.suppress(asyncio.QueueFull):
                self._out.put_nowait(current)

    def _start(self, source: Source, restarts: int) -> None:
        task = asyncio.create_task(self._follow(source, restarts), name=f"log {source}")
        self._tasks[source] = task

    async def _follow(self, source: Source, restarts: int) -> None:
        since = self._last.get(source) or self.after
        tail = None if since else self.tail_lines
        try:
            async for line in follow(
                self.api, self.namespace, source, tail_lines=tail, since=since
            ):
                self._last[source] = line.time
                await self._out.put(line)
            self._done[source] = restarts
        except WharfError as exc:  # not started after all, or gone: the next pod event retries
            logger.debug("log of %s/%s ended: %s", self.namespace, source, exc.detail)
        finally:
            self._tasks.pop(source, None)

    async def watch_pods(self, changes: AsyncIterator[Change | Resync], selects: PodFilter) -> None:
        """Offer every pod of ``changes`` (a shared pod watch) that ``selects`` accepts."""
        async for change in changes:
            if isinstance(change, Change) and change.type != "DELETED" and selects(change.obj):
                self.offer(change.obj)

    # -- output -------------------------------------------------------------------------------
    async def lines(self) -> AsyncIterator[LogLine | Sources]:
        """Lines in timestamp order (``Interleaver``), and ``Sources`` whenever they change."""
        merge = Interleaver(self.window_s)
        loop = asyncio.get_running_loop()
        while True:
            due = merge.due()
            items: list[LogLine | Sources] = []
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(None if due is None else max(0.0, due - loop.time())):
                    items.append(await self._out.get())
            while not self._out.empty():  # what else came meanwhile, in one turn
                items.append(self._out.get_nowait())
            for item in items:
                if isinstance(item, Sources):
                    yield item
                else:
                    merge.push(item, loop.time())
            for line in merge.ready(loop.time(), self._tasks):
                yield line

    async def close(self, *others: asyncio.Task[Any]) -> None:
        """End every follower, and ``others`` (the pod watcher) with them."""
        await cancel_and_wait([*others, *self._tasks.values()])


async def cancel_and_wait(tasks: Iterable[asyncio.Task[Any]]) -> None:
    """Cancel ``tasks`` and wait until they have ended, even when the caller is cancelled again
    meanwhile (a departed client, then shutdown): a follower left running holds a connection."""
    pending = [t for t in tasks if not t.done()]
    for task in pending:
        task.cancel()
    interrupted = False
    while pending:
        try:
            await asyncio.wait(pending)
        except asyncio.CancelledError:
            interrupted = True
        pending = [t for t in pending if not t.done()]
    if interrupted:
        raise asyncio.CancelledError
