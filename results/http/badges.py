"""``GET /badges/coverage.svg`` and ``/badges/gate.svg``: a project's branch as an SVG badge.

A PUBLIC project's badge may be cached for a minute (README images go through shared caches);
anything else is private and never stored. This module must not decide what a badge says.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from aiohttp import web

from common.openapi import validated
from results import badges, fields, keys
from results.auth import can_read
from results.runs import CanRead
from results.runstore import Store
from results.settings import GateSettings
from results.svg import badge

routes = web.RouteTableDef()
PUBLIC_MAX_AGE_S = 60
Maker = Callable[..., Awaitable[badges.Badge]]


@routes.get("/badges/coverage.svg", name="getCoverageBadge")
async def get_coverage_badge(request: web.Request) -> web.Response:
    return await _respond(request, badges.coverage_badge)


@routes.get("/badges/patch-coverage.svg", name="getPatchCoverageBadge")
async def get_patch_coverage_badge(request: web.Request) -> web.Response:
    return await _respond(request, badges.patch_coverage_badge)


@routes.get("/badges/gate.svg", name="getGateBadge")
async def get_gate_badge(request: web.Request) -> web.Response:
    return await _respond(request, badges.gate_badge)


async def _respond(request: web.Request, make: Maker) -> web.Response:
    values = fields.read_query(validated(request).query)
    query = badges.BadgeQuery(values["project"], values.get("branch"), values["flag"])
    store: Store = request.app[keys.STORE]
    settings: GateSettings = request.app[keys.SETTINGS].gate
    reader: CanRead = can_read(request)
    made = await make(store, settings, query, can_read=reader)
    cache = f"public, max-age={PUBLIC_MAX_AGE_S}" if made.public else "private, no-store"
    return web.Response(
        text=badge(made.label, made.message, made.color),
        content_type="image/svg+xml",
        headers={
            "Cache-Control": cache,
            "X-Content-Type-Options": "nosniff",
            # Opened on its own, an SVG is a document: it may not run or load anything.
            "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'",
        },
    )
