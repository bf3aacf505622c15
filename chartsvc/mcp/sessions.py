"""The MCP SDK's side of the endpoints: the tool server, its session manager and SSE transport.

This is the one module of the endpoints that imports the ``mcp`` SDK's server (with ``tools`` and
``server`` under it), and nothing imports it at start-up: the SDK costs more to import than the
rest of the service, so ``chartsvc.mcp.routes.mcp_context`` imports this module in a worker
thread as the app starts (served, or under ``wharf mcp``), and opens :func:`running` once.
The session manager's task group runs in a task of its own, so its cancel scopes are entered and
left in one task.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import attrs
from mcp.server.lowlevel import Server
from mcp.server.sse import SseServerTransport
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from sse_starlette import sse as sse_starlette

from chartsvc.mcp.server import build_server
from chartsvc.mcp.state import ServerPlan
from chartsvc.mcp.tools import build_tools


@attrs.frozen
class Sessions:
    """The SDK's objects the endpoints hand requests to."""

    server: Server[Any]
    streamable: StreamableHTTPSessionManager
    sse: SseServerTransport


@contextlib.asynccontextmanager
async def running(plan: ServerPlan) -> AsyncIterator[Sessions]:
    """The tool server, its streamable-HTTP session manager running, and the SSE transport."""
    tools = build_tools(
        plan.spec, plan.operations, plan.policy, plan.implemented, upload_cap=plan.upload_cap
    )
    server = build_server(tools, plan.services, base_path=plan.base_path, version=plan.version)
    streamable = StreamableHTTPSessionManager(app=server, max_request_body_size=plan.request_cap)
    _without_shutdown_poller()
    sse = SseServerTransport(plan.messages_path, max_request_body_size=plan.request_cap)
    async with _running(streamable):
        yield Sessions(server=server, streamable=streamable, sse=sse)


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
    ``chartsvc.mcp.routes`` ends the streams on aiohttp's shutdown. Marking the poller as started
    (its state is per thread) keeps that orphan task from existing.
    """
    sse_starlette._get_shutdown_state().watcher_started = True
