"""The access gate: applies ``chartsvc.access`` to the operation a request matched.

It sits after the problem middleware (so refusals are problems) and before request validation (so an
unauthorised caller learns nothing about the request's shape). It must not decide what is mutating:
that is the spec's ``x-mutating``, given here as the set of mutating operationIds. It is a guard
(``common.routing``): only the routes of those operations run it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Collection

from aiohttp import web
from aiohttp.typedefs import Handler, Middleware

from chartsvc.access import API_KEY_HEADER, AccessPolicy
from common.presented import one_header
from common.routing import Guard


def access_gate(policy: AccessPolicy, mutating: Collection[str]) -> Guard:
    """Apply ``policy`` to the operations ``mutating`` names (a route's name is its operationId)."""

    @web.middleware
    def gate(request: web.Request, handler: Handler) -> Awaitable[web.StreamResponse]:
        policy.allow_mutation(one_header(request.headers, API_KEY_HEADER))
        return handler(request)

    def for_route(route: web.AbstractRoute | None) -> Middleware | None:
        # aiohttp's 404 and 405 routes (None) have no operation, so nothing to gate
        return gate if route is not None and route.name in mutating else None

    return for_route
