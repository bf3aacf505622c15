"""Which routes a middleware has work on, decided once per route when the app starts.

A middleware with work on a few routes only (the access gate on the mutating operations, the upload
budget on the routes that read uploads) asks its :class:`RouteScope` first: for a route the app
registered that is out of scope, that is one dict lookup and the request goes straight on. The dict
is made when the app starts, after its router is frozen, so every route added until then (a host's
group, the MCP endpoints) is decided. Any other route (those aiohttp makes per request for its 404
and 405 answers) is in scope: the middleware runs its full per-request check, as if unscoped.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs
from aiohttp import web


@attrs.define
class RouteScope:
    #: Whether the middleware may have work on a request to the route.
    covers: Callable[[web.AbstractRoute], bool]
    _decided: dict[web.AbstractRoute, bool] = attrs.field(factory=dict, init=False)

    def install(self, app: web.Application) -> None:
        """Decide every route of ``app`` when it starts."""
        app.on_startup.append(self._decide)

    async def _decide(self, app: web.Application) -> None:
        self._decided = {route: self.covers(route) for route in app.router.routes()}

    def __call__(self, request: web.Request) -> bool:
        """Whether the middleware checks ``request`` (True for a route not decided)."""
        return self._decided.get(request.match_info.route, True)
