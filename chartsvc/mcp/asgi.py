"""Serve one aiohttp request through an ASGI application (the ``mcp`` package's HTTP transports).

The SDK's streamable-HTTP and SSE transports are ASGI applications written for Starlette; this is
the small bridge that lets aiohttp run them: the request becomes an ASGI scope, its body the
``http.request`` messages, and the application's ``http.response.*`` messages a ``StreamResponse``.
After the body, ``receive`` waits until the client leaves or the server shuts down and then answers
``http.disconnect``, which is how the transports learn to end their event streams. aiohttp has no
disconnect callback for a request whose body was read, so departure is seen by polling the
connection (``POLL_S``) or by a failed write. A body over the ``limit`` given to :func:`serve` is
refused (413 problem) before it is read when its length is declared, else once it passes the limit.
This module knows nothing of MCP.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import weakref
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import attrs
from aiohttp import web

from common.app import REQUEST_ID, REQUEST_ID_HEADER
from common.errors import PayloadTooLarge

logger = logging.getLogger(__name__)

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

#: The scope entry holding the aiohttp request, for code downstream of the ASGI app that needs it.
SCOPE_REQUEST = "wharf.aiohttp_request"
POLL_S = 0.5
WIND_DOWN_S = 10.0
CHUNK = 64 * 1024
_HOP_BY_HOP = frozenset({"connection", "content-length", "transfer-encoding", "keep-alive"})


@attrs.define
class Exchanges:
    """The ASGI exchanges in flight on one app; shutdown disconnects them all."""

    open: weakref.WeakSet[Exchange] = attrs.field(factory=weakref.WeakSet)

    def disconnect_all(self) -> None:
        for exchange in list(self.open):
            exchange.ended.set()


@attrs.define(eq=False)
class Exchange:
    request: web.Request
    limit: int | None = None  # the largest body passed on
    ended: asyncio.Event = attrs.field(factory=asyncio.Event)
    body_done: bool = False
    received: int = 0
    start: Message | None = None
    response: web.StreamResponse | None = None

    async def receive(self) -> Message:
        if not self.body_done:
            chunk = await self.request.content.read(CHUNK)
            self.received += len(chunk)
            if self.limit is not None and self.received > self.limit:
                raise too_large(self.limit)
            self.body_done = self.request.content.at_eof()
            return {"type": "http.request", "body": chunk, "more_body": not self.body_done}
        while not self.ended.is_set() and self._connected():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.ended.wait(), POLL_S)
        self.ended.set()
        return {"type": "http.disconnect"}

    def _connected(self) -> bool:
        transport = self.request.transport
        return transport is not None and not transport.is_closing()

    async def send(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            self.start = message
        elif message["type"] == "http.response.body":
            try:
                await self._body(message.get("body", b""), more=message.get("more_body", False))
            except ConnectionError as exc:  # the client left: ASGI says send raises OSError
                self.ended.set()
                raise OSError(str(exc)) from exc

    async def _body(self, data: bytes, *, more: bool) -> None:
        if self.response is None:
            self.response = self._prepare_response(length=None if more else len(data))
            await self.response.prepare(self.request)
        if data and self.request.method != "HEAD":  # headers as for GET, never a body
            await self.response.write(data)
        if not more:
            await self.response.write_eof()

    def _prepare_response(self, *, length: int | None) -> web.StreamResponse:
        if self.start is None:
            raise RuntimeError("ASGI application sent a body before http.response.start")
        response = web.StreamResponse(status=self.start["status"])
        for raw_name, raw_value in self.start.get("headers", ()):
            name = raw_name.decode("latin-1")
            if name.lower() not in _HOP_BY_HOP:
                response.headers.add(name, raw_value.decode("latin-1"))
        if length is not None:
            response.content_length = length
        # The request id middleware cannot stamp a response that is already streaming: do it here.
        response.headers[REQUEST_ID_HEADER] = self.request.get(REQUEST_ID, "-")
        return response


def scope_of(request: web.Request, *, root_path: str = "") -> Scope:
    peer = request.transport.get_extra_info("peername") if request.transport else None
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": f"{request.version.major}.{request.version.minor}",
        "method": request.method,
        "scheme": request.scheme,
        "path": request.path,
        "raw_path": request.raw_path.split("?", 1)[0].encode("latin-1"),
        "query_string": request.query_string.encode("latin-1"),
        "root_path": root_path,
        "headers": [(name.lower(), value) for name, value in request.raw_headers],
        "client": tuple(peer[:2]) if isinstance(peer, tuple) else None,
        "server": None,
        SCOPE_REQUEST: request,
    }


def too_large(limit: int) -> PayloadTooLarge:
    return PayloadTooLarge(f"request body is larger than the limit of {limit} bytes")


async def serve(
    app: ASGIApp,
    request: web.Request,
    exchanges: Exchanges,
    *,
    root_path: str = "",
    limit: int | None = None,
) -> web.StreamResponse:
    """Run ``app`` for ``request``; its response, streamed as the application sends it.

    The application runs in a task of its own: when aiohttp cancels the handler (a client that
    left, with handler cancellation on), the application is told ``http.disconnect`` and given
    ``WIND_DOWN_S`` to finish, as under an ASGI server, instead of being cancelled mid-way (the
    SDK would read that as a failed request and drop the MCP session it had just opened).
    """
    if limit is not None and (request.content_length or 0) > limit:
        raise too_large(limit)
    exchange = Exchange(request, limit)
    exchanges.open.add(exchange)
    scope = scope_of(request, root_path=root_path)
    task = asyncio.ensure_future(app(scope, exchange.receive, exchange.send))
    try:
        await asyncio.shield(task)
    except asyncio.CancelledError:
        exchange.ended.set()
        await _wind_down(task)
        raise
    except Exception as exc:
        if exchange.response is None:
            raise  # nothing sent yet: the problem middleware answers
        # The response has started; all that is left is to end it. A departed client is routine.
        level = logging.DEBUG if isinstance(exc, OSError) else logging.WARNING
        logger.log(
            level,
            "ASGI application failed mid-response: %r",
            exc,
            exc_info=level >= logging.WARNING,
        )
    finally:
        exchange.ended.set()
        exchanges.open.discard(exchange)
    if exchange.response is None:
        raise RuntimeError("ASGI application finished without a response")
    return exchange.response


async def _wind_down(task: asyncio.Future[None]) -> None:
    await asyncio.wait({task}, timeout=WIND_DOWN_S)
    if not task.done():
        task.cancel()
        await asyncio.wait({task})
    if not task.cancelled() and task.exception() is not None:
        logger.debug("ASGI application ended with %r after the client left", task.exception())
