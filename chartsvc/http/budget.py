"""The upload budget (``chartsvc.budget``) as a guard: requests that carry archives reserve their
share before their body is read.

Each metered request reserves its declared length (its cap when it declares none) and releases it
when the response is done. Which requests are metered, under which cap, the app decides
(``cap_of``): multipart uploads, and MCP posts, whose tool calls carry archives in base64. Only
on the routes that read them (``metered``, by route name): a route that never reads an upload holds
no memory for one, so metering it would only keep it waiting (and the other routes do not run
this guard at all, ``common.routing``). This module only meters; it does not read bodies.
"""

from __future__ import annotations

from collections.abc import Callable, Collection

from aiohttp import web
from aiohttp.typedefs import Handler, Middleware

from chartsvc.budget import UploadBudget
from common.routing import Guard


def is_multipart(request: web.Request) -> bool:
    return request.headers.get("Content-Type", "").startswith("multipart/")


def upload_budget(
    budget: UploadBudget, cap_of: Callable[[web.Request], int | None], metered: Collection[str]
) -> Guard:
    """Meter the requests to the routes named in ``metered`` that ``cap_of`` gives a cap: the
    largest body their handlers accept (None: not an upload, not metered)."""

    @web.middleware
    async def meter(request: web.Request, handler: Handler) -> web.StreamResponse:
        cap = cap_of(request)
        if cap is None:
            return await handler(request)
        size = request.content_length or cap
        if size > cap:  # over the cap: refused (413) before any byte is read
            return await handler(request)
        async with budget.reserve(size):
            return await handler(request)

    def for_route(route: web.AbstractRoute | None) -> Middleware | None:
        # aiohttp's 404 and 405 routes (None) read no upload: nothing to hold for them
        return meter if route is not None and route.name in metered else None

    return for_route
