"""The access gate middleware: applies ``chartsvc.access`` to the operation a request matched.

It sits after the problem middleware (so refusals are problems) and before request validation (so an
unauthorised caller learns nothing about the request's shape). It must not decide what is mutating:
that is the spec's ``x-mutating``, given here as the set of mutating operationIds. The routes of the
other operations it skips with one lookup (:func:`mutating_routes`, decided at start-up).
"""

from __future__ import annotations

from collections.abc import Collection

from aiohttp import web
from aiohttp.typedefs import Handler, Middleware

from chartsvc.access import API_KEY_HEADER, AccessPolicy
from common.openapi import operation_id
from common.presented import one_header
from common.routing import PerRoute


def mutating_routes(mutating: Collection[str]) -> PerRoute[bool]:
    """The routes of the mutating operations (a route's name is its operationId)."""
    return PerRoute(lambda route: route.name in mutating, default=True)


def access_gate(
    policy: AccessPolicy, mutating: Collection[str], scope: PerRoute[bool]
) -> Middleware:
    """Apply ``policy`` to the operations ``mutating`` names; ``scope`` is their routes."""

    @web.middleware
    async def gate(request: web.Request, handler: Handler) -> web.StreamResponse:
        if scope(request) and operation_id(request) in mutating:
            policy.allow_mutation(one_header(request.headers, API_KEY_HEADER))
        return await handler(request)

    return gate
