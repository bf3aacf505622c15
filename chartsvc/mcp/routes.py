"""The MCP endpoints on the chart service's aiohttp server: ``/mcp`` and the legacy ``/sse``.

``/mcp`` is the SDK's streamable-HTTP session manager, ``/sse`` with ``/messages/`` its legacy SSE
transport, both run through ``chartsvc.mcp.asgi``. They sit outside the base path and the REST spec
(extra routes). When an API key is configured every request to them must carry it in ``X-API-Key``
(401 otherwise), whatever the mode: the key is what stands between the network and the tools.
A message posted to them may be as large as a tool call carrying the largest upload in base64
(:func:`request_cap`); larger is refused with 413 before the SDK reads it, and the app's upload
budget meters these posts as it meters multipart uploads (:func:`carries_calls`).

``mcp_context`` (after the domain services) opens the server, its tools and the session manager
as the app starts, the SDK imported then, off the event loop (``chartsvc.mcp.state``), and closes
them after its ``yield``. Shutdown disconnects every open MCP exchange first, so event streams end
instead of holding the server
until its shutdown timeout. This module must not import the SDK.
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import AsyncIterator

from aiohttp import web

from chartsvc.access import API_KEY_HEADER, AccessPolicy
from chartsvc.calls import CALLS
from chartsvc.keys import OPERATIONS, SERVICES, SETTINGS
from chartsvc.mcp import asgi
from chartsvc.mcp.schemas import base64_length
from chartsvc.mcp.state import MCP, SESSIONS_MODULE, McpState, ServerPlan
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
        state.sessions.streamable.handle_request,
        request,
        state.exchanges,
        limit=state.plan.request_cap,
    )


@routes.get(SSE_PATH)
async def legacy_sse(request: web.Request) -> web.StreamResponse:
    state = _authorised(request)
    server = state.sessions.server

    async def connect(scope: asgi.Scope, receive: asgi.Receive, send: asgi.Send) -> None:
        async with state.sessions.sse.connect_sse(scope, receive, send) as (read, write):
            await server.run(read, write, server.create_initialization_options())

    # Under a host's prefix (a sub-application) the message endpoint the client is sent is too.
    prefix = request.path.removesuffix(SSE_PATH)
    return await asgi.serve(connect, request, state.exchanges, root_path=prefix)


@routes.post(MESSAGES_PATH, name="mcp-messages")
async def legacy_messages(request: web.Request) -> web.StreamResponse:
    state = _authorised(request)
    return await asgi.serve(
        state.sessions.sse.handle_post_message,
        request,
        state.exchanges,
        limit=state.plan.request_cap,
    )


def _authorised(request: web.Request) -> McpState:
    state = request.app[MCP]
    if state.plan.policy.key_configured:
        state.plan.policy.require_key(one_header(request.headers, API_KEY_HEADER))
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
    plan = ServerPlan(
        spec=app[SPEC],
        operations=app[OPERATIONS],
        implemented=CALLS,
        policy=AccessPolicy.from_settings(svc.security),
        services=app[SERVICES],
        base_path=app[SERVICE].base_path,
        version=wharf_version(),
        upload_cap=svc.rest.max_upload_size,
        request_cap=request_cap(svc.rest),
        messages_path=MESSAGES_PATH,
    )
    # Opened with the app, the SDK imported in a worker thread meanwhile (the loop goes on): the
    # first MCP request finds it open, and what it made is start-up heap (frozen with the rest by
    # ``wharf serve``), not load that lands on the first seconds of serving.
    await asyncio.to_thread(importlib.import_module, SESSIONS_MODULE)
    from chartsvc.mcp import sessions  # imported just above, off the loop

    async with sessions.running(plan) as opened:
        app[MCP] = McpState(plan, opened)
        yield
