"""An app served the way ``wharf serve`` serves it, for tests where that differs from the test
server's. aiohttp's ``TestServer`` cancels a handler when its client disconnects
(``handler_cancellation=True``); ``web.run_app`` does not, so a test of what a server notices about
departed clients must run on a plain ``AppRunner`` like this one.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from aiohttp import web


@contextlib.asynccontextmanager
async def served(app: web.Application) -> AsyncIterator[str]:
    """``app`` on a free loopback port, as ``web.run_app`` runs it; yields its base URL."""
    runner = web.AppRunner(app)  # handler_cancellation=False, the default run_app uses
    await runner.setup()
    try:
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        host, port = runner.addresses[0][:2]
        yield f"http://{host}:{port}"
    finally:
        await runner.cleanup()
