"""``PerRoute``: a value per route of an app, decided once when the app starts.

A middleware whose work depends only on the route (the access gate on the mutating operations, the
upload budget on the routes that read uploads, the console's auth rules for a path without
variables) asks its :class:`PerRoute` first: for a route the app registered, that is one dict
lookup. The dict is made when the app starts, after its router is frozen, so every route added
until then (a host's group, the MCP endpoints) is decided. Any other route (those aiohttp makes per
request for its 404 and 405 answers) gets ``default``: the middleware's full per-request check.
This module knows no service.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

from aiohttp import web

T = TypeVar("T")


class PerRoute(Generic[T]):
    def __init__(self, decide: Callable[[web.AbstractRoute], T], default: T) -> None:
        self.decide, self.default = decide, default
        self._decided: dict[web.AbstractRoute, T] = {}

    def install(self, app: web.Application) -> None:
        """Decide every route of ``app`` when it starts."""
        app.on_startup.append(self._decide)

    async def _decide(self, app: web.Application) -> None:
        self._decided = {route: self.decide(route) for route in app.router.routes()}

    def __call__(self, request: web.Request) -> T:
        """The value decided for the request's route; ``default`` for a route not decided."""
        return self._decided.get(request.match_info.route, self.default)
