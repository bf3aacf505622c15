"""Server-Sent Events with the exact ``:keepalive`` comment and departure detection.

Every stream writes the comment line ``:keepalive`` every 15 s (aiohttp-sse's own ping is ``: ping``,
which the contracts do not allow). In an app with a stream registry (``install``), one ticker task
writes the keepalives of all its streams, instead of a task per stream: an idle stream is what a
busy server holds thousands of, so each costs what it must and no more. The ticker never waits on
a client: a stream with 16 KiB still unsent skips its keepalive, and one that stays stuck for
``SEND_TIMEOUT_S`` is aborted. A departed client is noticed the moment its connection closes:
once the stream has started, the connection's payload parser is a watcher (the hook aiohttp's own
WebSocket support uses), and aiohttp tells it when the transport is lost. The stream then cancels
the handler task that owns it, so the handler's ``finally`` releases what it holds (cluster
watches, subscriptions) at once, not at the next keepalive. A write that fails (a peer that
vanished without closing) does the same. A stream's connection is never reused for another
request. Streams register in a per-app registry and are closed on shutdown. This module must not
know what is streamed.
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections.abc import AsyncIterator, Callable
from typing import Any

import attrs
from aiohttp import web
from aiohttp_sse import EventSourceResponse

KEEPALIVE_INTERVAL_S = 15.0
KEEPALIVE = b":keepalive\n\n"
STREAM_HEADERS = {"X-Accel-Buffering": "no", "Cache-Control": "no-cache"}
#: Unsent bytes above which a client counts as not reading (a keepalive would only add to them).
STUCK_BYTES = 16 * 1024
#: How long a client may read nothing before its stream is aborted (aiohttp-sse's send time-out).
SEND_TIMEOUT_S = EventSourceResponse.DEFAULT_SEND_TIMEOUT or 120.0


class _KeepaliveResponse(EventSourceResponse):
    """aiohttp-sse's response with our keepalive line in place of its ping; with ``shared``, no
    ping task of its own (the registry's ticker writes its keepalives)."""

    on_departed: Callable[[], None] | None = None
    shared: bool = False

    async def prepare(self, request: web.BaseRequest) -> Any:
        if not self.shared or self.prepared:
            return await super().prepare(request)
        self._set_tcp_user_timeout(request)  # the kernel gives up on a peer that acks nothing
        writer = await web.StreamResponse.prepare(self, request)
        self.enable_chunked_encoding()
        return writer

    def stop_streaming(self) -> None:
        if not self.shared:
            super().stop_streaming()

    async def wait(self) -> None:
        if not self.shared:
            await super().wait()

    async def _ping(self) -> None:
        while True:
            await asyncio.sleep(self._ping_interval)
            try:
                async with asyncio.timeout(self._ping_interval):
                    await self.write(KEEPALIVE)
            except (ConnectionError, RuntimeError, TimeoutError):
                if self.on_departed is not None:
                    self.on_departed()
                return


@attrs.define
class StreamRegistry:
    """Open streams of one app: their keepalives, written by one ticker task while any stream is
    open, and their closing on shutdown."""

    streams: weakref.WeakSet[EventStream] = attrs.field(factory=weakref.WeakSet)
    interval: float = KEEPALIVE_INTERVAL_S
    _ticker: asyncio.Task[None] | None = None

    def add(self, stream: EventStream) -> None:
        self.streams.add(stream)
        if self._ticker is None or self._ticker.done():
            self._ticker = asyncio.create_task(self._tick(), name="sse keepalives")

    def discard(self, stream: EventStream) -> None:
        self.streams.discard(stream)
        if not self.streams and self._ticker is not None:
            self._ticker.cancel()
            self._ticker = None

    async def close_all(self) -> None:
        for stream in list(self.streams):
            stream.close()

    async def _tick(self) -> None:
        while self.streams:
            await asyncio.sleep(self.interval)
            for stream in list(self.streams):
                await stream.keepalive(self.interval)


class _DepartureWatch:
    """The connection's payload parser while a stream runs. A client sends nothing on an event
    stream, so whatever it sends is dropped; ``feed_eof`` is aiohttp saying the transport is
    gone."""

    def __init__(self, departed: Callable[[], None]) -> None:
        self._departed = departed

    def feed_data(self, data: bytes) -> tuple[bool, bytes]:
        return False, b""

    def feed_eof(self) -> None:
        self._departed()


def _watch_departure(request: web.Request, departed: Callable[[], None]) -> bool:
    """Have ``departed`` called when the client's connection closes; False if it cannot be."""
    protocol = request.protocol
    set_parser = getattr(protocol, "set_parser", None)
    if set_parser is None or getattr(protocol, "_payload_parser", True) is not None:
        return False  # not aiohttp's HTTP/1 protocol as we know it: keepalives still notice
    set_parser(_DepartureWatch(departed))
    return True


STREAMS = web.AppKey("wharf.streams", StreamRegistry)
KEEPALIVE_S = web.AppKey("wharf.keepalive_s", float)


@attrs.define(eq=False)
class EventStream:
    """What a handler writes events to."""

    response: _KeepaliveResponse
    owner: asyncio.Task[Any] | None
    departed: bool = False
    closing: bool = False
    stuck_s: float = 0.0  # how long its client has been reading nothing
    request: web.BaseRequest | None = None

    @property
    def last_event_id(self) -> str | None:
        return self.response.last_event_id

    async def send(
        self, data: str, *, event: str | None = None, event_id: str | None = None
    ) -> None:
        try:
            await self.response.send(data, id=event_id, event=event)
        except (ConnectionError, RuntimeError):
            self._departure()
            raise asyncio.CancelledError from None

    async def keepalive(self, interval: float) -> None:
        """Write the keepalive line unless the client is not reading (then count how long)."""
        transport = self.request.transport if self.request is not None else None
        if self.closing or transport is None or transport.is_closing():
            self._departure()
            return
        if transport.get_write_buffer_size() > STUCK_BYTES:
            self.stuck_s += interval
            if self.stuck_s >= SEND_TIMEOUT_S:
                transport.abort()  # a graceful close would wait on the client forever
                self._departure()
            return
        self.stuck_s = 0.0
        try:
            await self.response.write(KEEPALIVE)
        except (ConnectionError, RuntimeError):
            self._departure()

    def close(self) -> None:
        """End the stream from the server side (shutdown, or the source ended)."""
        self.closing = True
        if self.owner is not None and not self.owner.done():
            self.owner.cancel()

    def _departure(self) -> None:
        if not self.closing:
            self.departed = True
            self.closing = True
            if self.owner is not None and not self.owner.done():
                self.owner.cancel()


@contextlib.asynccontextmanager
async def event_stream(request: web.Request) -> AsyncIterator[EventStream]:
    """Open an SSE response; on client departure or shutdown the body of the ``with`` is cancelled
    and the context exits normally, after the caller's own ``finally`` blocks have run."""
    interval = request.app.get(KEEPALIVE_S, KEEPALIVE_INTERVAL_S)
    registry = request.app.get(STREAMS)
    response = _KeepaliveResponse(headers=STREAM_HEADERS, ping_interval=interval)
    response.shared = registry is not None
    # The watcher below owns the connection: it serves no other request, and the client is told.
    response.force_close()
    response.headers["Connection"] = "close"
    await response.prepare(request)
    stream = EventStream(response=response, owner=asyncio.current_task(), request=request)
    response.on_departed = stream._departure
    if request.transport is None or request.transport.is_closing():
        stream._departure()  # gone before the stream even started
    else:
        _watch_departure(request, stream._departure)
    if registry is not None:
        registry.add(stream)
    try:
        yield stream
    except asyncio.CancelledError:
        task = asyncio.current_task()
        if not stream.closing or task is None:
            raise
        task.uncancel()  # our own cancellation: a departed client or shutdown, not an error
    finally:
        stream.closing = True
        if registry is not None:
            registry.discard(stream)
        with contextlib.suppress(Exception):
            response.stop_streaming()
            await response.wait()
    with contextlib.suppress(ConnectionError, RuntimeError):
        await response.write_eof()


def install(app: web.Application, *, keepalive_s: float = KEEPALIVE_INTERVAL_S) -> None:
    """Give ``app`` a stream registry that shutdown empties, and its keepalive interval."""
    registry = StreamRegistry(interval=keepalive_s)
    app[STREAMS] = registry
    app[KEEPALIVE_S] = keepalive_s

    async def close_streams(_: web.Application) -> None:
        await registry.close_all()

    app.on_shutdown.append(close_streams)
