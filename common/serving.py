"""How a Wharf app is served: connection limits aiohttp's ``run_app`` leaves open, and its loop.

A client can hold a connection without ever sending a request, trickle its headers a byte at a
time, or open thousands of connections: each costs a file descriptor, and when they run out even
health checks fail. aiohttp bounds the wait for a request with one timer (``keepalive_timeout``,
from the connection's start and from each response); this adds what it lacks:

- a **header-read timeout**: a connection is closed when a request head is not complete within it,
  counted from the connection's start for its first request and from the first byte of each later
  one (an idle kept-alive connection is bounded by the keep-alive timeout alone);
- a **cap on open connections per client address**: a connection past it is closed the moment it
  is accepted, and counted in ``wharf_connections_refused_total``;
- the process's soft limit of open files raised to its hard limit at start (a default soft limit
  of 1,024 is less than one busy client's connections).

aiohttp has no public hook for accepted connections; its ``Server`` is told of each one
(``connection_made``/``connection_lost``) and makes each connection's protocol, so the runner here
makes a ``Server`` subclass in place of aiohttp's own, whose protocol sees the bytes arrive: a
deadline starts when a head starts and stops when the parser has it whole (a timer only for the
heads that do not arrive in one read: most do). This module must not know any service.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import resource
from collections.abc import Callable
from typing import Any

import attrs
from aiohttp import http_exceptions, web
from aiohttp.web_protocol import RequestHandler

from common.config import option, section
from common.errors import PROBLEM_CONTENT_TYPE, problem_body
from common.metrics import METRICS

logger = logging.getLogger(__name__)


@attrs.frozen
class ServerSettings:
    header_read_timeout_seconds: float = option(
        15.0,
        "Seconds a client has to send a request's line and headers before its connection is "
        "closed: from the connection's start for its first request, from the first byte of each "
        "later one on a kept-alive connection (a client trickling its headers holds a file "
        "descriptor). 0 turns it off. Default 15.",
    )
    keepalive_timeout_seconds: float = option(
        60.0,
        "Seconds an idle kept-alive connection stays open waiting for its next request (also the "
        "longest wait for a request after a response). Default 60.",
    )
    max_connections_per_address: int = option(
        512,
        "Most connections open at once from one client address; one past it is closed as soon as "
        "it is accepted (counted in wharf_connections_refused_total). Behind a reverse proxy every "
        "client has the proxy's address: raise it there. 0: no cap. Default 512.",
    )


def server_section() -> Any:
    """Every service's ``server`` settings section (``<service>.server.*``)."""
    return section(
        ServerSettings, "Connections: header-read and keep-alive timeouts, the per-address cap."
    )


#: What a request the HTTP parser refused was, by the parser's exception, in words for a client
#: (never the bytes sent: they may hold a credential).
_REFUSALS: tuple[tuple[type[Exception], str], ...] = (
    (http_exceptions.LineTooLong, "the request line or a header is longer than the server accepts"),
    (http_exceptions.BadHttpMethod, "the request method is not a valid HTTP method"),
    (http_exceptions.InvalidURLError, "the request target is not a valid URL"),
    (http_exceptions.InvalidHeader, "a request header is not valid"),
    (http_exceptions.HttpProcessingError, "the request is not valid HTTP/1.1"),
)


class ProblemRequestHandler(RequestHandler):
    """aiohttp's connection handler, answering a request its parser refused (a URL over 8,190
    bytes, a header too long or malformed) with a problem, as every other refusal is answered,
    instead of aiohttp's ``text/plain``. The error is logged as aiohttp logs it (one line, by
    ``common.logs.BadRequestFilter``)."""

    def handle_error(
        self,
        request: web.BaseRequest,
        status: int = 500,
        exc: BaseException | None = None,
        message: str | None = None,
    ) -> web.StreamResponse:
        plain = super().handle_error(request, status, exc, message)
        if not 400 <= status < 500:
            return plain
        detail = next((d for kind, d in _REFUSALS if isinstance(exc, kind)), "bad request")
        body = problem_body(status=status, detail=detail, instance="", code="invalid-request")
        response = web.json_response(body, status=status, content_type=PROBLEM_CONTENT_TYPE)
        response.force_close()
        return response

    def __init__(self, manager: GuardedServer, **kwargs: Any) -> None:
        super().__init__(manager, **kwargs)
        self.guarded_by = manager

    def data_received(self, data: bytes) -> None:
        # aiohttp's own test of idleness (``_process_keepalive``): waiting for a request with none
        # queued. Bytes arriving then start a request head, which must be complete in time.
        idle = self._waiter is not None and not self._waiter.done()
        super().data_received(data)
        if self._messages:  # a request head is complete (and waits for the handler): in time
            deadline = self.guarded_by.deadlines.pop(self, None)
            if deadline is not None:
                deadline.cancel()
        elif idle:  # a head started and is not complete yet
            self.guarded_by.head_started(self)


class GuardedServer(web.Server):
    """aiohttp's ``Server`` with the header-read timeout and the per-address cap."""

    def __init__(
        self,
        handler: Any,
        *,
        limits: ServerSettings,
        refused: Callable[[], None],
        **kwargs: Any,
    ) -> None:
        super().__init__(handler, **kwargs)
        self.handler_options = {
            k: v for k, v in kwargs.items() if k not in ("request_factory", "handler_cancellation")
        }
        self.limits = limits
        self.refused = refused
        self.per_address: collections.Counter[str] = collections.Counter()
        self._address: dict[RequestHandler, str] = {}
        #: The connections reading a request head, and when their time is up (a complete head
        #: stops it: ``ProblemRequestHandler.data_received``).
        self.deadlines: dict[RequestHandler, asyncio.TimerHandle] = {}

    def __call__(self) -> RequestHandler:
        return ProblemRequestHandler(self, loop=asyncio.get_running_loop(), **self.handler_options)

    def connection_made(self, handler: RequestHandler, transport: asyncio.Transport) -> None:
        super().connection_made(handler, transport)
        peer = transport.get_extra_info("peername")
        address = str(peer[0]) if isinstance(peer, tuple) else "-"
        self._address[handler] = address
        self.per_address[address] += 1
        cap = self.limits.max_connections_per_address
        if cap and self.per_address[address] > cap:
            self.refused()
            transport.abort()  # nothing read, nothing owed: no reason to wait on a graceful close
            return
        self.head_started(handler)

    def head_started(self, handler: RequestHandler) -> None:
        """Give ``handler``'s connection the header-read timeout to complete the request head it
        is reading (unless a deadline already runs)."""
        timeout = self.limits.header_read_timeout_seconds
        if timeout > 0 and handler not in self.deadlines and handler.transport is not None:
            loop = asyncio.get_running_loop()
            self.deadlines[handler] = loop.call_later(timeout, _too_slow, handler.transport)

    def connection_lost(self, handler: RequestHandler, exc: BaseException | None = None) -> None:
        super().connection_lost(handler, exc)
        deadline = self.deadlines.pop(handler, None)
        if deadline is not None:
            deadline.cancel()
        address = self._address.pop(handler, None)
        if address is not None:
            self.per_address[address] -= 1
            if not self.per_address[address]:
                del self.per_address[address]


def _too_slow(transport: asyncio.Transport) -> None:
    transport.abort()


class GuardedRunner(web.AppRunner):
    """``AppRunner`` serving ``app`` through a :class:`GuardedServer` within ``limits``."""

    def __init__(self, app: web.Application, *, limits: ServerSettings, **kwargs: Any) -> None:
        super().__init__(app, keepalive_timeout=limits.keepalive_timeout_seconds, **kwargs)
        self.limits = limits

    async def _make_server(self) -> web.Server:
        plain = await super()._make_server()  # starts the app and collects the handler's options
        refused = self.app[METRICS].counter(
            "wharf_connections_refused",
            "Connections closed on arrival: their address already had "
            "max-connections-per-address open.",
        )
        return GuardedServer(
            plain.request_handler,
            limits=self.limits,
            refused=refused.inc,
            request_factory=plain.request_factory,
            handler_cancellation=plain.handler_cancellation,
            **plain._kwargs,  # the request handler's options (no public accessor)
        )


def run(
    app: web.Application,
    *,
    host: str,
    port: int,
    limits: ServerSettings,
    announce: Callable[[], None],
    loop: asyncio.AbstractEventLoop,
    **runner_options: Any,
) -> None:
    """Serve ``app`` on ``host:port`` until SIGINT or SIGTERM, as ``web.run_app`` does (the same
    signal handling, shutdown and loop clean-up) but through a :class:`GuardedRunner`."""

    async def serve() -> None:
        runner = GuardedRunner(app, limits=limits, handle_signals=True, **runner_options)
        await runner.setup()
        try:
            await web.TCPSite(runner, host, port).start()
            announce()
            await asyncio.Event().wait()  # until a signal raises GracefulExit here
        finally:
            await runner.cleanup()

    main = loop.create_task(serve())
    try:
        asyncio.set_event_loop(loop)
        loop.run_until_complete(main)
    except (web.GracefulExit, KeyboardInterrupt):
        pass
    finally:
        if not main.done():
            main.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                loop.run_until_complete(main)
        _cancel_all(loop)
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()


def _cancel_all(loop: asyncio.AbstractEventLoop) -> None:
    tasks = asyncio.all_tasks(loop)
    for task in tasks:
        task.cancel()
    loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
    for task in tasks:
        if not task.cancelled() and task.exception() is not None:
            loop.call_exception_handler(
                {"message": "unhandled exception during shutdown", "exception": task.exception()}
            )


def raise_open_files_limit() -> tuple[int, int]:
    """The soft limit of open files raised to the hard one; returns (before, after)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = hard if hard != resource.RLIM_INFINITY else max(soft, 1 << 20)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    return soft, resource.getrlimit(resource.RLIMIT_NOFILE)[0]
