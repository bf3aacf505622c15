"""Server-Sent Events with the exact ``:keepalive`` comment and departure detection.

Every stream writes the comment line ``:keepalive`` every 15 s (aiohttp-sse's own ping is ``: ping``,
which the contracts do not allow). Each app has a stream registry (``install``) whose one ticker
task writes the keepalives of all its streams, instead of a task per stream: an idle stream is what a
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

A stream remembers what authenticated it (the ``CREDENTIAL`` the auth middleware put on the request:
a session's or a token's keys, and when it expires). ``StreamRegistry.revoke(key)`` (a sign-out, a
revoked token; across replicas through ``common.revocation``) ends that credential's streams with
an ``error`` event (``credential-revoked``); at its expiry, one registry task asks the credential's
``recheck`` whether it still holds (an idle session renewed meanwhile) and ends the streams if not.
No stream polls anything.

Other long-lived things a credential opened (a WebSocket session, a port-forward) join the same
registry with :meth:`StreamRegistry.guard`: anything with a ``credential``, a ``closing`` flag and
an ``end(error)`` (:class:`Guarded`) is ended by a revocation or a failed recheck exactly as an
event stream is. A recheck may raise :class:`CredentialRevoked` to say why it no longer holds.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
import json
import logging
import time
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Protocol

import attrs
from aiohttp import web
from aiohttp_sse import EventSourceResponse

from common import memory
from common.errors import Unauthorized, WharfError

logger = logging.getLogger(__name__)

KEEPALIVE_INTERVAL_S = 15.0
KEEPALIVE = b":keepalive\n\n"
STREAM_HEADERS = {"X-Accel-Buffering": "no", "Cache-Control": "no-cache"}
#: Unsent bytes above which a client counts as not reading (a keepalive would only add to them).
STUCK_BYTES = 16 * 1024
#: How long a client may read nothing before its stream is aborted (aiohttp-sse's send time-out).
SEND_TIMEOUT_S = EventSourceResponse.DEFAULT_SEND_TIMEOUT or 120.0
#: The largest event id: ids are database row numbers, signed 64-bit.
_MAX_EVENT_ID = 2**63 - 1
_MAX_ID_DIGITS = len(str(_MAX_EVENT_ID))
#: Open streams from which a burst counts: when it falls to a quarter, its memory is given back
#: (``common.memory``), ``RELEASE_DELAY_S`` later so that the last departures are in.
RELEASE_PEAK = 256
RELEASE_DELAY_S = 1.0
#: When a credential's recheck fails (its store unreachable), the next try is this much later.
RECHECK_RETRY_S = 60.0


class CredentialRevoked(Unauthorized, code="credential-revoked"): ...


@attrs.frozen
class Credential:
    """What authenticated a request, as its streams remember it: revoking any of ``keys`` ends
    them; at ``expires`` (epoch seconds) ``recheck`` tells whether it still holds (its new expiry)
    or not (None). Without ``recheck``, the expiry is final."""

    keys: tuple[str, ...]
    expires: float | None = None
    recheck: Callable[[], Awaitable[float | None]] | None = attrs.field(default=None, eq=False)


CREDENTIAL = web.RequestKey("wharf.credential", Credential)


class Guarded(Protocol):
    """Something a credential keeps open: an event stream, a WebSocket session, a port-forward."""

    @property
    def credential(self) -> Credential | None: ...
    @property
    def closing(self) -> bool: ...
    def end(self, error: WharfError) -> None: ...


class EventCheck(Protocol):
    """Tests check each event a stream writes against its operation's spec (``common.openapi``):
    its name and its ``data``."""

    def __call__(self, event: str | None, data: str) -> None: ...


EVENT_CHECK = web.RequestKey("wharf.event_check", EventCheck)


class _KeepaliveResponse(EventSourceResponse):
    """aiohttp-sse's response without a ping task of its own: the app's registry has one ticker
    write our keepalive line (in place of aiohttp-sse's ``: ping``) to all its streams."""

    async def prepare(self, request: web.BaseRequest) -> Any:
        if self.prepared:
            return await super().prepare(request)
        self._set_tcp_user_timeout(request)  # the kernel gives up on a peer that acks nothing
        writer = await web.StreamResponse.prepare(self, request)
        self.enable_chunked_encoding()
        return writer

    def stop_streaming(self) -> None:
        """No ping task to stop (aiohttp-sse's ``send`` calls this when a write fails)."""


@attrs.define
class StreamRegistry:
    """Open streams of one app: their keepalives, written by one ticker task while any stream is
    open, and their closing on shutdown."""

    streams: weakref.WeakSet[EventStream] = attrs.field(factory=weakref.WeakSet)
    interval: float = KEEPALIVE_INTERVAL_S
    _ticker: asyncio.Task[None] | None = None
    #: Everything a credential keeps open: the event streams and what ``guard`` was given.
    guarded: weakref.WeakSet[Guarded] = attrs.field(factory=weakref.WeakSet)
    _by_key: dict[str, weakref.WeakSet[Guarded]] = attrs.field(factory=dict)
    _expiries: list[tuple[float, int, weakref.ref[Guarded]]] = attrs.field(factory=list)
    _order: Any = attrs.field(factory=itertools.count)
    _sooner: asyncio.Event = attrs.field(factory=asyncio.Event)
    _expirer: asyncio.Task[None] | None = None
    #: Open streams at their most since memory was last given back (see ``discard``).
    peak: int = 0
    #: A burst this large that ends gives its memory back (``common.memory``).
    release_peak: int = RELEASE_PEAK
    releases: int = 0
    _release: asyncio.TimerHandle | None = None

    def add(self, stream: EventStream) -> None:
        self.streams.add(stream)
        self.peak = max(self.peak, len(self.streams))
        if self._ticker is None or self._ticker.done():
            self._ticker = asyncio.create_task(self._tick(), name="sse keepalives")
        self.guard(stream)

    def guard(self, held: Guarded) -> None:
        """End ``held`` when its credential is revoked or no longer holds (``unguard`` after)."""
        credential = held.credential
        if credential is None:
            return
        self.guarded.add(held)
        for key in credential.keys:
            self._by_key.setdefault(key, weakref.WeakSet()).add(held)
        if credential.expires is not None:
            self._expire_at(credential.expires, held)

    def unguard(self, held: Guarded) -> None:
        self.guarded.discard(held)
        for key in held.credential.keys if held.credential is not None else ():
            kept = self._by_key.get(key)
            if kept is not None:
                kept.discard(held)
                if not kept:
                    del self._by_key[key]
        if not self.guarded:
            if self._expirer is not None:
                self._expirer.cancel()
            self._expirer = None
            self._expiries.clear()

    def discard(self, stream: EventStream) -> None:
        self.streams.discard(stream)
        if self.peak >= self.release_peak and len(self.streams) <= self.peak // 4:
            self.peak = len(self.streams)  # a burst has ended: three quarters of it are gone
            if self._release is None:
                loop = asyncio.get_running_loop()
                self._release = loop.call_later(RELEASE_DELAY_S, self._give_back)
        self.unguard(stream)
        if not self.streams:
            if self._ticker is not None:
                self._ticker.cancel()
            self._ticker = None

    def revoke(self, key: str) -> int:
        """End the streams ``key`` authenticated; how many there were."""
        held = list(self._by_key.pop(key, ()))
        for stream in held:
            stream.end(CredentialRevoked("the session or token of this stream was revoked"))
        return len(held)

    async def close_all(self) -> None:
        for stream in list(self.streams):
            stream.close()
        if self._release is not None:
            self._release.cancel()
            self._release = None

    def _give_back(self) -> None:
        self._release = None
        self.releases += 1
        memory.give_back()

    def _expire_at(self, when: float, stream: Guarded) -> None:
        heapq.heappush(self._expiries, (when, next(self._order), weakref.ref(stream)))
        if self._expirer is None or self._expirer.done():
            self._expirer = asyncio.create_task(self._expire(), name="sse credential expiry")
        elif self._expiries[0][0] == when:
            self._sooner.set()  # the expirer sleeps until a later time: wake it

    async def _expire(self) -> None:
        while self._expiries:
            self._sooner.clear()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(max(0.0, self._expiries[0][0] - time.time())):
                    await self._sooner.wait()
            while self._expiries and self._expiries[0][0] <= time.time():
                stream = heapq.heappop(self._expiries)[2]()
                if stream is not None and not stream.closing and stream in self.guarded:
                    await self._recheck(stream)

    async def _recheck(self, stream: Guarded) -> None:
        credential = stream.credential
        assert credential is not None
        try:
            later = await credential.recheck() if credential.recheck is not None else None
        except CredentialRevoked as exc:  # the recheck says why
            stream.end(exc)
            return
        except Exception:  # its store is unreachable: the stream stays, the check comes back
            logger.warning("could not recheck a stream's credential", exc_info=True)
            later = time.time() + RECHECK_RETRY_S
        if later is not None and later > time.time():
            self._expire_at(later, stream)
        else:
            stream.end(CredentialRevoked("the session or token of this stream expired"))

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


@attrs.define(eq=False)
class EventStream:
    """What a handler writes events to."""

    response: _KeepaliveResponse
    owner: asyncio.Task[Any] | None
    departed: bool = False
    closing: bool = False
    stuck_s: float = 0.0  # how long its client has been reading nothing
    request: web.BaseRequest | None = None
    credential: Credential | None = None
    ending: WharfError | None = None  # why the server ends it, sent as a last ``error`` event
    check: EventCheck | None = None  # tests: each event against the spec (``EVENT_CHECK``)

    @property
    def last_event_id(self) -> str | None:
        return self.response.last_event_id

    @property
    def last_event_number(self) -> int | None:
        """``Last-Event-ID`` as the number of an event this server could have sent (0 up to the
        largest signed 64-bit integer, the widest id any store keeps), else None: absent, not a
        number or out of range all mean "no event seen", the way the spec says (a client that
        sends a forged id gets no replay, not an error that stops its ``EventSource``)."""
        raw = self.last_event_id
        if raw is None:
            return None
        text = raw.strip()
        if not (text.isascii() and text.isdigit() and len(text) <= _MAX_ID_DIGITS):
            return None
        number = int(text)
        return number if number <= _MAX_EVENT_ID else None

    async def send(
        self, data: str, *, event: str | None = None, event_id: str | None = None
    ) -> None:
        if self.check is not None:
            self.check(event, data)
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

    def end(self, error: WharfError) -> None:
        """End the stream with ``error`` as its last event (its credential was revoked)."""
        if not self.closing:
            self.ending = error
            self.close()

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
    registry = request.app[STREAMS]
    response = _KeepaliveResponse(headers=STREAM_HEADERS)
    # The watcher below owns the connection: it serves no other request, and the client is told.
    response.force_close()
    response.headers["Connection"] = "close"
    if request.transport is None:
        # Gone before the stream could start (a page navigating away while its watch opens):
        # nobody to answer, so the request ends as a departed client's does, not as a 500.
        raise asyncio.CancelledError
    await response.prepare(request)
    stream = EventStream(response=response, owner=asyncio.current_task(), request=request)
    stream.credential = request.get(CREDENTIAL)
    stream.check = request.get(EVENT_CHECK)
    if request.transport is None or request.transport.is_closing():
        stream._departure()  # gone before the stream even started
    else:
        _watch_departure(request, stream._departure)
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
        registry.discard(stream)
    with contextlib.suppress(ConnectionError, RuntimeError):
        if stream.ending is not None and not stream.departed:
            problem = json.dumps(stream.ending.to_problem(instance=request.path))
            if stream.check is not None:
                stream.check("error", problem)
            await response.write(f"event: error\ndata: {problem}\n\n".encode())
        await response.write_eof()


def install(app: web.Application, *, keepalive_s: float = KEEPALIVE_INTERVAL_S) -> None:
    """Give ``app`` the stream registry every event stream needs, which shutdown empties."""
    registry = StreamRegistry(interval=keepalive_s)
    app[STREAMS] = registry

    async def close_streams(_: web.Application) -> None:
        await registry.close_all()

    app.on_shutdown.append(close_streams)
