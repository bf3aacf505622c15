"""Object routes: summary rows, namespaces, pods, the streamed projected list, one raw object,
the pods on a node and the detail view with relations.

For cluster-scoped kinds the detail path's namespace segment is ignored (send ``_``).
"""

from __future__ import annotations

from aiohttp import web

from common.openapi import validated
from console.http.clusterapi import Target, json_array, target_kind, target_whole_kind
from console.http.encode.browse import encode_detail
from console.keys import FLIGHTS
from console.resources import listing
from console.resources.catalog import Kind
from console.resources.detail import detail
from console.resources.kubeapi import selector_query

routes = web.RouteTableDef()


@routes.get("/clusters/{clusterId}/resources/{resourceId}", name="listRows")
async def list_rows(request: web.Request) -> web.Response:
    found, kind = await target_kind(request)
    return await _rows(request, found, kind, validated(request).query.get("namespace"))


@routes.get("/clusters/{clusterId}/namespaces", name="listNamespaces")
async def list_namespaces(request: web.Request) -> web.Response:
    found, kind = await target_kind(request, "namespaces")
    return await _rows(request, found, kind, None)


@routes.get("/clusters/{clusterId}/pods", name="listPods")
async def list_pods(request: web.Request) -> web.Response:
    found, kind = await target_kind(request, "pods")
    return await _rows(request, found, kind, validated(request).query.get("namespace"))


async def _rows(
    request: web.Request, found: Target, kind: Kind, namespace: str | None
) -> web.Response:
    """Summary rows; readers asking for the same rows at once share one list (never a stale one)."""
    rows = await request.app[FLIGHTS].run(
        ("rows", found.api.reader, kind.id, namespace),
        lambda: listing.summary_rows(found.api, kind, namespace),
    )
    return web.json_response(rows)


@routes.get("/clusters/{clusterId}/resources/{resourceId}/objects", name="listObjects")
async def list_objects(request: web.Request) -> web.StreamResponse:
    found, kind = await target_kind(request)
    namespace = validated(request).query.get("namespace")
    return await json_array(request, listing.object_chunks(found.api, kind, namespace))


@routes.get("/clusters/{clusterId}/resources/{resourceId}/object", name="getObject")
async def get_object(request: web.Request) -> web.Response:
    found, kind = await target_whole_kind(request)
    query = validated(request).query
    obj = await listing.get_object(found.api, kind, query.get("namespace"), query["name"])
    return web.json_response(obj)


@routes.get("/clusters/{clusterId}/nodes/{node}/pods", name="listNodePods")
async def list_node_pods(request: web.Request) -> web.Response:
    found, kind = await target_kind(request, "pods")
    fields = selector_query(fields=f"spec.nodeName={validated(request).path['node']}")
    return web.json_response(await listing.summary_rows(found.api, kind, None, query=fields))


@routes.get("/clusters/{clusterId}/detail/{resourceId}/{namespace}/{name}", name="getDetail")
async def get_detail(request: web.Request) -> web.Response:
    found, kind = await target_kind(request)
    path = validated(request).path
    catalog = await found.catalogs.get(found.api)
    shown = await detail(found.api, catalog, kind, path["namespace"], path["name"])
    return web.json_response(encode_detail(shown))
