"""What the MCP endpoints share, held under one app key.

``MCP`` lives here rather than in ``chartsvc.keys`` so that the keys module does not pull the
``mcp`` SDK into every import of the service's domain.
"""

from __future__ import annotations

from typing import Any

import attrs
from aiohttp import web
from mcp.server.lowlevel import Server
from mcp.server.sse import SseServerTransport
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

from chartsvc.access import AccessPolicy
from chartsvc.mcp.asgi import Exchanges


@attrs.frozen
class McpState:
    server: Server[Any]
    policy: AccessPolicy
    streamable: StreamableHTTPSessionManager
    sse: SseServerTransport
    exchanges: Exchanges
    request_cap: int  # the largest message posted over HTTP, in bytes


MCP = web.AppKey("chartsvc.mcp", McpState)
