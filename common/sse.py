"""Server-Sent Events with the exact ``:keepalive`` comment and departure detection.

Every stream writes the comment line ``:keepalive`` every 15 s (aiohttp-sse's own ping is ``: ping``,
which the contracts do not allow). A write to a departed client fails; the stream then cancels the
handler task that owns it, so the handler's ``finally`` releases what it holds (cluster watches,
subscriptions) within one interval. Streams register in a per-app registry and are closed on
shutdown. This module must not know what is streamed.
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


class _KeepaliveResponse(EventSourceResponse):
    """aiohttp-sse's response with our keepalive line in place of its ping."""

    on_departed: Callable[[], None] | None = None

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
    """Open streams of one app, closed on shutdown."""

    streams: weakref.WeakSet[EventStream] = attrs.field(factory=weakref.WeakSet)

    async def close_all(self) -> None:
        for stream in list(self.streams):
            stream.close()


STREAMS = web.AppKey("wharf.streams", StreamRegistry)
KEEPALIVE_S = web.AppKey("wharf.keepalive_s", float)


@attrs.define(eq=False)
class EventStream:
    """What a handler writes events to."""

    response: _KeepaliveResponse
    owner: asyncio.Task[Any] | None
    departed: bool = False
    closing: bool = False

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
    response = _KeepaliveResponse(headers=STREAM_HEADERS, ping_interval=interval)
    await response.prepare(request)
    stream = EventStream(response=response, owner=asyncio.current_task())
    response.on_departed = stream._departure
    registry = request.app.get(STREAMS)
    if registry is not None:
        registry.streams.add(stream)
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
            registry.streams.discard(stream)
        with contextlib.suppress(Exception):
            response.stop_streaming()
            await response.wait()
    with contextlib.suppress(ConnectionError, RuntimeError):
        await response.write_eof()


def install(app: web.Application, *, keepalive_s: float = KEEPALIVE_INTERVAL_S) -> None:
    """Give ``app`` a stream registry that shutdown empties, and its keepalive interval."""
    registry = StreamRegistry()
    app[STREAMS] = registry
    app[KEEPALIVE_S] = keepalive_s

    async def close_streams(_: web.Application) -> None:
        await registry.close_all()

    app.on_shutdown.append(close_streams)
