"""The access gate middleware: applies ``chartsvc.access`` to the operation a request matched.

It sits after the problem middleware (so refusals are problems) and before request validation (so an
unauthorised caller learns nothing about the request's shape). It must not decide what is mutating:
that is the spec's ``x-mutating``, given here as the set of mutating operationIds.
"""

from __future__ import annotations

from collections.abc import Collection

from aiohttp import web
from aiohttp.typedefs import Handler, Middleware

from chartsvc.access import API_KEY_HEADER, AccessPolicy
from common.openapi import operation_id


def access_gate(policy: AccessPolicy, mutating: Collection[str]) -> Middleware:
    @web.middleware
    async def gate(request: web.Request, handler: Handler) -> web.StreamResponse:
        if operation_id(request) in mutating:
            policy.allow_mutation(request.headers.get(API_KEY_HEADER))
        return await handler(request)

    return gate
