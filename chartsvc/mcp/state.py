"""What the MCP endpoints share, held under one app key, and the SDK loaded off the event loop.

Importing the ``mcp`` SDK takes longer than starting the rest of the service, and most imports of
the service (every CLI command, every test that builds the app) never serve an MCP request. So the
SDK's side (``chartsvc.mcp.sessions``) is not imported with the service: a served app opens it as
it starts (``chartsvc.mcp.routes.mcp_context``), and ``wharf mcp`` before it reads stdin, importing
it in a worker thread so that the event loop goes on meanwhile; callers that come during the
opening wait for that one. The session manager then runs until the app closes. ``MCP`` lives here
rather than in ``chartsvc.keys`` so that the keys module does not pull MCP into every import of
the service's domain; this module must not import the SDK.
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

    @property
    def opened(self) -> bool:
        """Whether the SDK's server and transports are open (or failed to open)."""
        return self._opening is not None and self._opening.done()

    async def sessions(self) -> Sessions:
        """The SDK's server and transports, opened by the first caller; the others wait for it.
        A caller that leaves meanwhile (its client gone) does not stop the opening."""
        if self._opening is None:
            self._opening = asyncio.create_task(self._load(), name="chartsvc-mcp-open")
        return await asyncio.shield(self._opening)

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
