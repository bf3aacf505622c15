"""What the MCP endpoints share, held under one app key.

Importing the ``mcp`` SDK takes longer than starting the rest of the service, and most imports of
the service (every CLI command, every test that builds the app) never serve an MCP request. So the
SDK's side (``chartsvc.mcp.sessions``) is not imported with the service: the app opens it as it
starts (``chartsvc.mcp.routes.mcp_context``, served or under ``wharf mcp``), importing it in a
worker thread so that the event loop goes on meanwhile, and it runs until the app closes. ``MCP``
lives here rather than in ``chartsvc.keys`` so that the keys module does not pull MCP into every
import of the service's domain; this module must not import the SDK.
"""

from __future__ import annotations

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


@attrs.frozen
class McpState:
    plan: ServerPlan
    #: The SDK's server and transports, open since the app started.
    sessions: Sessions
    exchanges: Exchanges = attrs.field(factory=Exchanges)


MCP = web.AppKey("chartsvc.mcp", McpState)
