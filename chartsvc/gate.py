"""The access gate middleware: applies ``chartsvc.access`` to the operation a request matched.

It sits after the problem middleware (so refusals are problems) and before request validation (so an
unauthorised caller learns nothing about the request's shape). It must not decide what is mutating:
that is ``chartsvc.operations``' table.
"""

from __future__ import annotations

from aiohttp import web
from aiohttp.typedefs import Handler, Middleware

from chartsvc.access import API_KEY_HEADER, AccessPolicy
from common.openapi import operation_id


def access_gate(policy: AccessPolicy) -> Middleware:
    @web.middleware
    async def gate(request: web.Request, handler: Handler) -> web.StreamResponse:
        policy.check(operation_id(request), request.headers.get(API_KEY_HEADER))
        return await handler(request)

    return gate
