"""What the MCP endpoints share, held under one app key, and the SDK loaded off the event loop.

Importing the ``mcp`` SDK takes longer than starting the rest of the service, and most imports of
the service (every CLI command, every test that builds the app) never serve an MCP request. So the
SDK's side (``chartsvc.mcp.sessions``) is not imported with the service: a served app begins
importing it in a worker thread as it starts (the service is ready without waiting for it), and
``wharf mcp`` before it reads stdin; an MCP request that comes first waits for that one import. The
session manager then runs until the app closes. ``MCP`` lives here rather than in
``chartsvc.keys`` so that the keys module does not pull MCP into every import of the service's
domain; this module must not import the SDK.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING

import attrs
from aiohttp import web

from chartsvc.access import AccessPolicy
from chartsvc.calls import Services
from chartsvc.mcp.asgi import Exchanges
from chartsvc.operations import Operation
from common.openapi import Spec

if TYPE_CHECKING:
    from chartsvc.mcp.sessions import Sessions

#: The module holding the SDK's side, imported off the event loop (see the module docstring).
SESSIONS_MODULE = "chartsvc.mcp.sessions"


@attrs.frozen
class ServerPlan:
    """What the tool server is built from when it opens: plain data, made at start-up."""

    spec: Spec
    operations: Mapping[str, Operation]
    implemented: Collection[str]
    policy: AccessPolicy
    services: Services
    base_path: str
    version: str
    upload_cap: int  # chartsvc.rest.max-upload-size
    request_cap: int  # the largest message taken over HTTP (the SDK's own 4 MiB must not win)
    messages_path: str  # where the legacy SSE transport tells clients to post


@attrs.define(eq=False)
class McpState:
    plan: ServerPlan
    exchanges: Exchanges = attrs.field(factory=Exchanges)
    _opening: asyncio.Task[Sessions] | None = attrs.field(default=None, init=False)
    _open: contextlib.AsyncExitStack = attrs.field(factory=contextlib.AsyncExitStack, init=False)

    def open_soon(self) -> asyncio.Task[Sessions]:
        """Begin opening the SDK's server and transports in the background (once): the served
        app does this as it starts, so the first MCP request finds them open."""
        if self._opening is None:
            self._opening = asyncio.create_task(self._load(), name="chartsvc-mcp-open")
            # retrieved here too: an opening no request awaited must not log "never retrieved"
            self._opening.add_done_callback(lambda done: done.cancelled() or done.exception())
        return self._opening

    @property
    def opening(self) -> asyncio.Task[Sessions] | None:
        """The opening begun (or done), if it has begun."""
        return self._opening

    async def sessions(self) -> Sessions:
        """The SDK's server and transports, opened once; a caller before they are open waits for
        them. A caller that leaves meanwhile (its client gone) does not stop the opening."""
        return await asyncio.shield(self.open_soon())

    async def _load(self) -> Sessions:
        await asyncio.to_thread(importlib.import_module, SESSIONS_MODULE)
        from chartsvc.mcp import sessions  # imported just above, off the loop

        return await self._open.enter_async_context(sessions.running(self.plan))

    async def close(self) -> None:
        """Stop the session manager, if it was opened (an opening under way finishes first)."""
        if self._opening is not None:
            await asyncio.wait({self._opening})
        await self._open.aclose()


MCP = web.AppKey("chartsvc.mcp", McpState)
