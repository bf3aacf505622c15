"""Routes of the instance group: ``/about`` and the audit trail."""

from __future__ import annotations

from aiohttp import web

from common.openapi import validated
from console import about
from console.audit import AUDIT
from console.auth import current_user
from console.http.encode.clusters import withholding
from console.http.encode.instance import encode_about, encode_audit_entry
from console.keys import CLUSTERS, SETTINGS

routes = web.RouteTableDef()


@routes.get("/about", name="getAbout")
async def get_about(request: web.Request) -> web.Response:
    registry = request.app[CLUSTERS]
    await about.probe_clusters(registry)
    body = encode_about(
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
    return web.json_response([encode_audit_entry(e) for e in entries])
