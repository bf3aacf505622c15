"""Routes of the instance group: ``/about`` and the audit trail."""

from __future__ import annotations

from aiohttp import web

from common.openapi import validated
from console import about
from console.audit import AUDIT
from console.auth import current_user
from console.http.encode import withholding
from console.keys import CLUSTERS, SETTINGS

routes = web.RouteTableDef()


@routes.get("/about", name="getAbout")
async def get_about(request: web.Request) -> web.Response:
    registry = request.app[CLUSTERS]
    await about.probe_clusters(registry)
    body = about.describe(
        request.app[SETTINGS],
        registry,
        authenticated=current_user(request) is not None,
        withhold=withholding(request),
    )
    return web.json_response(body)


@routes.get("/audit", name="listAudit")
async def list_audit(request: web.Request) -> web.Response:
    limit = validated(request).query.get("limit")
    entries = request.app[AUDIT].newest_first(limit)
    return web.json_response([e.to_json() for e in entries])
