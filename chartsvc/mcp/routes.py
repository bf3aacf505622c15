"""The MCP endpoints on the chart service's aiohttp server: ``/mcp`` and the legacy ``/sse``.

``/mcp`` is the SDK's streamable-HTTP session manager, ``/sse`` with ``/messages/`` its legacy SSE
transport, both run through ``chartsvc.mcp.asgi``. They sit outside the base path and the REST spec
(extra routes). When an API key is configured every request to them must carry it in ``X-API-Key``
(401 otherwise), whatever the mode: the key is what stands between the network and the tools.
A message posted to them may be as large as a tool call carrying the largest upload in base64
(:func:`request_cap`); larger is refused with 413 before the SDK reads it, and the app's upload
budget meters these posts as it meters multipart uploads (:func:`carries_calls`).

The server, its tools and the session manager open in ``mcp_context`` (after the domain services)
and close after its ``yield``; the session manager's task group runs in a task of its own, so its
cancel scopes are entered and left in one task. Shutdown disconnects every open MCP exchange first,
so event streams end instead of holding the server until its shutdown timeout.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from aiohttp import web
from mcp.server.sse import SseServerTransport
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from sse_starlette import sse as sse_starlette

from chartsvc.access import API_KEY_HEADER, AccessPolicy
from chartsvc.calls import CALLS
from chartsvc.keys import OPERATIONS, SERVICES, SETTINGS
from chartsvc.mcp import asgi
from chartsvc.mcp.schemas import base64_length
from chartsvc.mcp.server import build_server
from chartsvc.mcp.state import MCP, McpState
from chartsvc.mcp.tools import build_tools
from chartsvc.settings import RestSettings
from common.app import SERVICE, wharf_version
from common.openapi import SPEC
from common.presented import one_header

MCP_PATH = "/mcp"
SSE_PATH = "/sse"
MESSAGES_PATH = "/messages/"
CALL_ROUTES = ("mcp", "mcp-messages")  # the routes whose POSTs carry tool calls

routes = web.RouteTableDef()


def request_cap(rest: RestSettings) -> int:
    """The largest MCP message taken over HTTP: the largest upload (``max-upload-size``) in base64,
    plus as much again as a REST JSON body may be (``max-json-size``) for the other arguments."""
    return base64_length(rest.max_upload_size) + rest.max_json_size


def carries_calls(request: web.Request) -> bool:
    """Whether ``request`` posts MCP messages (tool calls, with their archives) to the server."""
    return request.method == "POST" and request.match_info.route.name in CALL_ROUTES


@routes.route("*", MCP_PATH, name="mcp")
async def streamable_http(request: web.Request) -> web.StreamResponse:
    state = _authorised(request)
    return await asgi.serve(
        state.streamable.handle_request, request, state.exchanges, limit=state.request_cap
    )


@routes.get(SSE_PATH)
async def legacy_sse(request: web.Request) -> web.StreamResponse:
    state = _authorised(request)

    async def connect(scope: asgi.Scope, receive: asgi.Receive, send: asgi.Send) -> None:
        async with state.sse.connect_sse(scope, receive, send) as (read, write):
            await state.server.run(read, write, state.server.create_initialization_options())

    # Under a host's prefix (a sub-application) the message endpoint the client is sent is too.
    prefix = request.path.removesuffix(SSE_PATH)
    return await asgi.serve(connect, request, state.exchanges, root_path=prefix)


@routes.post(MESSAGES_PATH, name="mcp-messages")
async def legacy_messages(request: web.Request) -> web.StreamResponse:
    state = _authorised(request)
    return await asgi.serve(
        state.sse.handle_post_message, request, state.exchanges, limit=state.request_cap
    )


def _authorised(request: web.Request) -> McpState:
    state = request.app[MCP]
    if state.policy.key_configured:
        state.policy.require_key(one_header(request.headers, API_KEY_HEADER))
    return state


def install(app: web.Application) -> None:
    """Open the MCP server with the app (after the domain services) and end its streams first."""
    app.cleanup_ctx.append(mcp_context)
    app.on_shutdown.append(_disconnect)


async def _disconnect(app: web.Application) -> None:
    state = app.get(MCP)
    if state is not None:
        state.exchanges.disconnect_all()


async def mcp_context(app: web.Application) -> AsyncIterator[None]:
    svc = app[SETTINGS]
    policy = AccessPolicy.from_settings(svc.security)
    server = build_server(
        build_tools(app[SPEC], app[OPERATIONS], policy, CALLS, upload_cap=svc.rest.max_upload_size),
        app[SERVICES],
        base_path=app[SERVICE].base_path,
        version=wharf_version(),
    )
    cap = request_cap(svc.rest)  # the SDK's own check (default 4 MiB) must not come first
    streamable = StreamableHTTPSessionManager(app=server, max_request_body_size=cap)
    _without_shutdown_poller()
    app[MCP] = McpState(
        server=server,
        policy=policy,
        streamable=streamable,
        sse=SseServerTransport(MESSAGES_PATH, max_request_body_size=cap),
        exchanges=asgi.Exchanges(),
        request_cap=cap,
    )
    async with _running(streamable):
        yield


@contextlib.asynccontextmanager
async def _running(manager: StreamableHTTPSessionManager) -> AsyncIterator[None]:
    started, stop = asyncio.Event(), asyncio.Event()

    async def run() -> None:
        async with manager.run():
            started.set()
            await stop.wait()

    task = asyncio.create_task(run(), name="chartsvc-mcp-sessions")
    waiter = asyncio.create_task(started.wait())
    await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
    waiter.cancel()
    if task.done():
        task.result()  # it failed to start: raise why
    try:
        yield
    finally:
        stop.set()
        await task


def _without_shutdown_poller() -> None:
    """Keep sse_starlette from starting its shutdown poller.

    sse_starlette (under the SDK's transports) ends its streams on a uvicorn shutdown, which it
    detects from a task that polls every 0.5 s and that nothing ever ends. There is no uvicorn here:
    ``_disconnect`` ends the streams on aiohttp's shutdown. Marking the poller as started (its state
    is per thread) keeps that orphan task from existing.
    """
    sse_starlette._get_shutdown_state().watcher_started = True
