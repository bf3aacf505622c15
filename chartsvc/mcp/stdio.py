"""``wharf mcp``: the tool server on stdin/stdout, for an agent that launches it locally.

The chart service app is built as ``wharf serve`` builds it and started without a listening socket
(its cleanup contexts open the domain services and the MCP server); then the SDK's stdio transport
serves that same MCP server. No key is presented here: a locally launched server acts for the user
who launched it, so its tools are exactly those the settings enable (mutating ones only in FULL mode
with a key). stdout carries the protocol; logs go to stderr.
"""

from __future__ import annotations

from aiohttp import web
from mcp.server.stdio import stdio_server

from chartsvc.mcp.state import MCP


async def serve_stdio(app: web.Application) -> None:
    """Serve MCP on stdin/stdout until the client closes stdin."""
    runner = web.AppRunner(app, handle_signals=False)
    await runner.setup()
    try:
        server = app[MCP].sessions.server
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())
    finally:
        await runner.cleanup()
