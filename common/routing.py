"""Work decided per route of an app, once, when the app starts.

``plans``: the middlewares that only some routes need (who is calling, request validation on the
spec's operations, the access gate on the mutating ones, the upload budget on the routes that read
uploads), made and composed per route. Each guard makes for a route the middleware it needs, with
what only the route decides found already (the operation to validate, the auth rules of a path
without variables), or nothing; a route runs only what was made for it, so one that needs nothing
costs one dict lookup instead of a coroutine per middleware (each a frame, a ``try`` and a lookup
on every request of every route, whether or not it did anything there).

``PerRoute`` keeps the value decided for each route. The dict is made when the app starts, after
its router is frozen, so every route added until then (a host's group, the MCP endpoints) is
decided. Any other route (those aiohttp makes per request for its 404 and 405 answers) gets
``default``: what the guards make for None, the full per-request checks. This module knows no
service.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Sequence
from typing import Generic, TypeVar

import attrs
from aiohttp import web
from aiohttp.typedefs import Handler, Middleware

T = TypeVar("T")

#: A middleware made for one route when the app starts: the middleware the route's requests need,
#: or None when they need none. Given None, the middleware for a request whose route was not
#: decided (aiohttp's own 404 and 405 routes): the full per-request check, or None.
Guard = Callable[[web.AbstractRoute | None], Middleware | None]
#: A route's guards composed: called with the request and the rest of aiohttp's chain.
Chain = Callable[[web.Request, Handler], Awaitable[web.StreamResponse]]


class PerRoute(Generic[T]):
    def __init__(self, decide: Callable[[web.AbstractRoute], T], default: T) -> None:
        self.decide, self.default = decide, default
        #: The value of each route, once the app has started (read it there: it is replaced then).
        self.decided: dict[web.AbstractRoute, T] = {}

    def install(self, app: web.Application) -> None:
        """Decide every route of ``app`` when it starts."""
        app.on_startup.append(self._decide)

    async def _decide(self, app: web.Application) -> None:
        self.decided = {route: self.decide(route) for route in app.router.routes()}

    def __call__(self, request: web.Request) -> T:
        """The value decided for the request's route; ``default`` for a route not decided."""
        return self.decided.get(request.match_info.route, self.default)


@attrs.frozen
class Plan:
    """What the requests of one route need, decided when the app starts: its path template (the
    ``route`` of its requests' metrics; None where it is read per request) and its guards
    composed (None: it needs none)."""

    template: str | None
    chain: Chain | None


def plans(guards: Sequence[Guard]) -> PerRoute[Plan]:
    """Each route's :class:`Plan`: the middlewares ``guards`` make for it, in their order, the
    first outermost. Routes not decided get what the guards make for None."""

    def chain(route: web.AbstractRoute | None) -> Chain | None:
        made = [guard(route) for guard in guards]
        return _composed([middleware for middleware in made if middleware is not None])

    def decide(route: web.AbstractRoute) -> Plan:
        resource = route.resource
        return Plan(resource.canonical if resource is not None else None, chain(route))

    return PerRoute(decide, default=Plan(None, chain(None)))


def _composed(middlewares: Sequence[Middleware]) -> Chain | None:
    """``middlewares`` as one chain, the first outermost; None for none."""
    if not middlewares:
        return None
    first, rest = middlewares[0], _composed(middlewares[1:])
    if rest is None:
        return first

    def chain(request: web.Request, handler: Handler) -> Awaitable[web.StreamResponse]:
        # By keyword, as aiohttp's own chain calls every middleware (a partial: no frame of its own).
        return first(request, functools.partial(rest, handler=handler))  # type: ignore[call-arg]

    return chain
