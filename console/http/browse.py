"""Browse routes: nav, counts, printer columns, search, diagnostics, overview, events and schema.

Each handler reads the validated request, calls one domain function and encodes its answer; cluster
refusals arrive as ``cluster-refused`` problems from the domain layer.
"""

from __future__ import annotations

from aiohttp import web

from common.openapi import validated
from console.http.clusterapi import target, target_catalog, target_kind
from console.http.encode.browse import (
    encode_counts,
    encode_diagnostics,
    encode_event,
    encode_nav,
    encode_overview,
    encode_search,
)
from console.keys import ACCESS_REVIEWS, FLIGHTS
from console.resources import columns, counts, diagnostics, events, nav, overview, schema, search

routes = web.RouteTableDef()


@routes.get("/clusters/{clusterId}/nav", name="getNav")
async def get_nav(request: web.Request) -> web.Response:
    found = await target(request)
    catalog = await found.catalogs.fresh(found.api)  # shows new CRDs at once
    return web.json_response(encode_nav(nav.build(catalog)))


@routes.get("/clusters/{clusterId}/counts", name="getCounts")
async def get_counts(request: web.Request) -> web.Response:
    found, catalog = await target_catalog(request)
    namespace = validated(request).query.get("namespace")
    result = await request.app[FLIGHTS].run(
        ("counts", found.api.reader, namespace),
        lambda: counts.count_all(
            found.api, catalog, namespace, reviews=request.app[ACCESS_REVIEWS]
        ),
    )
    return web.json_response(encode_counts(result))


@routes.get("/clusters/{clusterId}/resources/{resourceId}/columns", name="getColumns")
async def get_columns(request: web.Request) -> web.Response:
    found, kind = await target_kind(request)
    return web.json_response(await columns.printer_columns(found.api, kind))


@routes.get("/clusters/{clusterId}/search", name="searchObjects")
async def search_objects(request: web.Request) -> web.Response:
    found, catalog = await target_catalog(request)
    query = validated(request).query
    result = await search.search(
        found.api,
        catalog,
        query["q"],
        namespace=query.get("namespace"),
        limit=query["limit"],
        reviews=request.app[ACCESS_REVIEWS],
    )
    return web.json_response(encode_search(result))


@routes.get("/clusters/{clusterId}/diagnostics", name="getDiagnostics")
async def get_diagnostics(request: web.Request) -> web.Response:
    found = await target(request)
    return web.json_response(
        encode_diagnostics(await diagnostics.diagnose(found.api, found.catalogs))
    )


@routes.get("/clusters/{clusterId}/overview/{category}", name="getOverview")
async def get_overview(request: web.Request) -> web.Response:
    found, catalog = await target_catalog(request)
    given = validated(request)
    health = await overview.overview(
        found.api, catalog, given.path["category"], given.query.get("namespace")
    )
    return web.json_response(encode_overview(health))


@routes.get("/clusters/{clusterId}/events", name="listEvents")
async def list_events(request: web.Request) -> web.Response:
    found, catalog = await target_catalog(request)
    query = validated(request).query
    newest = await events.list_events(
        found.api,
        catalog,
        namespace=query.get("namespace"),
        kind=query.get("kind"),
        name=query.get("name"),
        limit=query["limit"],
    )
    return web.json_response([encode_event(e) for e in newest])


@routes.get("/clusters/{clusterId}/schema", name="getSchema")
async def get_schema(request: web.Request) -> web.Response:
    found, kind = await target_kind(request, validated(request).query["resource"])
    return web.json_response(await schema.schema_for(found.api, kind))
